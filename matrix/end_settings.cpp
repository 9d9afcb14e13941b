#include "matrix/end_settings.hpp"

#include <type_traits>

namespace nm {

TuningState trimmed_tuning(const TuningState& t, const SweepConfig& config) {
    TuningState out;
    const auto has = [&](const char* axis) { return config.axes.count(axis) > 0; };
    if (has("channels")) out.channels = t.channels;
    if (has("rings")) out.rings = t.rings;
    if (has("coalesce")) out.coalesce = t.coalesce;
    if (has("rps")) out.rps = t.rps;
    if (has("xps")) out.xps = t.xps;
    if (has("irq_affinity")) out.irq_affinity = t.irq_affinity;
    if (has("napi")) out.napi = t.napi;
    if (has("qdisc")) out.qdisc = t.qdisc;
    if (has("sysctl")) {
        // Only the sysctls some value of the axis names.
        for (const auto& p : config.axes.at("sysctl")) {
            for (const auto& [name, v] : p.tuning.sysctl) {
                if (const auto it = t.sysctl.find(name); it != t.sysctl.end()) out.sysctl[name] = it->second;
            }
        }
    }
    return out;
}

void complete_from_original(const SweepConfig& config, TuningRequest& t, const TuningState& original) {
    const auto fill_keys = [&](const char* axis, auto member, auto& out, const auto& orig) {
        const auto it = config.axes.find(axis);
        if (it == config.axes.end() || out.empty()) return;
        for (const auto& p : it->second) {
            for (const auto& [key, value] : p.tuning.*member) {
                if (!out.count(key)) {
                    if (const auto o = orig.find(key); o != orig.end())
                        out[key] = static_cast<typename std::decay_t<decltype(out)>::mapped_type>(o->second);
                }
            }
        }
    };
    fill_keys("channels", &TuningRequest::channels, t.channels, original.channels);
    fill_keys("rings", &TuningRequest::rings, t.rings, original.rings);
    fill_keys("coalesce", &TuningRequest::coalesce, t.coalesce, original.coalesce);
    fill_keys("napi", &TuningRequest::napi, t.napi, original.napi);
    fill_keys("sysctl", &TuningRequest::sysctl, t.sysctl, original.sysctl);
    const auto fill_queues = [](std::map<std::string, std::string>& out, const std::map<std::string, std::string>& orig) {
        if (out.empty() || out.count("*")) return;
        for (const auto& [q, list] : orig) out.emplace(q, list);
    };
    fill_queues(t.rps, original.rps);
    fill_queues(t.xps, original.xps);
    fill_queues(t.irq_affinity, original.irq_affinity);
}

EndSettings effective_settings(const LinkState& original, uint32_t mtu, const std::map<std::string, bool>& active) {
    EndSettings e;
    e.mtu = mtu;
    for (const auto& [name, on] : active) {
        const auto it = original.features.find(name);
        if (it == original.features.end() || !it->second.fixed) e.features[name] = on;
    }
    return e;
}

EndSettings end_settings(const LinkState& s) {
    std::map<std::string, bool> active;
    for (const auto& [name, f] : s.features) active[name] = f.active;
    return effective_settings(s, s.mtu, active);
}

EndSettings end_settings(const LinkState& s, const SweepConfig& config) {
    EndSettings e = end_settings(s);
    if (!config.axes.empty()) e.tuning = trimmed_tuning(s.tuning, config);
    return e;
}

InterfaceInfo interface_info(const LinkState& s) {
    InterfaceInfo i;
    i.name = s.name;
    i.netns = s.netns;
    i.driver = s.driver.driver;
    i.firmware = s.driver.firmware;
    i.driver_version = s.driver.version;
    i.bus_info = s.driver.bus_info;
    i.speed_mbps = s.speed_mbps;
    i.mtu_min = s.mtu_min;
    i.mtu_max = s.mtu_max;
    i.original = end_settings(s);
    i.rings = s.rings;
    i.coalesce = s.coalesce;
    i.channels = s.channels;
    i.tuning = s.tuning;
    return i;
}

std::string infeasible_reason(const ApplyReport& r) {
    std::string reason;
    const auto add = [&](const std::string& s) { reason += (reason.empty() ? "" : ", ") + s; };
    for (const auto& c : r.features) {
        if (!c.requested) continue;
        const std::string name = c.requested_as.empty() ? c.name : c.requested_as + " (" + c.name + ")";
        if (c.outcome == SettingOutcome::Fixed) add(name + " is fixed " + (c.after ? "on" : "off"));
        if (c.outcome == SettingOutcome::Unsupported)
            add(name + " requested " + (*c.requested ? "on" : "off") + " but stayed " + (c.after ? "on" : "off"));
    }
    if (r.mtu && r.mtu->outcome != SettingOutcome::Applied && r.mtu->outcome != SettingOutcome::AlreadySet) {
        add("mtu " + std::to_string(r.mtu->requested) + " not applied (stayed " + std::to_string(r.mtu->after) + ")");
    }
    for (const auto& c : r.tuning) {
        if (c.outcome != SettingOutcome::Applied && c.outcome != SettingOutcome::AlreadySet) {
            add(c.setting + " " + c.requested + " requested but the kernel has " + (c.after.empty() ? "none" : c.after));
        }
    }
    return r.ifname + ": " + (reason.empty() ? "settings did not hold" : reason);
}

std::string end_label(const std::string& ifname, const std::string& netns) { return netns.empty() ? ifname : ifname + " (netns " + netns + ")"; }

}  // namespace nm
