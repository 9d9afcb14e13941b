#include "matrix/load_probe.hpp"

#include <algorithm>

#include "core/host/proc_stats.hpp"

namespace nm {

BackgroundLoad ProcStatLoadProbe::sample(std::chrono::milliseconds window, std::stop_token stop) {
    const auto t0 = clock_.now();
    const CpuTimes before = parse_proc_stat(read_proc_file("/proc/stat"));
    const auto until = t0 + window;
    // Short sleeps, so a stop does not wait for the whole window.
    while (!stop.stop_requested() && clock_.now() < until) clock_.sleep_until(std::min(until, clock_.now() + std::chrono::milliseconds(50)));
    const CpuTimes after = parse_proc_stat(read_proc_file("/proc/stat"));
    const SystemCpu cpu = system_cpu_between(before, after);
    BackgroundLoad b;
    b.busy_pct = cpu.busy_pct;
    b.steal_pct = cpu.steal_pct;
    b.window_s = std::chrono::duration<double>(clock_.now() - t0).count();
    return b;
}

}  // namespace nm
