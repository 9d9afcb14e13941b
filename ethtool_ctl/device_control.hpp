#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device/device_types.hpp"

namespace nm {

/// Reads and changes one namespace's interfaces. The matrix layer sees only this interface; the real
/// implementation is NetlinkDeviceControl, tests use a fake.
class DeviceControl {
public:
    virtual ~DeviceControl() = default;

    /// The interface's state now, its identity included where the implementation knows it. Throws
    /// nm::Error (Usage) for an unknown interface.
    virtual LinkState read(std::string_view ifname) = 0;

    /// The names of every interface in this namespace, for finding one again by its identity after a
    /// rename. An implementation that cannot list returns none.
    virtual std::vector<std::string> link_names() { return {}; }

    /// Checks `wanted` against the interface without changing anything: throws nm::Error (Usage) naming
    /// the setting for an unknown feature name or an MTU outside the device's range (the message gives
    /// the range). Fixed features are not errors here; apply() reports them.
    virtual void validate(std::string_view ifname, const LinkSettings& wanted) = 0;

    /// Why `wanted` cannot be had on this interface, found without changing anything (a kind the driver
    /// does not have, a count above its maximum, a sysctl its namespace lacks), in the kernel's words;
    /// "" when nothing stands in the way. The sweep makes such a cell `infeasible` before any change.
    virtual std::string unsupported(std::string_view ifname, const LinkSettings& wanted) {
        (void)ifname;
        (void)wanted;
        return {};
    }

    /// Applies `wanted` (features in one request, MTU through rtnetlink), reads back, and reports every
    /// setting touched, requested or not. Throws nm::Error only when the change could not be made at all.
    virtual ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) = 0;

    /// How the kernel runs the interface beyond these settings (root qdisc, IRQs and their affinity,
    /// RPS/XPS masks, NUMA node), for a results file. None when this implementation cannot tell (the
    /// default) or the reading failed: metadata never stops a sweep.
    virtual std::optional<InterfaceSystem> describe(std::string_view /*ifname*/) { return std::nullopt; }

    /// The link's carrier and operstate now, read cheaply (one RTM_GETLINK), for waiting out a link reset
    /// after a change. None when this implementation cannot tell (the default): nothing waits then.
    virtual std::optional<CarrierState> carrier(std::string_view /*ifname*/) { return std::nullopt; }
};

}  // namespace nm
