#pragma once
// Where CPU time went, per CPU, and how the kernel counts it: the per-CPU lines of /proc/stat over a
// measured window, and the kernel's CPU-time accounting options (which decide whether softirq time shows
// as softirq or is charged to whichever task was running). Plain values; JSON in json_codec_cpu.cpp.
#include <cstdint>
#include <string>

#include "core/base/field_list.hpp"

namespace nm {

/// One CPU over the measured window, from its "cpuN" line of /proc/stat. Percent of that one CPU.
struct PerCpu {
    uint32_t cpu = 0;     ///< the N of "cpuN"
    double busy_pct = 0;  ///< everything but idle and iowait (steal included)
    double user_pct = 0;  ///< user + nice
    double sys_pct = 0;
    double irq_pct = 0;
    double softirq_pct = 0;
    double steal_pct = 0;
};

constexpr auto json_fields(const PerCpu*) {
    using S = PerCpu;
    return field_list(field("cpu", &S::cpu), field("busy_pct", &S::busy_pct), field("user_pct", &S::user_pct), field("sys_pct", &S::sys_pct),
                      field("irq_pct", &S::irq_pct), field("softirq_pct", &S::softirq_pct), field("steal_pct", &S::steal_pct));
}

/// A yes/no the kernel's config answers, or "unknown" when the config could not be read.
enum class KernelOption { Yes, No, Unknown };

/// How the running kernel accounts CPU time, from its build config (/boot/config-$(uname -r) or
/// /proc/config.gz). With tick-based accounting and no IRQ time accounting, a tick that lands in softirq
/// is counted as softirq in /proc/stat but also charged to the task it interrupted (its rusage sys time):
/// the receive path processed in a sender's context shows in the sender's engine CPU.
struct CpuAccounting {
    std::string source;                             ///< the config file read; "" when none could be
    KernelOption irq_time = KernelOption::Unknown;  ///< CONFIG_IRQ_TIME_ACCOUNTING: irq/softirq time measured apart
    /// "tick" (CONFIG_TICK_CPU_ACCOUNTING), "virt_gen" (CONFIG_VIRT_CPU_ACCOUNTING_GEN, exact at context
    /// switches), "virt_native" (CONFIG_VIRT_CPU_ACCOUNTING_NATIVE), or "unknown".
    std::string cputime = "unknown";
    KernelOption no_hz_full = KernelOption::Unknown;  ///< CONFIG_NO_HZ_FULL: tickless CPUs possible

    /// Yes when softirq time may be hidden in task time (no IRQ time accounting), No when IRQ time is
    /// accounted apart, Unknown when the config could not be read.
    KernelOption softirq_in_task_time() const {
        if (irq_time == KernelOption::Unknown) return KernelOption::Unknown;
        return irq_time == KernelOption::Yes ? KernelOption::No : KernelOption::Yes;
    }
};

/// The codec adds the computed "softirq_in_task_time" (written, not read).
constexpr auto json_fields_and_more(const CpuAccounting*) {
    using S = CpuAccounting;
    return field_list(field("source", &S::source, kFieldNullIfEmpty), field("irq_time_accounting", &S::irq_time), field("cputime", &S::cputime),
                      field("no_hz_full", &S::no_hz_full));
}

}  // namespace nm
