#pragma once
// A host's CPU idle policy as sysfs shows it: the cpuidle driver and governor, the first online CPU's idle
// states (with the CPUs where each is disabled), and the driver's module parameters. What a results file
// records so that two hosts whose idle CPUs wait differently (halting at once, or polling first) can be
// told apart: on veth the sending CPU pays for waking the receiver, and how much depends on it.
#include <optional>
#include <string>

#include "core/host/host_types.hpp"

namespace nm {

/// Reads `system_root` (/sys/devices/system in production, a made tree in tests): cpu/cpuidle/
/// {current_driver, current_governor or current_governor_ro}, cpu/online, and each online CPU's
/// cpu/cpuN/cpuidle/stateK/{name,latency,disable}; and `module_root`/DRIVER/parameters/* (/sys/module).
/// None when there is no cpu/cpuidle directory or its current_driver is empty ("none", the kernel's word
/// for idling without a driver, is recorded as it is); never throws.
std::optional<CpuIdle> read_cpu_idle(const std::string& system_root = "/sys/devices/system", const std::string& module_root = "/sys/module");

}  // namespace nm
