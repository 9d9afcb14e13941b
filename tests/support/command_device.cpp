#include "tests/support/command_device.hpp"

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "tests/support/command.hpp"

namespace nm::test {
namespace {

// Features ethtool -k shows under their legacy name only (one kernel bit each).
const std::map<std::string, std::string> kSingleBit = {
    {"rx-checksumming", "rx-checksum"},      {"generic-segmentation-offload", "tx-generic-segmentation"},
    {"generic-receive-offload", "rx-gro"},   {"large-receive-offload", "rx-lro"},
    {"rx-vlan-offload", "rx-vlan-hw-parse"}, {"tx-vlan-offload", "tx-vlan-hw-insert"},
    {"ntuple-filters", "rx-ntuple-filter"},  {"receive-hashing", "rx-hashing"},
};

// ethtool -K's short names.
const std::map<std::string, std::string> kShort = {
    {"rx", "rx-checksumming"},
    {"tx", "tx-checksumming"},
    {"sg", "scatter-gather"},
    {"tso", "tcp-segmentation-offload"},
    {"gso", "generic-segmentation-offload"},
    {"gro", "generic-receive-offload"},
    {"lro", "large-receive-offload"},
};

std::string run_ok(const std::string& netns, const std::string& cmd) {
    const auto r = run_in_netns(netns, cmd);
    if (r.exit_status != 0) throw Error(ErrorKind::Failed, cmd + " in " + netns + ": " + r.output);
    return r.output;
}

}  // namespace

CommandDeviceControl::Snapshot CommandDeviceControl::snapshot(std::string_view ifname) {
    const std::string name(ifname);
    const auto link = run_in_netns(netns_, "ip -d -j link show dev " + name);
    if (link.exit_status != 0) throw usage_error("interface " + name + ": no such interface in " + netns_);
    const auto j = nlohmann::json::parse(link.output).at(0);
    Snapshot s;
    s.state.name = name;
    s.state.netns = netns_;
    s.state.mtu = j.at("mtu").get<uint32_t>();
    s.state.mtu_min = j.value("min_mtu", 0U);
    s.state.mtu_max = j.value("max_mtu", 0U);
    s.state.operstate = j.value("operstate", "");
    s.state.driver.driver = "veth";
    std::istringstream in(run_ok(netns_, "ethtool -k " + name));
    std::string line, group;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || line.rfind("Features for", 0) == 0) continue;
        const bool child = line[0] == '\t';
        const std::string shown = line.substr(child ? 1 : 0, colon - (child ? 1 : 0));
        const std::string rest = line.substr(colon + 2);
        FeatureState f;
        f.active = rest.rfind("on", 0) == 0;
        f.fixed = rest.find("[fixed]") != std::string::npos;
        f.wanted = rest.find("[requested on]") != std::string::npos ? true : rest.find("[requested off]") != std::string::npos ? false : f.active;
        if (child) {
            s.state.features[shown] = f;
            s.groups[group].push_back(shown);
            continue;
        }
        group = shown;
        const auto single = kSingleBit.find(shown);
        const std::string kernel = single != kSingleBit.end() ? single->second : shown;
        // A header line is a feature of its own unless children follow; the children replace it below.
        s.state.features[kernel] = f;
        s.groups[shown] = {};
        if (single != kSingleBit.end()) s.groups[shown] = {kernel};
    }
    for (auto& [g, children] : s.groups) {
        if (children.empty()) {
            children = {g};
        } else if (!kSingleBit.count(g)) {
            s.state.features.erase(g);
        }
    }
    return s;
}

std::vector<std::string> CommandDeviceControl::resolve(const Snapshot& s, const std::string& name) const {
    const auto shortname = kShort.find(name);
    const std::string shown = shortname != kShort.end() ? shortname->second : name;
    if (const auto g = s.groups.find(shown); g != s.groups.end()) return g->second;
    if (s.state.features.count(name)) return {name};
    return {};
}

LinkState CommandDeviceControl::read(std::string_view ifname) { return snapshot(ifname).state; }

void CommandDeviceControl::validate(std::string_view ifname, const LinkSettings& wanted) {
    const auto s = snapshot(ifname);
    for (const auto& [name, on] : wanted.features) {
        if (resolve(s, name).empty()) throw Error(ErrorKind::Usage, "unknown feature \"" + name + "\"", {}, {std::string(ifname), name, ""});
    }
    if (wanted.mtu && (*wanted.mtu < s.state.mtu_min || *wanted.mtu > s.state.mtu_max)) {
        throw Error(ErrorKind::Usage, "set mtu=" + std::to_string(*wanted.mtu) + ": outside the device's range", {},
                    {std::string(ifname), "mtu", ""});
    }
}

ApplyReport CommandDeviceControl::apply(std::string_view ifname, const LinkSettings& wanted) {
    ++applies;
    const std::string name(ifname);
    const auto before = snapshot(ifname);
    if (!wanted.features.empty()) {
        std::string args;
        for (const auto& [f, on] : wanted.features) args += " " + f + (on ? " on" : " off");
        // ethtool -K exits non-zero when a requested feature could not change (fixed); the read-back says what happened.
        run_in_netns(netns_, "ethtool -K " + name + args);
    }
    if (wanted.mtu) run_ok(netns_, "ip link set dev " + name + " mtu " + std::to_string(*wanted.mtu));
    const auto after = snapshot(ifname);

    ApplyReport r;
    r.ifname = name;
    r.netns = netns_;
    r.path = "ethtool-command";
    std::map<std::string, std::pair<std::string, bool>> requested;  // kernel -> (as typed, value)
    for (const auto& [f, on] : wanted.features) {
        // Like ethtool -K, a name for several bits means its changeable ones (tx: not tx-checksum-ipv4 [fixed]).
        const auto kernel = resolve(before, f);
        for (const auto& k : kernel) {
            if (kernel.size() == 1 || !before.state.features.at(k).fixed) requested[k] = {f, on};
        }
    }
    for (const auto& [k, now] : after.state.features) {
        const auto was = before.state.features.count(k) ? before.state.features.at(k).active : now.active;
        if (const auto it = requested.find(k); it != requested.end()) {
            FeatureChange c{k, it->second.first, it->second.second, was, now.active, SettingOutcome::Applied};
            if (now.active != it->second.second) c.outcome = now.fixed ? SettingOutcome::Fixed : SettingOutcome::Unsupported;
            else if (was == now.active) c.outcome = SettingOutcome::AlreadySet;
            r.features.push_back(c);
        } else if (was != now.active) {
            r.features.push_back({k, "", std::nullopt, was, now.active, SettingOutcome::SideEffect});
        }
        r.active_after[k] = now.active;
    }
    if (wanted.mtu) {
        r.mtu = MtuChange{*wanted.mtu, before.state.mtu, after.state.mtu,
                          after.state.mtu != *wanted.mtu    ? SettingOutcome::Unsupported
                          : before.state.mtu == *wanted.mtu ? SettingOutcome::AlreadySet
                                                            : SettingOutcome::Applied};
    }
    r.mtu_after = after.state.mtu;
    return r;
}

}  // namespace nm::test
