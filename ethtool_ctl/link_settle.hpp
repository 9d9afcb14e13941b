#pragma once
// A real NIC resets itself after some changes (the MTU, rings, some features): its driver takes the link
// down and the link is back only when it has negotiated again, seconds later. veth never drops it. This
// waits a change out, with a bound, and says what the link did meanwhile.
#include <chrono>
#include <optional>
#include <stop_token>
#include <string_view>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/device_control.hpp"

namespace nm {

/// How long to wait for a link after a change. A zero bound waits for nothing.
struct LinkWait {
    std::chrono::milliseconds bound{0};
    /// A device on a bus (a NIC, not veth) whose link stayed up through the change is watched this long
    /// more, for a driver that resets from a work queue a moment after the change returned.
    std::chrono::milliseconds late_drop_watch{150};
    std::stop_token stop;
};

/// The moments of one change, for wait_for_link.
struct ChangeWindow {
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point ended;
};

/// Waits until `ifname` has carrier and operstate "up" again (or the operstate it had before, for a
/// device that reports none), polling every 10 ms, within `wait.bound` from the end of the change.
/// `before` is the link just before the change; none (the device cannot tell), an interface that was not
/// up or had no carrier before, or a zero bound: nothing is waited for and none is returned. A stop
/// request ends the wait early, not back.
std::optional<LinkSettle> wait_for_link(DeviceControl& device, std::string_view ifname, const std::optional<CarrierState>& before,
                                        const ChangeWindow& change, bool on_a_bus, const LinkWait& wait);

/// After a rollback or a restore: waits up to `bound` for `ifname` to have carrier again, polling every
/// 10 ms. True when it has (or the device cannot tell).
bool wait_for_carrier(DeviceControl& device, std::string_view ifname, std::chrono::milliseconds bound, std::stop_token stop = {});

/// What a link that is not back shows, in words: "no carrier, operstate down".
std::string describe_link(const CarrierState& now);

}  // namespace nm
