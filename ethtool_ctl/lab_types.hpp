#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"

namespace nm {

/// Shapes of the built-in lab.
enum class LabTopology {
    Pair,    ///< two namespaces, `<name>-a` and `<name>-b`, joined by one veth pair
    Bridge,  ///< sender, device under test (a Linux bridge between two veth ports), receiver
};

/// One interface the lab made, and where it lives.
struct LabInterface {
    std::string role;    ///< "client", "server", "dut-in", "dut-out", ...
    std::string netns;   ///< namespace name as `ip netns` shows it
    std::string ifname;  ///< interface name inside that namespace
    std::string ipv4;    ///< address with prefix, "198.18.0.1/24"; empty when the port has none
    std::string ipv6;    ///< "2001:2::1/64"; empty when the port has none
    /// VM lab: the QEMU device model behind this interface ("e1000e", "rtl8139"), its guest driver and MAC
    /// address; all empty for the veth lab.
    std::string device_model{};
    std::string driver{};
    std::string mac{};
};

constexpr auto json_fields(const LabInterface*) {
    using S = LabInterface;
    return field_list(field("role", &S::role, kFieldRequired), field("netns", &S::netns, kFieldRequired), field("ifname", &S::ifname, kFieldRequired),
                      field("ipv4", &S::ipv4, kFieldRequired), field("ipv6", &S::ipv6, kFieldRequired),
                      field("device_model", &S::device_model, kFieldOmitEmpty), field("driver", &S::driver, kFieldOmitEmpty),
                      field("mac", &S::mac, kFieldOmitEmpty));
}

/// The guest of a VM lab (`lab up --topology vm`): where it runs and how it is emulated.
struct VmInfo {
    std::string emulator;        ///< "qemu 7.2.19"
    std::string accel;           ///< "tcg" or "kvm"
    std::string virtualization;  ///< "qemu 7.2.19 tcg": what hosts.*.virtualization of a sweep in it says
    std::string kernel;          ///< the guest's kernel release
    std::string state_dir;       ///< the lab's folder on the host (console.log, the share)
    int pid = 0;                 ///< the QEMU process
};

constexpr auto json_fields(const VmInfo*) {
    using S = VmInfo;
    return field_list(field("emulator", &S::emulator, kFieldRequired), field("accel", &S::accel, kFieldRequired),
                      field("virtualization", &S::virtualization, kFieldRequired), field("kernel", &S::kernel), field("state_dir", &S::state_dir),
                      field("pid", &S::pid));
}

/// What `lab up` made; enough to address every end and to take it all down again.
struct LabInfo {
    std::string name;
    LabTopology topology = LabTopology::Pair;
    std::vector<std::string> namespaces;   ///< in creation order
    std::vector<LabInterface> interfaces;  ///< the ends traffic flows between first: client, then server
    std::optional<VmInfo> vm;              ///< set for a VM lab: its interfaces live inside the guest

    /// The interface with `role`; throws nm::Error (Usage) if the lab has none.
    const LabInterface& by_role(const std::string& role) const;
};

constexpr auto json_fields(const LabInfo*) {
    using S = LabInfo;
    return field_list(field("name", &S::name, kFieldRequired), field("topology", &S::topology, kFieldRequired),
                      field("namespaces", &S::namespaces, kFieldRequired), field("interfaces", &S::interfaces, kFieldRequired),
                      field("vm", &S::vm, kFieldOmitEmpty | kFieldIfTyped));
}

/// Address without its prefix length: "198.18.0.1/24" -> "198.18.0.1".
std::string strip_prefix(const std::string& cidr);

}  // namespace nm
