#pragma once
// What other tools say about an interface: the independent oracles tests compare nicmatrix against.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"

namespace nm::test {

/// `ethtool -k IFACE` inside `netns`, as shown name -> on: kernel names for the bits ethtool lists under a
/// group, ethtool's legacy names (generic-receive-offload, ...) for single-bit features and groups.
std::map<std::string, bool> ethtool_features(const std::string& netns, const std::string& ifname);

/// The interface's MTU as /sys shows it, with its newline ("1500\n").
std::string link_mtu(const std::string& netns, const std::string& ifname);

/// The current channel counts `ethtool -l IFACE` prints inside `netns` (its "Current hardware settings"):
/// "RX: 2 TX: 2" (the RX and TX lines, spaces collapsed); "" when ethtool prints none.
std::string ethtool_channels(const std::string& netns, const std::string& ifname);

/// Every rx queue's rps_cpus mask as sysfs prints it (`cat queues/rx-*/rps_cpus`), one per queue in
/// queue order, without the kernel's padding and commas, e.g. "0 0" or "3 3".
std::string rps_masks(const std::string& netns, const std::string& ifname);

/// What Debian's python3-jsonschema (a full validator, not our code) says of the results file at `path`
/// against results/results.schema.json: "" when it is valid, else the error.
std::string results_schema_errors(const std::string& path);

/// Waits (at most 5 s) until the lab's client reaches its server with `ping`. A lab just made can drop
/// its first packet (the veth peer not yet running), and ARP then waits a second before asking again.
void wait_for_lab_path(const LabInfo& lab);

/// One counter of /proc/net/snmp in `netns` ("Udp", "InDatagrams"): the kernel's own count for the
/// namespace. Throws std::runtime_error when the file cannot be read or has no such counter.
uint64_t snmp_counter(const std::string& netns, const std::string& group, const std::string& field);

/// The network namespaces whose names start with `prefix`, sorted: the entries of /run/netns (where `ip
/// netns` keeps them), read directly, so another test creating or deleting namespaces meanwhile cannot
/// add error lines to the answer, as it can to `ip netns list`.
std::vector<std::string> netns_named(const std::string& prefix);

}  // namespace nm::test
