#pragma once
// Putting an interface back to a state read earlier: what to send, and whether it then holds. Shared by
// the journal (after a crash) and the sweep (at its end, from the originals it holds).
#include <string>
#include <string_view>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/device_control.hpp"

namespace nm {

/// What to send to put `original` back over `now`: the MTU, and every changeable feature whose wanted
/// state moved. Features the running kernel no longer has, or cannot change, are left out.
LinkSettings settings_to_restore(const LinkState& original, const LinkState& now);

/// The differences that keep a restore from holding, as text (" mtu=9000 (was 1500) tx-tcp-segmentation=off");
/// empty when `now` is `original` again in MTU and in every changeable feature's wanted and active state.
std::string restore_differences(const LinkState& original, const LinkState& now);

/// What put_back() did.
struct PutBack {
    ApplyReport report;
    std::string differences;  ///< restore_differences after the change; empty = it holds
};

/// Reads `ifname`, sends what settings_to_restore says (nothing when nothing moved), and reads back.
/// Throws nm::Error when the interface cannot be read or changed.
PutBack put_back(DeviceControl& device, std::string_view ifname, const LinkState& original);

}  // namespace nm
