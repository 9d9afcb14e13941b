#pragma once
// How the running kernel accounts CPU time, read from its build config: whether IRQ and softirq time is
// measured apart (CONFIG_IRQ_TIME_ACCOUNTING) or charged to the task a tick interrupted, and whether the
// accounting is tick-based (CONFIG_TICK_CPU_ACCOUNTING) or exact at kernel entry and exit
// (CONFIG_VIRT_CPU_ACCOUNTING_GEN, used on CONFIG_NO_HZ_FULL CPUs). A reader of the CPU figures needs it
// to know whether the engine's rusage includes receive-path softirq work.
#include <string>
#include <string_view>

#include "core/traffic/cpu_types.hpp"

namespace nm {

/// The accounting a kernel config's text says ("CONFIG_X=y", "# CONFIG_X is not set"; an option the
/// text does not name is off). `source` is recorded as where it came from. Pure.
CpuAccounting parse_cpu_accounting(std::string_view config_text, std::string source);

/// This kernel's: /boot/config-$(uname -r), else /proc/config.gz (CONFIG_IKCONFIG_PROC); everything
/// "unknown" when neither can be read. Never throws.
CpuAccounting read_cpu_accounting();

}  // namespace nm
