#include "core/host/cpu_affinity.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr uint32_t kMaxCpu = 8191;  // CONFIG_NR_CPUS tops out at 8192

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

uint32_t cpu_number(std::string_view s, const std::string& what, std::string_view whole) {
    uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size() || v > kMaxCpu) {
        throw usage_error(what + ": \"" + std::string(whole) + "\": \"" + std::string(s) + "\" is not a CPU number (0.." + std::to_string(kMaxCpu) +
                          ")");
    }
    return v;
}

// One list whose items are separated by `sep`: "N" or "N-M".
std::vector<uint32_t> parse_list(std::string_view text, char sep, const std::string& what) {
    std::vector<uint32_t> out;
    const std::string_view whole = text;
    text = trim(text);
    if (text.empty()) return out;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find(sep, pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = trim(text.substr(pos, end - pos));
        const size_t dash = item.find('-');
        const uint32_t first = cpu_number(item.substr(0, dash), what, whole);
        const uint32_t last = dash == std::string_view::npos ? first : cpu_number(item.substr(dash + 1), what, whole);
        if (last < first) throw usage_error(what + ": \"" + std::string(whole) + "\": range " + std::string(item) + " goes down");
        for (uint32_t c = first; c <= last; ++c) out.push_back(c);
        pos = end + 1;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

std::vector<uint32_t> parse_cpu_list(std::string_view text, const std::string& what) { return parse_list(text, ',', what); }

std::string format_cpu_list(const std::vector<uint32_t>& cpus) {
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) {
            out += '-';
            out += std::to_string(cpus[j]);
        }
        i = j + 1;
    }
    return out;
}

std::pair<std::vector<uint32_t>, std::vector<uint32_t>> parse_affinity_option(std::string_view text) {
    const std::string what = "-A/--affinity";
    if (trim(text).empty()) throw usage_error(what + ": empty; give CLIENT_CPUS[,SERVER_CPUS], e.g. -A 0,1");
    const size_t comma = text.find(',');
    if (comma != std::string_view::npos && text.find(',', comma + 1) != std::string_view::npos) {
        throw usage_error(what + ": \"" + std::string(text) + "\": at most one ',' (client CPUs, then server CPUs; join CPUs of one side with '+')");
    }
    auto client = parse_list(text.substr(0, comma), '+', what);
    auto server = comma == std::string_view::npos ? std::vector<uint32_t>{} : parse_list(text.substr(comma + 1), '+', what);
    if (client.empty() && server.empty()) throw usage_error(what + ": \"" + std::string(text) + "\" names no CPU");
    return {std::move(client), std::move(server)};
}

std::vector<uint32_t> online_cpus() {
    std::ifstream in("/sys/devices/system/cpu/online");
    std::string text;
    if (in && std::getline(in, text)) {
        try {
            auto cpus = parse_cpu_list(text, "/sys/devices/system/cpu/online");
            if (!cpus.empty()) return cpus;
        } catch (const Error&) {  // NOLINT(bugprone-empty-catch): fall back to the affinity mask
        }
    }
    std::vector<uint32_t> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        for (uint32_t c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
        }
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

void check_cpus(const std::vector<uint32_t>& cpus, const std::vector<uint32_t>& online, const std::string& who) {
    for (const uint32_t c : cpus) {
        if (!std::binary_search(online.begin(), online.end(), c)) {
            throw usage_error("affinity: " + who + " CPU " + std::to_string(c) +
                              " does not exist on this host (online CPUs: " + format_cpu_list(online) + ")");
        }
    }
}

void pin_current_thread(const std::vector<uint32_t>& cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const uint32_t c : cpus) {
        if (c >= CPU_SETSIZE) throw usage_error("affinity: CPU " + std::to_string(c) + " is beyond what this build can pin");
        CPU_SET(c, &set);
    }
    const int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
    if (rc != 0) throw system_error("pin an engine thread to CPUs " + format_cpu_list(cpus), rc);
}

}  // namespace nm
