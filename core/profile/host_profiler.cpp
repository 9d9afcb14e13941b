#include "core/profile/host_profiler.hpp"

#include <algorithm>
#include <map>

#include "core/base/error.hpp"
#include "core/profile/elf_symbols.hpp"
#include "core/profile/kernel_symbols.hpp"
#include "core/profile/profile_access.hpp"
#include "core/profile/profile_aggregate.hpp"

namespace nm::profile {
namespace {

uint64_t monotonic_ns(std::chrono::steady_clock::time_point t) {
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock the sampler's events stamp samples with.
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// Names user-space addresses: the mapping of the sample's process, then the function in that file.
class UserSymbols {
public:
    explicit UserSymbols(TaskTable& tasks) : tasks_(tasks) {}

    std::string name(int32_t pid, uint64_t ip) {
        const Mapping* m = tasks_.mapping(pid, ip);
        if (m == nullptr && !tasks_.knows_maps(pid) && !tried_.count(pid)) {
            // Started after the snapshot and before the window (no mmap record came): ask /proc now.
            tried_.insert(pid);
            if (auto maps = read_process_maps(pid); !maps.empty()) tasks_.set_maps(pid, std::move(maps));
            m = tasks_.mapping(pid, ip);
        }
        if (m == nullptr) return "[unknown]";
        const ElfSymbols& elf = file(m->path, pid);
        const auto addr = elf.address_of_offset(ip - m->start + m->pgoff);
        const ElfSymbols::Symbol* sym = addr ? elf.find(*addr) : nullptr;
        if (sym == nullptr) return "[unknown]";
        auto it = demangled_.find(sym);
        if (it == demangled_.end()) it = demangled_.emplace(sym, demangle(sym->name)).first;
        return it->second;
    }

private:
    const ElfSymbols& file(const std::string& path, int32_t pid) {
        auto it = files_.find(path);
        if (it != files_.end()) return it->second;
        ElfSymbols elf = read_elf_symbols(path);
        // A process in another mount namespace (a container) sees its files under its own root.
        if (elf.size() == 0) elf = read_elf_symbols("/proc/" + std::to_string(pid) + "/root" + path);
        return files_.emplace(path, std::move(elf)).first->second;
    }

    TaskTable& tasks_;
    std::map<std::string, ElfSymbols> files_;
    std::map<const ElfSymbols::Symbol*, std::string> demangled_;
    std::set<int32_t> tried_;
};

}  // namespace

void check_profile_hz(uint32_t hz) {
    if (hz < kMinProfileHz || hz > kMaxProfileHz) {
        throw usage_error("--profile-hz: " + std::to_string(hz) + " samples/s per CPU; must be " + std::to_string(kMinProfileHz) + ".." +
                          std::to_string(kMaxProfileHz));
    }
}

namespace {
uint32_t checked(uint32_t hz) {
    check_profile_hz(hz);
    check_profile_access(read_profile_access());
    return hz;
}
}  // namespace

HostProfiler::HostProfiler(uint32_t hz) : sampler_(checked(hz)), tasks_(snapshot_tasks()) {}

void HostProfiler::start(std::chrono::steady_clock::time_point at) {
    if (start_) return;
    start_ = monotonic_ns(at);
    sampler_.enable();
}

void HostProfiler::stop(std::chrono::steady_clock::time_point at) {
    if (!start_ || stop_) return;
    sampler_.disable();
    stop_ = monotonic_ns(at);
}

CpuProfile HostProfiler::profile(const CategoryTable& table, const std::set<int32_t>& send, const std::set<int32_t>& recv, const std::string& host) {
    sampler_.disable();
    if (start_ && !stop_) stop_ = monotonic_ns(std::chrono::steady_clock::now());
    RecordBatch batch = sampler_.take();
    const uint64_t from = start_.value_or(0), to = stop_.value_or(0);
    std::vector<Sample> samples;
    for (const auto& s : batch.samples) {
        if (s.time_ns >= from && s.time_ns < to) samples.push_back(s);
    }
    std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
    std::stable_sort(batch.tasks.begin(), batch.tasks.end(), [](const TaskEvent& a, const TaskEvent& b) { return a.time_ns < b.time_ns; });

    const KernelSymbols kernel = read_kernel_symbols();
    UserSymbols user(tasks_);
    std::vector<NamedSample> named;
    named.reserve(samples.size());
    size_t next_event = 0;
    for (const auto& s : samples) {
        // The side-band records up to this sample tell which file its address belongs to.
        while (next_event < batch.tasks.size() && batch.tasks[next_event].time_ns <= s.time_ns) tasks_.apply(batch.tasks[next_event++]);
        NamedSample n{s.cpu, s.pid, s.tid, s.user, {}};
        if (s.user) {
            n.symbol = user.name(s.pid, s.ip);
        } else {
            const auto* k = kernel.find(s.ip);
            n.symbol = k != nullptr ? std::string(k->name) : "[unknown]";
        }
        named.push_back(std::move(n));
    }
    for (; next_event < batch.tasks.size(); ++next_event) tasks_.apply(batch.tasks[next_event]);

    TaskClasses classes{send, recv, [this](int32_t pid, int32_t tid) {
                            if (const auto* c = tasks_.comm(tid)) return *c;
                            if (auto c = read_comm(tid); !c.empty()) return c;
                            if (const auto* c = tasks_.comm(pid)) return *c;
                            return std::string("?");
                        }};
    WindowFacts facts{host, sampler_.hz(), sampler_.cpus(), static_cast<double>(from) / 1e9, static_cast<double>(to) / 1e9, batch.lost};
    return aggregate_profile(named, table, classes, facts);
}

}  // namespace nm::profile
