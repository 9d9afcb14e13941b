#pragma once
// A host's CPU layout as sysfs shows it: SMT, NUMA nodes and their CPUs, each online CPU's core, package,
// node, frequency governor and current frequency. What a results file records so two machines (or one
// machine with another governor) can be told apart.
#include <string>

#include "core/host/host_types.hpp"

namespace nm {

/// Reads `root` (/sys/devices/system in production; a copied tree in tests): cpu/online, cpu/smt/active,
/// cpu/cpuN/topology/{core_id,physical_package_id}, cpu/cpuN/nodeM, cpu/cpuN/cpufreq/{scaling_governor,
/// scaling_cur_freq}, node/online and node/nodeN/cpulist. What cannot be read stays none (no cpufreq in a
/// VM, no NUMA directory); never throws.
CpuLayout read_cpu_layout(const std::string& root = "/sys/devices/system");

}  // namespace nm
