#pragma once
// The emulated NICs the VM lab offers: QEMU's device models and the drivers Debian's kernel binds to them.
#include <string>
#include <string_view>
#include <vector>

namespace nm {

/// One emulated NIC: QEMU's name for the device model and the guest driver that binds it.
struct NicModel {
    std::string device;  ///< QEMU's -device name: "e1000e", "rtl8139", "virtio-net-pci"
    std::string driver;  ///< the guest's driver: "e1000e", "8139cp", "virtio_net"
};

/// Every model the lab knows, in the order of the table in the README.
const std::vector<NicModel>& nic_models();

/// Parses "e1000e,8139cp": names of QEMU devices or of drivers (case-insensitive; "virtio-net",
/// "virtio_net" and "virtio-net-pci" are one). Throws nm::Error (Usage) naming `flag`, the unknown name and
/// the known ones, or when fewer than `at_least` NICs are given.
std::vector<NicModel> parse_nic_list(std::string_view text, const std::string& flag, size_t at_least = 2);

}  // namespace nm
