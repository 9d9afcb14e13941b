#include "tests/support/matrix_fakes.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "ethtool_ctl/setting_writes.hpp"

namespace nm::test {
namespace {

// ethtool's names for the features a sweep uses, as `ethtool -K` resolves them.
const std::map<std::string, std::vector<std::string>> kAliases = {
    {"rx", {"rx-checksum"}},
    {"rx-checksumming", {"rx-checksum"}},
    {"tx", {"tx-checksum-ip-generic"}},
    {"tx-checksumming", {"tx-checksum-ip-generic"}},
    {"sg", {"tx-scatter-gather"}},
    {"scatter-gather", {"tx-scatter-gather"}},
    {"tso", {"tx-tcp-segmentation", "tx-tcp6-segmentation"}},
    {"tcp-segmentation-offload", {"tx-tcp-segmentation", "tx-tcp6-segmentation"}},
    {"gso", {"tx-generic-segmentation"}},
    {"generic-segmentation-offload", {"tx-generic-segmentation"}},
    {"gro", {"rx-gro"}},
    {"generic-receive-offload", {"rx-gro"}},
};

}  // namespace

void FakeDeviceControl::add_interface(const std::string& ifname, const std::string& netns) {
    LinkState s;
    s.name = ifname;
    s.netns = netns;
    s.driver = {"veth", "1.0", "", ""};
    s.operstate = "up";
    s.mtu = 1500;
    s.mtu_min = 68;
    s.mtu_max = 65535;
    for (const char* f :
         {"rx-checksum", "tx-checksum-ip-generic", "tx-scatter-gather", "tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-generic-segmentation"}) {
        s.features[f] = {true, true, false};
    }
    s.features["rx-gro"] = {false, false, false};
    s.features["rx-lro"] = {false, false, true};  // veth has no LRO: fixed off
    links_[ifname] = s;
}

void FakeDeviceControl::fix(const std::string& ifname, const std::string& kernel_feature) {
    links_.at(ifname).features.at(kernel_feature).fixed = true;
}

void FakeDeviceControl::set_mtu_range(const std::string& ifname, uint32_t min, uint32_t max) {
    links_.at(ifname).mtu_min = min;
    links_.at(ifname).mtu_max = max;
}

LinkState& FakeDeviceControl::link(std::string_view ifname) {
    const auto it = links_.find(ifname);
    if (it == links_.end()) throw usage_error("interface " + std::string(ifname) + ": no such interface");
    return it->second;
}

size_t FakeDeviceControl::count(const std::string& op) const {
    return static_cast<size_t>(std::count_if(calls_.begin(), calls_.end(), [&](const Call& c) { return c.op == op; }));
}

std::vector<std::string> FakeDeviceControl::resolve(const std::string& name) const {
    if (const auto it = kAliases.find(name); it != kAliases.end()) return it->second;
    for (const auto& [ifname, s] : links_) {
        if (s.features.count(name)) return {name};
    }
    return {};
}

// The kernel's netdev_fix_features, for the features modelled here: TSO needs checksum offload and SG,
// GSO needs SG. Wanted stays as asked; active follows.
void FakeDeviceControl::fix_features(LinkState& s) {
    for (auto& [name, f] : s.features) {
        if (!f.fixed) f.active = f.wanted;
    }
    const bool csum = s.features.at("tx-checksum-ip-generic").active;
    const bool sg = s.features.at("tx-scatter-gather").active;
    for (const char* f : {"tx-tcp-segmentation", "tx-tcp6-segmentation"}) {
        auto& st = s.features.at(f);
        if (!st.fixed) st.active = st.wanted && csum && sg;
    }
    auto& gso = s.features.at("tx-generic-segmentation");
    if (!gso.fixed) gso.active = gso.wanted && sg;
}

LinkState FakeDeviceControl::read(std::string_view ifname) {
    calls_.push_back({"read", std::string(ifname), {}});
    return link(ifname);
}

void FakeDeviceControl::validate(std::string_view ifname, const LinkSettings& wanted) {
    calls_.push_back({"validate", std::string(ifname), wanted});
    const auto& s = link(ifname);
    for (const auto& [name, value] : wanted.features) {
        if (resolve(name).empty()) {
            throw Error(ErrorKind::Usage, "unknown feature \"" + name + "\"", {}, {std::string(ifname), name, ""});
        }
    }
    if (wanted.mtu && (*wanted.mtu < s.mtu_min || *wanted.mtu > s.mtu_max)) {
        throw Error(
            ErrorKind::Usage,
            "set mtu=" + std::to_string(*wanted.mtu) + ": outside the device's range " + std::to_string(s.mtu_min) + ".." + std::to_string(s.mtu_max),
            {}, {std::string(ifname), "mtu", ""});
    }
}

ApplyReport FakeDeviceControl::apply(std::string_view ifname, const LinkSettings& wanted) {
    calls_.push_back({"apply", std::string(ifname), wanted});
    if (on_apply) on_apply();
    if (const auto it = fail_next_.find(std::string(ifname)); it != fail_next_.end()) {
        const auto kind = it->second;
        fail_next_.erase(it);
        throw Error(kind, "apply " + std::string(ifname) + ": fake failure");
    }
    auto& s = link(ifname);
    ApplyReport r;
    r.ifname = s.name;
    r.netns = s.netns;
    r.path = "netlink";
    std::map<std::string, bool> before;
    for (const auto& [name, f] : s.features) before[name] = f.active;
    std::map<std::string, std::string> requested_as;
    std::map<std::string, bool> requested;
    for (const auto& [name, value] : wanted.features) {
        const auto kernel = resolve(name);
        if (kernel.empty()) throw Error(ErrorKind::Usage, "unknown feature \"" + name + "\"", {}, {s.name, name, ""});
        for (const auto& k : kernel) {
            requested_as[k] = name;
            requested[k] = value;
            auto& f = s.features.at(k);
            if (!f.fixed) f.wanted = value;
        }
    }
    if (wanted.mtu) {
        if (*wanted.mtu < s.mtu_min || *wanted.mtu > s.mtu_max) {
            throw Error(ErrorKind::Usage, "set mtu=" + std::to_string(*wanted.mtu) + ": Invalid argument", {}, {s.name, "mtu", ""});
        }
        r.mtu = MtuChange{*wanted.mtu, s.mtu, *wanted.mtu, s.mtu == *wanted.mtu ? SettingOutcome::AlreadySet : SettingOutcome::Applied};
        s.mtu = *wanted.mtu;
    }
    fix_features(s);
    for (const auto& [name, f] : s.features) {
        const bool was = before.at(name);
        if (const auto it = requested.find(name); it != requested.end()) {
            FeatureChange c{name, requested_as.at(name), it->second, was, f.active, SettingOutcome::Applied};
            if (f.fixed && f.active != it->second) c.outcome = SettingOutcome::Fixed;
            else if (f.active != it->second) c.outcome = SettingOutcome::Unsupported;
            else if (was == f.active) c.outcome = SettingOutcome::AlreadySet;
            r.features.push_back(c);
        } else if (was != f.active) {
            r.features.push_back({name, "", std::nullopt, was, f.active, SettingOutcome::SideEffect});
        }
        r.active_after[name] = f.active;
    }
    r.mtu_after = s.mtu;
    return r;
}

void FakeJournal::remember(const LinkState& original) {
    ++remember_calls;
    const std::string key = original.netns + "/" + original.name;
    if (const auto it = held.find(key); it != held.end()) {
        throw Error(ErrorKind::Refused, original.name + " is held by pid " + std::to_string(it->second) + ", which is still running");
    }
    entries_.emplace(key, original);
}

void FakeJournal::record(const LinkState& link, const SettingWrites& writes) {
    const std::string key = link.netns + "/" + link.name;
    if (const auto it = held.find(key); it != held.end()) {
        throw Error(ErrorKind::Refused, link.name + " is held by pid " + std::to_string(it->second) + ", which is still running");
    }
    entries_.emplace(key, link);
    merge_writes(writes_[key], writes);
}

SettingWrites FakeJournal::writes(const LinkState& link) {
    const auto it = writes_.find(link.netns + "/" + link.name);
    return it == writes_.end() ? SettingWrites{} : it->second;
}

void FakeJournal::release(const LinkState& original) {
    ++release_calls;
    entries_.erase(original.netns + "/" + original.name);
    writes_.erase(original.netns + "/" + original.name);
}

std::vector<JournalReport> FakeJournal::restore(const RestoreOptions&) {
    ++restore_calls;
    std::vector<JournalReport> reports;
    for (const auto& [key, pid] : held) {
        JournalReport r;
        r.action = JournalAction::LeftAlone;
        r.ifname = key.substr(key.find('/') + 1);
        r.where = key.substr(0, key.find('/'));
        r.note = "left alone: held by pid " + std::to_string(pid);
        reports.push_back(r);
    }
    for (auto it = entries_.begin(); it != entries_.end();) {
        const LinkState& s = it->second;
        LinkSettings back;
        back.mtu = s.mtu;
        for (const auto& [name, f] : s.features) {
            if (!f.fixed) back.features[name] = f.wanted;
        }
        for (auto* d : devices_) {
            try {
                if (d->read(s.name).netns != s.netns) continue;
            } catch (const Error&) {
                continue;  // not this device's interface
            }
            JournalReport r;
            r.action = JournalAction::Restored;
            r.ifname = s.name;
            r.where = s.netns;
            r.applied = d->apply(s.name, back);
            reports.push_back(r);
            break;
        }
        writes_.erase(it->first);
        it = entries_.erase(it);
    }
    return reports;
}

RunResult FakeTrafficRunner::run(const TestSpec& spec, std::stop_token stop) {
    specs.push_back(spec);
    const size_t n = specs.size();
    if (on_run) on_run(n, spec);
    RunResult r;
    r.spec = spec;
    if (stop.stop_requested()) {
        r.status = RunStatus::Interrupted;
        r.error = "interrupted";
        return r;
    }
    if (fail_runs.count(n)) throw Error(ErrorKind::Failed, "connect to " + spec.host + ": Connection refused");
    if (stall_runs.count(n)) {
        r.status = RunStatus::Stalled;
        r.error = "no data for 1 s";
        return r;
    }
    if (worker_error_runs.count(n)) {
        r.status = RunStatus::Failed;
        r.error = "stream 0: sendmmsg: Message too long";
        return r;
    }
    const auto& s = local_.state(ifname_);
    // Figures that follow the settings, as on veth: bigger frames and TSO/GRO cost less CPU per byte.
    double gbps = 2.0 * s.mtu / 1500.0;
    if (s.features.at("tx-tcp-segmentation").active) gbps *= 3;
    if (s.features.at("rx-gro").active) gbps *= 1.5;
    gbps *= spec.streams > 1 ? 1.2 : 1.0;
    r.duration_s = spec.duration_s;
    r.throughput_bps = gbps * 1e9 * (1.0 + 0.01 * static_cast<double>(n % 3));
    r.bytes = static_cast<uint64_t>(r.throughput_bps / 8 * spec.duration_s);
    r.packets_per_s = r.throughput_bps / 8 / s.mtu;
    r.sender.cpu = {0.1, 0.9, 100};
    r.receiver.cpu = {0.1, 0.6, 70};
    r.sender.system.busy_pct = 40 + static_cast<double>(n % 2);
    r.receiver.system.busy_pct = r.sender.system.busy_pct;
    if (spec.protocol == Protocol::Udp) r.loss = LossStats{1000, 990, 10, 0, 0, 1.0, 0.01};
    if (on_result) on_result(n, r);
    return r;
}

ProbeResult FakePathProbe::probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token /*stop*/) {
    probed.push_back(mtu);
    if (mtu <= max_mtu) return {true, std::to_string(mtu) + "-byte probe echoed"};
    return {false, std::to_string(mtu) + "-byte probe: no echo within " + std::to_string(timeout.count()) + " ms"};
}

BackgroundLoad FakeLoadProbe::sample(std::chrono::milliseconds window, std::stop_token /*stop*/) {
    clock_.sleep_until(clock_.now() + window);
    BackgroundLoad b = samples < script.size() ? script[samples] : quiet;
    ++samples;
    b.window_s = std::chrono::duration<double>(window).count();
    b.waited_s = 0;
    return b;
}

}  // namespace nm::test
