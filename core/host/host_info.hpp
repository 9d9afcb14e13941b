#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/host/host_types.hpp"

namespace nm {

/// CPU model and count from the text of /proc/cpuinfo (the first "model name", the number of
/// "processor" entries). Pure, for tests on canned text.
HostInfo parse_cpuinfo(std::string_view cpuinfo);

/// The network sysctls a results file records (HostInfo::sysctls), by dotted name.
std::vector<std::string> recorded_sysctls();

/// Every file of `dir` (/sys/devices/system/cpu/vulnerabilities in production; a made tree in tests) with
/// its first line: the kernel's state of each CPU vulnerability and its mitigation. Empty when the
/// directory is missing or unreadable; never throws.
std::map<std::string, std::string> read_cpu_vulnerabilities(const std::string& dir = "/sys/devices/system/cpu/vulnerabilities");

/// This host: hostname and kernel release (uname), CPU model and count (/proc/cpuinfo), the recorded
/// sysctls of the calling thread's network namespace (/proc/sys), the kernel command line (/proc/cmdline),
/// its CPU vulnerability mitigations (read_cpu_vulnerabilities), how its kernel accounts CPU time
/// (read_cpu_accounting), its CPU layout (read_cpu_layout) and idle policy (read_cpu_idle). The
/// interface is left empty; the runner fills it in. Never throws: what cannot be read stays empty.
HostInfo read_host_info();

}  // namespace nm
