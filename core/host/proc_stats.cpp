#include "core/host/proc_stats.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/text_lines.hpp"

namespace nm {
namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        const size_t start = i;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

bool to_u64(std::string_view s, uint64_t& out, int base = 10) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return ec == std::errc{} && ptr == s.data() + s.size();
}

double pct(uint64_t part, uint64_t total) { return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total); }

uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

}  // namespace

namespace {
CpuTimes cpu_times(const std::vector<std::string_view>& f) {
    CpuTimes t;
    uint64_t* fields[] = {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal};
    for (size_t i = 0; i < 8 && i + 1 < f.size(); ++i) to_u64(f[i + 1], *fields[i]);
    return t;
}
}  // namespace

ProcStat parse_proc_stat_cpus(std::string_view text) {
    ProcStat s;
    bool found = false;
    for_each_line(text, [&](std::string_view line) {
        if (line.substr(0, 3) != "cpu") return;
        const auto f = split_ws(line);
        if (f.empty()) return;
        if (f[0] == "cpu") {
            if (!found) s.all = cpu_times(f);
            found = true;
            return;
        }
        uint64_t n = 0;
        if (!to_u64(f[0].substr(3), n) || n > UINT32_MAX) return;
        s.cpus.push_back(CpuLine{static_cast<uint32_t>(n), cpu_times(f)});
    });
    if (!found) throw Error(ErrorKind::Failed, "parse /proc/stat: no aggregate \"cpu\" line");
    return s;
}

CpuTimes parse_proc_stat(std::string_view text) { return parse_proc_stat_cpus(text).all; }

SystemCpu system_cpu_between(const CpuTimes& before, const CpuTimes& after) {
    const uint64_t total = delta(before.total(), after.total());
    SystemCpu s;
    const uint64_t idle = delta(before.idle, after.idle) + delta(before.iowait, after.iowait);
    s.busy_pct = total == 0 ? 0.0 : 100.0 - pct(idle, total);
    s.user_pct = pct(delta(before.user, after.user) + delta(before.nice, after.nice), total);
    s.sys_pct = pct(delta(before.system, after.system), total);
    s.irq_pct = pct(delta(before.irq, after.irq), total);
    s.softirq_pct = pct(delta(before.softirq, after.softirq), total);
    s.steal_pct = pct(delta(before.steal, after.steal), total);
    return s;
}

SystemCpu system_cpu_between(const ProcStat& before, const ProcStat& after, double ticks_per_s) {
    SystemCpu s = system_cpu_between(before.all, after.all);
    const uint64_t idle = delta(before.all.idle, after.all.idle) + delta(before.all.iowait, after.all.iowait);
    const uint64_t total = delta(before.all.total(), after.all.total());
    s.busy_cpu_s = ticks_per_s > 0 && total >= idle ? static_cast<double>(total - idle) / ticks_per_s : 0;
    for (const auto& line : after.cpus) {
        // Matched by number: a CPU that went offline (or came online) during the window has no figure.
        const auto earlier = std::find_if(before.cpus.begin(), before.cpus.end(), [&](const CpuLine& l) { return l.cpu == line.cpu; });
        if (earlier == before.cpus.end() || earlier->times.total() >= line.times.total()) continue;  // no tick: no figure
        const SystemCpu one = system_cpu_between(earlier->times, line.times);
        s.per_cpu.push_back(PerCpu{line.cpu, one.busy_pct, one.user_pct, one.sys_pct, one.irq_pct, one.softirq_pct, one.steal_pct});
    }
    std::sort(s.per_cpu.begin(), s.per_cpu.end(), [](const PerCpu& x, const PerCpu& y) { return x.cpu < y.cpu; });
    for (const auto& c : s.per_cpu) {
        if (s.busiest_cpu < 0 || c.busy_pct > s.busiest_cpu_busy_pct) {
            s.busiest_cpu = static_cast<int32_t>(c.cpu);
            s.busiest_cpu_busy_pct = c.busy_pct;
        }
    }
    return s;
}

NapiStats parse_softnet_stat(std::string_view text) {
    NapiStats n;
    for_each_line(text, [&](std::string_view line) {
        const auto f = split_ws(line);
        if (f.size() < 3) return;
        uint64_t processed = 0, dropped = 0, squeeze = 0;
        if (!to_u64(f[0], processed, 16) || !to_u64(f[1], dropped, 16) || !to_u64(f[2], squeeze, 16)) return;
        n.processed += processed;
        n.dropped += dropped;
        n.time_squeeze += squeeze;
    });
    return n;
}

uint64_t parse_proc_interrupts(std::string_view text, std::string_view iface) {
    if (iface.empty()) return 0;
    uint64_t sum = 0;
    for_each_line(text, [&](std::string_view line) {
        const auto f = split_ws(line);
        if (f.size() < 2 || f[0].back() != ':') return;
        uint64_t line_sum = 0;
        size_t i = 1;
        for (uint64_t v = 0; i < f.size() && to_u64(f[i], v); ++i) line_sum += v;
        bool named = false;
        for (; i < f.size() && !named; ++i) {
            auto tok = f[i];
            if (!tok.empty() && tok.back() == ',') tok.remove_suffix(1);
            if (tok.substr(0, iface.size()) != iface) continue;
            // The action is the interface itself or starts with it and a separator (eth0-TxRx-0, eth0:lsc).
            named = tok.size() == iface.size() || tok[iface.size()] == '-' || tok[iface.size()] == ':' || tok[iface.size()] == '@';
        }
        if (named) sum += line_sum;
    });
    return sum;
}

std::map<std::string, LinkCounters> parse_proc_net_dev(std::string_view text) {
    std::map<std::string, LinkCounters> out;
    for_each_line(text, [&](std::string_view line) {
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) return;
        const auto name_f = split_ws(line.substr(0, colon));
        if (name_f.size() != 1) return;
        const auto f = split_ws(line.substr(colon + 1));
        if (f.size() < 16) return;
        uint64_t v[16] = {};
        for (size_t i = 0; i < 16; ++i) {
            if (!to_u64(f[i], v[i])) return;
        }
        LinkCounters c;
        c.rx_bytes = v[0];
        c.rx_packets = v[1];
        c.rx_errors = v[2];
        c.rx_dropped = v[3];
        c.rx_fifo_errors = v[4];
        c.rx_frame_errors = v[5];
        c.multicast = v[7];
        c.tx_bytes = v[8];
        c.tx_packets = v[9];
        c.tx_errors = v[10];
        c.tx_dropped = v[11];
        c.tx_fifo_errors = v[12];
        c.collisions = v[13];
        c.tx_carrier_errors = v[14];
        out[std::string(name_f[0])] = c;
    });
    return out;
}

std::vector<uint64_t> parse_proc_softirqs(std::string_view text, std::string_view row) {
    std::vector<uint32_t> cpus;  // column -> CPU number, from the header
    std::vector<uint64_t> out;
    bool header = true;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t eol = std::min(text.find('\n', pos), text.size());
        std::istringstream line{std::string(text.substr(pos, eol - pos))};
        pos = eol + 1;
        std::string word;
        if (header) {
            while (line >> word) {
                if (word.rfind("CPU", 0) == 0) cpus.push_back(static_cast<uint32_t>(std::strtoul(word.c_str() + 3, nullptr, 10)));
            }
            header = false;
            continue;
        }
        if (!(line >> word) || word != std::string(row) + ":") continue;
        for (size_t col = 0; col < cpus.size(); ++col) {
            uint64_t v = 0;
            if (!(line >> v)) break;
            if (cpus[col] >= out.size()) out.resize(cpus[col] + 1, 0);
            out[cpus[col]] = v;
        }
        break;
    }
    return out;
}

std::string read_proc_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw system_error("read " + path, errno);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

ProcSnapshot take_proc_snapshot(const std::string& iface) {
    ProcSnapshot s;
    s.cpu = parse_proc_stat_cpus(read_proc_file("/proc/stat"));
    s.softnet = parse_softnet_stat(read_proc_file("/proc/thread-self/net/softnet_stat"));
    s.net_rx = parse_proc_softirqs(read_proc_file("/proc/softirqs"), "NET_RX");
    if (!iface.empty()) {
        s.softnet.interrupts = parse_proc_interrupts(read_proc_file("/proc/interrupts"), iface);
        const auto devs = parse_proc_net_dev(read_proc_file("/proc/thread-self/net/dev"));
        if (const auto it = devs.find(iface); it != devs.end()) s.counters = it->second;
    }
    return s;
}

std::string iface_for_address(const std::string& addr) {
    in6_addr want6{};
    in_addr want4{};
    bool is4 = ::inet_pton(AF_INET, addr.c_str(), &want4) == 1;
    if (!is4) {
        if (::inet_pton(AF_INET6, addr.c_str(), &want6) != 1) return "";
        if (IN6_IS_ADDR_V4MAPPED(&want6)) {
            std::memcpy(&want4, &want6.s6_addr[12], 4);
            is4 = true;
        }
    }
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return "";
    std::string found;
    for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
        if (i->ifa_addr == nullptr) continue;
        if (is4 && i->ifa_addr->sa_family == AF_INET) {
            const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
            if (sin->sin_addr.s_addr == want4.s_addr) found = i->ifa_name;
        } else if (!is4 && i->ifa_addr->sa_family == AF_INET6) {
            const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
            if (std::memcmp(&sin6->sin6_addr, &want6, sizeof want6) == 0) found = i->ifa_name;
        }
    }
    ::freeifaddrs(list);
    return found;
}

}  // namespace nm
