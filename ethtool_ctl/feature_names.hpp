#pragma once
// The names people type for features, resolved the way `ethtool -K` resolves them, and the rows
// `ethtool -k` prints. Kernel feature names come from the running kernel's string set; the only table
// of names here is ethtool's groups, each defined by a pattern over those kernel names.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/device/device_types.hpp"

namespace nm {

/// One of ethtool's legacy offload groups: `ethtool -K DEV tso off` or `tcp-segmentation-offload off`
/// stands for every kernel feature matching `pattern` (at most one '*', matching any run of characters).
struct FeatureGroup {
    std::string_view short_name;
    std::string_view long_name;
    std::string_view pattern;
};

/// THE table (the order is ethtool's, which is also the order `ethtool -k` prints the groups in).
inline constexpr std::array<FeatureGroup, 12> kFeatureGroups{{
    {"rx", "rx-checksumming", "rx-checksum"},
    {"tx", "tx-checksumming", "tx-checksum-*"},
    {"sg", "scatter-gather", "tx-scatter-gather*"},
    {"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
    {"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
    {"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
    {"gro", "generic-receive-offload", "rx-gro"},
    {"lro", "large-receive-offload", "rx-lro"},
    {"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
    {"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
    {"ntuple", "ntuple-filters", "rx-ntuple-filter"},
    {"rxhash", "receive-hashing", "rx-hashing"},
}};

/// ethtool's pattern match: exact, or with one '*' matching any (possibly empty) middle.
bool feature_pattern_match(std::string_view name, std::string_view pattern);

/// What a typed name stands for on one kernel.
struct ResolvedFeature {
    std::vector<std::string> kernel_names;  ///< in string-set order
    bool group = false;                     ///< typed as a group (short or long name)
};

/// Resolves `typed` against the kernel's feature names: a group's short or long name gives every
/// feature matching its pattern; otherwise it must be a kernel feature name. Throws nm::Error (Usage)
/// naming the feature and `ifname` when it is neither, or a group with no feature on this kernel.
ResolvedFeature resolve_feature_name(std::string_view typed, const std::vector<std::string>& kernel_names, std::string_view ifname);

/// One line of `ethtool -k`.
struct FeatureRow {
    std::string name;                  ///< as printed: group long name or kernel name
    std::vector<std::string> members;  ///< kernel features it shows (one for a plain feature)
    bool group_header = false;         ///< a group of several features: "name: on" without suffix
    bool indented = false;             ///< a member shown under its group header
};

/// The rows `ethtool -k` (6.1, netlink) prints for these kernel names, in its order: each group (but
/// UFO) with its members, a group with exactly one member shown under the group's long name, then every
/// other feature by its kernel name.
std::vector<FeatureRow> ethtool_k_rows(const std::vector<std::string>& kernel_names);

/// The state of a row: active/wanted when any member is, fixed when every member is.
FeatureState row_state(const FeatureRow& row, const std::map<std::string, FeatureState>& features);

/// Every name `ethtool -k` prints (group names included) with its state.
std::map<std::string, FeatureState> ethtool_k_view(const std::vector<std::string>& kernel_names, const std::map<std::string, FeatureState>& features);

}  // namespace nm
