#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"

namespace nm {

/// The built-in lab: network namespaces joined by veth, addressed from the benchmarking ranges
/// 198.18.0.0/15 (RFC 2544) and 2001:2::/48 (RFC 5180). Everything lives inside the lab's own namespaces;
/// the caller's namespace gains nothing but the names under /run/netns.
///
/// pair:   <name>-a [nm-a 198.18.0.1/24 2001:2::1/64] <-veth-> [nm-b 198.18.0.2/24 2001:2::2/64] <name>-b
/// bridge: <name>-a [nm-a] <-veth-> [dut-a] br0 [dut-b] <name>-dut <-veth-> [nm-b] <name>-b, same addresses

/// Lab names become namespace names; letters, digits, '-' and '_', at most 32 characters.
void validate_lab_name(std::string_view name);

/// Creates the lab. Throws nm::Error (Usage) if any of its namespaces exists already; on any failure,
/// everything made so far is removed again before the error propagates.
LabInfo lab_up(std::string_view name, LabTopology topology = LabTopology::Pair);

/// The lab as it exists now; throws nm::Error (Usage) if there is no lab of that name.
LabInfo lab_describe(std::string_view name);

/// Removes every namespace of lab `name` (and with them its interfaces). Returns the namespaces removed;
/// an empty list when there was nothing to remove, which is not an error.
std::vector<std::string> lab_down(std::string_view name);

}  // namespace nm
