#include "ethtool_ctl/link_identity.hpp"

#include "core/base/error.hpp"

namespace nm {

bool same_interface(const LinkState& original, const LinkState& now) {
    const auto& a = original.identity;
    const auto& b = now.identity;
    if (!a.known() || !a.same_netns(b) || a.ifindex != b.ifindex || a.kind != b.kind) return false;
    if (!a.perm_address.empty() && a.perm_address != b.perm_address) return false;
    return original.driver.bus_info.empty() || original.driver.bus_info == now.driver.bus_info;
}

bool has_hardware_identity(const LinkState& original) { return !original.identity.perm_address.empty() || !original.driver.bus_info.empty(); }

bool same_hardware(const LinkState& original, const LinkState& now) {
    if (!original.driver.driver.empty() && original.driver.driver != now.driver.driver) return false;
    if (!original.identity.perm_address.empty()) return original.identity.perm_address == now.identity.perm_address;
    return !original.driver.bus_info.empty() && original.driver.bus_info == now.driver.bus_info;
}

bool same_link(const LinkState& a, const LinkState& b) {
    if (a.identity.known() && b.identity.known()) {
        return a.identity.same_netns(b.identity) && a.identity.ifindex == b.identity.ifindex;
    }
    return a.netns == b.netns && a.name == b.name;
}

std::optional<LinkState> find_link(DeviceControl& device, const LinkState& original, bool (*match)(const LinkState&, const LinkState&)) {
    // The journalled name: absent is normal (renamed, moved), any other failure is the restore's.
    // While looking through the others, one that cannot be read (gone meanwhile, no ethtool ops) is not it.
    const auto try_read = [&](const std::string& name, bool first) -> std::optional<LinkState> {
        try {
            LinkState now = device.read(name);
            if (match(original, now)) return now;
        } catch (const Error& e) {
            if (first && e.kind() != ErrorKind::Usage) throw;
        }
        return std::nullopt;
    };
    if (auto now = try_read(original.name, true)) return now;
    for (const auto& name : device.link_names()) {
        if (name == original.name) continue;
        if (auto now = try_read(name, false)) return now;
    }
    return std::nullopt;
}

}  // namespace nm
