#pragma once
#include <string_view>

#include "core/base/sweep_types.hpp"

namespace nm {

/// CPU model and count from the text of /proc/cpuinfo (the first "model name", the number of
/// "processor" entries). Pure, for tests on canned text.
HostInfo parse_cpuinfo(std::string_view cpuinfo);

/// This host: hostname and kernel release (uname), CPU model and count (/proc/cpuinfo), how its kernel
/// accounts CPU time (read_cpu_accounting). The interface is
/// left empty; the runner fills it in. Never throws: what cannot be read stays empty.
HostInfo read_host_info();

}  // namespace nm
