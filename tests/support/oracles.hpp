#pragma once
// What other tools say about an interface: the independent oracles tests compare nicmatrix against.
#include <map>
#include <string>

#include "core/base/lab_types.hpp"

namespace nm::test {

/// `ethtool -k IFACE` inside `netns`, as shown name -> on: kernel names for the bits ethtool lists under a
/// group, ethtool's legacy names (generic-receive-offload, ...) for single-bit features and groups.
std::map<std::string, bool> ethtool_features(const std::string& netns, const std::string& ifname);

/// The interface's MTU as /sys shows it, with its newline ("1500\n").
std::string link_mtu(const std::string& netns, const std::string& ifname);

/// What Debian's python3-jsonschema (a full validator, not our code) says of the results file at `path`
/// against results/results.schema.json: "" when it is valid, else the error.
std::string results_schema_errors(const std::string& path);

/// Waits (at most 5 s) until the lab's client reaches its server with `ping`. A lab just made can drop
/// its first packet (the veth peer not yet running), and ARP then waits a second before asking again.
void wait_for_lab_path(const LabInfo& lab);

}  // namespace nm::test
