#include "ethtool_ctl/restore_settings.hpp"

#include <type_traits>

#include "ethtool_ctl/qdisc.hpp"

namespace nm {
namespace {

template <typename Map>
void differences(const char* kind, const Map& original, const Map& now, std::string& out) {
    for (const auto& [key, was] : original) {
        const auto it = now.find(key);
        if (it != now.end() && it->second == was) continue;
        std::string is = "(gone)", before;
        if constexpr (std::is_same_v<typename Map::mapped_type, std::string>) {
            if (it != now.end()) is = it->second;
            before = was;
        } else {
            if (it != now.end()) is = std::to_string(it->second);
            before = std::to_string(was);
        }
        out += std::string(" ") + kind + "." + key + "=" + is + " (was " + before + ")";
    }
}

}  // namespace

LinkSettings settings_to_restore(const LinkState& original, const LinkState& now) {
    LinkSettings s;
    s.mtu = original.mtu;
    for (const auto& [name, was] : original.features) {
        const auto it = now.features.find(name);
        if (was.fixed || it == now.features.end() || it->second.fixed) continue;
        if (it->second.wanted != was.wanted) s.features[name] = was.wanted;
    }
    s.tuning = tuning_back_to(original.tuning, now.tuning);
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
    const TuningState& o = original.tuning;
    const TuningState& n = now.tuning;
    differences("channels", o.channels, n.channels, out);
    differences("rings", o.rings, n.rings, out);
    differences("coalesce", o.coalesce, n.coalesce, out);
    differences("rps", o.rps, n.rps, out);
    differences("xps", o.xps, n.xps, out);
    differences("irq_affinity", o.irq_affinity, n.irq_affinity, out);
    differences("napi", o.napi, n.napi, out);
    differences("sysctl", o.sysctl, n.sysctl, out);
    if (o.qdisc_tree ? !qdisc_tree_back(*o.qdisc_tree, n.qdisc_tree) : !qdisc_back(o.qdisc, n.qdisc)) {
        const std::string was = o.qdisc_tree ? describe_qdisc_tree(*o.qdisc_tree) : describe_qdisc(*o.qdisc);
        out += " qdisc=" +
               (n.qdisc_tree ? describe_qdisc_tree(*n.qdisc_tree)
                : n.qdisc    ? describe_qdisc(*n.qdisc)
                             : std::string("(none)")) +
               " (was " + was + ")";
    }
    return out;
}

PutBack put_back(DeviceControl& device, std::string_view ifname, const LinkState& original) {
    PutBack out;
    const LinkState now = device.read(ifname);
    const LinkSettings back = settings_to_restore(original, now);
    if (back.features.empty() && back.mtu == now.mtu && back.tuning.empty()) {
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
