#pragma once
// The settings that live in files: RPS/XPS and NAPI under /sys/class/net/IF, IRQ affinity under
// /proc/irq, allow-listed sysctls under /proc/sys (all in the end's network namespace, see netns_files).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/device/tuning_types.hpp"

namespace nm {

/// Fills rps, xps, napi, irq_affinity and sysctl of `state` for `ifname`; what cannot be read goes to
/// state.unsupported with the reason. Runs inside the namespace (in_netns). Throws nm::Error only when
/// the namespace cannot be entered.
void read_tuning_files(const std::string& netns, const std::string& ifname, TuningState& state);

/// Writes what `wanted` asks of those kinds (rps/xps "*" to every queue the interface has now, CPU lists
/// as masks), in the namespace. Throws nm::Error naming the setting and the kernel's errno.
void write_tuning_files(const std::string& netns, const std::string& ifname, const TuningRequest& wanted);

/// The interrupts of `ifname`'s own device: its msi_irqs, else its legacy irq; none for a virtual device
/// (no device link), whatever it is named: never found by matching names in /proc/interrupts. Runs in the
/// namespace (the interface's sysfs entry is there).
std::optional<std::vector<std::string>> device_irqs(const std::string& ifname);

/// The number of CPUs this host has (possible CPUs): CPU lists name CPUs below it.
unsigned host_cpu_count();

}  // namespace nm
