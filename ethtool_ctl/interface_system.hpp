#pragma once
// How the kernel runs one interface beyond its ethtool settings: the root qdisc (rtnetlink), the
// device's IRQs with their affinity (/proc/irq), the RPS and XPS masks of every queue and the NUMA node
// (the interface's sysfs directory). In another network namespace, sysfs is that namespace's: it is
// mounted on a private mount namespace of a short-lived thread (as `ip netns exec` does), never on the
// caller's.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/device/device_types.hpp"

namespace nm {

/// Everything but the qdisc, from `sys` (a sysfs mount showing the interface's namespace; "/sys" for the
/// caller's) and `proc_irq` (/proc/irq). Devices without IRQs (veth) give an empty list; a queue whose mask
/// the kernel does not show (xps_cpus of a single-queue device: ENOENT) gives none. Throws nm::Error
/// (Usage) when `sys` has no such interface.
InterfaceSystem read_interface_sysfs(const std::filesystem::path& sys, std::string_view ifname, const std::filesystem::path& proc_irq = "/proc/irq");

/// The interface `ifname` of `netns` ("" = the caller's). Throws nm::Error (Usage) for an unknown
/// interface or namespace, nm::Error (Failed) when rtnetlink or the sysfs mount fails.
InterfaceSystem read_interface_system(std::string_view netns, std::string_view ifname);

}  // namespace nm
