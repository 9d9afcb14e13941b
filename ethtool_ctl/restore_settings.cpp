#include "ethtool_ctl/restore_settings.hpp"

namespace nm {

LinkSettings settings_to_restore(const LinkState& original, const LinkState& now) {
    LinkSettings s;
    s.mtu = original.mtu;
    for (const auto& [name, was] : original.features) {
        const auto it = now.features.find(name);
        if (was.fixed || it == now.features.end() || it->second.fixed) continue;
        if (it->second.wanted != was.wanted) s.features[name] = was.wanted;
    }
    return s;
}

std::string restore_differences(const LinkState& original, const LinkState& now) {
    std::string out;
    if (now.mtu != original.mtu) out += " mtu=" + std::to_string(now.mtu) + " (was " + std::to_string(original.mtu) + ")";
    for (const auto& [name, was] : original.features) {
        const auto it = now.features.find(name);
        if (was.fixed || it == now.features.end()) continue;
        if (it->second.wanted != was.wanted || it->second.active != was.active) {
            out += " " + name + "=" + (it->second.active ? "on" : "off");
        }
    }
    return out;
}

PutBack put_back(DeviceControl& device, std::string_view ifname, const LinkState& original) {
    PutBack out;
    const LinkState now = device.read(ifname);
    const LinkSettings back = settings_to_restore(original, now);
    if (back.features.empty() && back.mtu == now.mtu) {
        // Nothing moved: no request, so a restore that has nothing to do changes nothing at all.
        out.report.ifname = std::string(ifname);
        out.report.netns = now.netns;
        out.report.mtu_after = now.mtu;
        for (const auto& [name, f] : now.features) out.report.active_after[name] = f.active;
        out.differences = restore_differences(original, now);
        return out;
    }
    out.report = device.apply(ifname, back);
    out.differences = restore_differences(original, device.read(ifname));
    return out;
}

}  // namespace nm
