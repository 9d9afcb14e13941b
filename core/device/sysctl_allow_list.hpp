#pragma once
// The network sysctls a sweep may change: declared once here; the config codec refuses other names,
// `nicmatrix sweep --help` prints the list, ethtool_ctl reads and writes them under /proc/sys in the
// end's network namespace.
#include <span>
#include <string>
#include <string_view>

namespace nm {

/// One allow-listed sysctl.
struct SysctlEntry {
    const char* name;  ///< dotted, as `sysctl` takes it: "net.ipv4.tcp_congestion_control"
    bool per_netns;    ///< false: host-wide (absent in a lab namespace: a cell asking it there is infeasible)
    const char* what;  ///< one line for --help
};

/// Every allow-listed sysctl, in the order --help prints them.
std::span<const SysctlEntry> sysctl_allow_list();

/// The entry of `name`, or nullptr when it is not allow-listed.
const SysctlEntry* find_sysctl(std::string_view name);

/// Where `name` lives: "/proc/sys/net/ipv4/tcp_congestion_control".
std::string sysctl_path(std::string_view name);

/// A value in the kernel's canonical form for comparing: runs of blanks become one space, the ends trimmed
/// ("4096\t131072\t6291456\n" -> "4096 131072 6291456").
std::string normalize_sysctl_value(std::string_view value);

}  // namespace nm
