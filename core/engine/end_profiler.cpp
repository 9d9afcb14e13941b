#include "core/engine/end_profiler.hpp"

#include <unistd.h>

#include <fstream>
#include <set>

#include "core/profile/categories.hpp"

namespace nm {

EndProfiler::EndProfiler(uint32_t hz, CategoryTable table) : profiler_(hz), table_(std::move(table)) {}

std::optional<CpuProfile> EndProfiler::finish(const std::vector<int32_t>& send, const std::vector<int32_t>& recv) {
    if (!profiler_.started()) return std::nullopt;
    return profiler_.profile(table_, std::set<int32_t>(send.begin(), send.end()), std::set<int32_t>(recv.begin(), recv.end()), host_name());
}

void check_profiling(const TestSpec& spec) {
    if (!spec.profile) return;
    profile::check_profile_hz(spec.profile_hz);
    profile::load_category_table(spec.profile_categories);
    // Arming a profiler checks the permissions and opens (then closes) the events.
    profile::HostProfiler probe(spec.profile_hz);
}

std::string host_boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

}  // namespace nm
