#pragma once
// Deciding whether an interface read now is the one a journal entry was written for. A name is not an
// identity (it can change, and every namespace can have an nm-a); these rules are what the journal acts
// on, pure functions over LinkState so they are tested without a kernel.
#include <optional>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/device_control.hpp"

namespace nm {

/// True when `now` is the interface `original` was, in the same namespace: the same namespace, ifindex
/// and kind, and the same permanent address and bus info wherever `original` had them. The name may
/// differ (a rename).
bool same_interface(const LinkState& original, const LinkState& now);

/// True when `original` names its hardware: a permanent address, or a bus info (physical NICs). Only
/// such an interface can be recognised in another namespace.
bool has_hardware_identity(const LinkState& original);

/// True when `now`, in any namespace, is the device `original` was: the same permanent address (or,
/// without one, the same bus info) and driver. For a physical NIC that came back to the initial
/// namespace when its own was deleted (its ifindex may have changed on the way).
bool same_hardware(const LinkState& original, const LinkState& now);

/// True when two states, read by this process or another, are of the same interface: by identity when
/// both have one, else by namespace name and interface name (entries from fakes and older journals).
bool same_link(const LinkState& a, const LinkState& b);

/// Looks through `device`'s namespace for the interface `original` was: its journalled name first, then
/// every interface (link_names) when it was renamed. `match` is same_interface or same_hardware. None when
/// nothing matches; an interface that vanishes while looking is skipped.
std::optional<LinkState> find_link(DeviceControl& device, const LinkState& original, bool (*match)(const LinkState&, const LinkState&));

}  // namespace nm
