#pragma once
// System figures the engine records around the measured window: /proc/stat, softnet_stat, /proc/interrupts
// and /proc/net/dev. Each has a pure parser (tested on canned text) and a three-line reader. Per-namespace
// files are read through /proc/thread-self/net/..., because /proc/net follows the thread-group leader's
// namespace, not the calling thread's (the sweep runs both ends in one process, in two namespaces).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/device/device_types.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

/// How much a counter grew between two readings; 0 when it went back (a reset or a wrapped 32-bit
/// driver counter), never a huge unsigned difference.
constexpr uint64_t counter_delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

/// The aggregate "cpu" line of /proc/stat, in clock ticks summed over all CPUs.
struct CpuTimes {
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

/// Parses the first ("cpu ") line of /proc/stat. Throws nm::Error (Failed) when it is missing.
CpuTimes parse_proc_stat(std::string_view text);

/// One "cpuN" line of /proc/stat.
struct CpuLine {
    uint32_t cpu = 0;
    CpuTimes times;
};

/// The aggregate line and every "cpuN" line, in file order (an offline CPU has no line). Throws
/// nm::Error (Failed) when the aggregate line is missing.
struct ProcStat {
    CpuTimes all;
    std::vector<CpuLine> cpus;
};
ProcStat parse_proc_stat_cpus(std::string_view text);

/// Percent of all CPUs between two readings; all zero when no tick passed.
SystemCpu system_cpu_between(const CpuTimes& before, const CpuTimes& after);

/// The same, with every CPU present in both readings (percent of that CPU), the busiest of them, and the
/// busy CPU-seconds of the aggregate at `ticks_per_s` (USER_HZ, sysconf(_SC_CLK_TCK)). Pure.
SystemCpu system_cpu_between(const ProcStat& before, const ProcStat& after, double ticks_per_s);

/// /proc/net/softnet_stat summed over CPUs: processed, dropped, time_squeeze (hex columns 1-3).
NapiStats parse_softnet_stat(std::string_view text);

/// Interrupts of `iface` summed over CPUs and over every line of /proc/interrupts whose action names it
/// ("eth0", "eth0-TxRx-3", "eth0:rx"). 0 when none does (veth has no interrupts).
uint64_t parse_proc_interrupts(std::string_view text, std::string_view iface);

/// Every interface of /proc/net/dev (the kernel's dev_get_stats, i.e. stats64). Fields /proc/net/dev
/// folds together are mapped to the first stats64 field they contain (frame -> rx_frame_errors, ...).
std::map<std::string, LinkCounters> parse_proc_net_dev(std::string_view text);

/// One row of /proc/softirqs ("NET_RX", "NET_TX", ...) by CPU number, from the header's "CPUn" columns
/// (a CPU the header does not list reads 0). Empty when the row is missing. Pure.
std::vector<uint64_t> parse_proc_softirqs(std::string_view text, std::string_view row);

/// Reads a whole /proc file. Throws nm::Error (Failed) naming the path.
std::string read_proc_file(const std::string& path);

/// One reading of everything around a window, in the calling thread's network namespace.
struct ProcSnapshot {
    ProcStat cpu;
    NapiStats softnet;             ///< interrupts filled from /proc/interrupts for `iface`
    LinkCounters counters;         ///< of `iface`; zero when the iface is unknown
    std::vector<uint64_t> net_rx;  ///< /proc/softirqs NET_RX by CPU number (system-wide)
};

/// Takes a snapshot; `iface` may be empty (then counters and interrupts stay zero). Never throws for a
/// missing interface: counters are a best effort, the run does not fail for them.
ProcSnapshot take_proc_snapshot(const std::string& iface);

/// The interface holding local address `addr` (a numeric IPv4/IPv6 address; IPv4-mapped IPv6 is
/// accepted) in the calling thread's namespace, "" when none does.
std::string iface_for_address(const std::string& addr);

}  // namespace nm
