#include "ethtool_ctl/setting_writes.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/device/cpu_list.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/qdisc_tree.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "core/device/tuning_codec.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/journal_codec.hpp"
#include "ethtool_ctl/qdisc.hpp"
#include "ethtool_ctl/tuning_files.hpp"

namespace nm {
namespace {

constexpr std::string_view kGone = "(gone)";

std::string canonical_cpus(const std::string& list) { return format_cpu_list(parse_cpu_list(list, host_cpu_count())); }

template <typename Map>
void add_all(std::map<std::string, std::string>& out, const char* kind, const Map& values) {
    for (const auto& [name, v] : values) {
        if constexpr (std::is_same_v<typename Map::mapped_type, std::string>) out[std::string(kind) + "." + name] = v;
        else out[std::string(kind) + "." + name] = std::to_string(v);
    }
}

std::string rings_name(std::string name) {
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
}

void plan(SettingWrites& out, const std::map<std::string, std::string>& now, const std::string& key, std::string writing) {
    const auto it = now.find(key);
    out[key] = SettingWrite{it == now.end() ? std::string(kGone) : it->second, std::nullopt, std::move(writing)};
}

// Whether `now` is what a write in flight asked. The qdisc's "writing" is the root kind asked ({"kind"})
// or the whole tree being rebuilt ({"tree"}); `now` is the tree as setting_values keys it.
bool is_writing(const std::string& key, const std::string& writing, const std::string& now) {
    if (key != "qdisc") return now == writing;
    try {
        const Json asked = Json::parse(writing);
        const auto is = Json::parse(now).get<QdiscTree>();
        if (asked.contains("kind")) return is.root() != nullptr && is.root()->kind == asked.at("kind").get<std::string>();
        return qdisc_tree_back(asked.at("tree").get<QdiscTree>(), is);
    } catch (const std::exception&) {
        return false;
    }
}

uint64_t number(const std::string& key, const std::string& text) {
    try {
        size_t used = 0;
        const uint64_t n = std::stoull(text, &used);
        if (used == text.size()) return n;
    } catch (const std::exception&) {}
    throw Error(ErrorKind::Failed, "journal: " + key + " was \"" + text + "\", not a number");
}

}  // namespace

bool namespace_wide(std::string_view key) { return key.substr(0, 7) == "sysctl."; }

std::map<std::string, std::string> setting_values(const LinkState& state) {
    std::map<std::string, std::string> out;
    out["mtu"] = std::to_string(state.mtu);
    for (const auto& [name, f] : state.features) {
        if (!f.fixed) out["features." + name] = f.wanted ? "on" : "off";
    }
    const TuningState& t = state.tuning;
    add_all(out, "channels", t.channels);
    add_all(out, "rings", t.rings);
    add_all(out, "coalesce", t.coalesce);
    add_all(out, "rps", t.rps);
    add_all(out, "xps", t.xps);
    add_all(out, "irq_affinity", t.irq_affinity);
    add_all(out, "napi", t.napi);
    add_all(out, "sysctl", t.sysctl);
    if (t.qdisc_tree) out["qdisc"] = Json(*t.qdisc_tree).dump();
    return out;
}

SettingWrites planned_writes(const LinkState& now, const LinkSettings& wanted) {
    const auto values = setting_values(now);
    SettingWrites out;
    if (wanted.mtu) plan(out, values, "mtu", std::to_string(*wanted.mtu));
    for (const auto& [typed, on] : wanted.features) {
        ResolvedFeature r;
        try {
            r = resolve_feature_name(typed, now.feature_order, now.name);
        } catch (const Error&) {
            continue;  // apply() refuses it before changing anything
        }
        for (const auto& name : r.kernel_names) {
            const auto f = now.features.find(name);
            if (f != now.features.end() && !f->second.fixed) plan(out, values, "features." + name, on ? "on" : "off");
        }
    }
    const TuningRequest& w = wanted.tuning;
    for (const auto& [k, v] : w.channels) plan(out, values, "channels." + k, std::to_string(v));
    for (const auto& [k, v] : w.rings) plan(out, values, "rings." + rings_name(k), std::to_string(v));
    for (const auto& [k, v] : w.coalesce) plan(out, values, "coalesce." + k, std::to_string(v));
    const auto spread = [&](const char* kind, const std::map<std::string, std::string>& asked, const std::map<std::string, std::string>& have) {
        for (const auto& [q, list] : asked) {
            std::string cpus;
            try {
                cpus = canonical_cpus(list);
            } catch (const Error&) {
                continue;  // refused by apply() before any change
            }
            if (q != "*") {
                plan(out, values, std::string(kind) + "." + q, cpus);
                continue;
            }
            for (const auto& [each, v] : have) {
                if (!asked.count(each)) plan(out, values, std::string(kind) + "." + each, cpus);
            }
        }
    };
    spread("rps", w.rps, now.tuning.rps);
    spread("xps", w.xps, now.tuning.xps);
    spread("irq_affinity", w.irq_affinity, now.tuning.irq_affinity);
    for (const auto& [k, v] : w.napi) plan(out, values, "napi." + k, std::to_string(v));
    for (const auto& [k, v] : w.sysctl) plan(out, values, "sysctl." + k, normalize_sysctl_value(v));
    if (w.qdisc) plan(out, values, "qdisc", Json{{"kind", w.qdisc->kind}}.dump());
    if (w.qdisc_original) plan(out, values, "qdisc", Json{{"tree", *w.qdisc_original}}.dump());
    return out;
}

SettingWrites finished_writes(const SettingWrites& planned, const LinkState& before, const LinkState& after) {
    const auto was = setting_values(before), is = setting_values(after);
    SettingWrites out;
    const auto value = [](const std::map<std::string, std::string>& m, const std::string& key) {
        const auto it = m.find(key);
        return it == m.end() ? std::string(kGone) : it->second;
    };
    for (const auto& [key, w] : planned) out[key] = SettingWrite{value(was, key), value(is, key), std::nullopt};
    for (const auto& [key, v] : is) {
        if (!out.count(key) && value(was, key) != v) out[key] = SettingWrite{value(was, key), v, std::nullopt};
    }
    for (const auto& [key, v] : was) {
        if (!out.count(key) && !is.count(key)) out[key] = SettingWrite{v, std::string(kGone), std::nullopt};
    }
    return out;
}

void merge_writes(SettingWrites& into, const SettingWrites& update) {
    for (const auto& [key, u] : update) {
        auto it = into.find(key);
        if (it == into.end()) {
            if (u.written && *u.written == u.before) continue;  // nothing changed, nothing to take back
            into[key] = u;
            continue;
        }
        if (u.writing) {
            it->second.writing = u.writing;
        } else {
            it->second.written = u.written;
            it->second.writing.reset();
        }
    }
}

UndoPlan plan_undo(const SettingWrites& writes, const std::map<std::string, std::string>& now) {
    UndoPlan p;
    for (const auto& [key, w] : writes) {
        const auto it = now.find(key);
        const std::string is = it == now.end() ? std::string(kGone) : it->second;
        if (is == w.before || w.before == kGone) continue;
        const bool ours = (w.written && is == *w.written) || (w.writing && is_writing(key, *w.writing, is));
        if (!ours) {
            const std::string wrote = w.written ? *w.written : w.writing ? *w.writing : std::string("?");
            p.foreign += (p.foreign.empty() ? "" : "; ") + key + " is " + is + " (nicmatrix wrote " + wrote + "; it was " + w.before + " before)";
            continue;
        }
        if (is == kGone) continue;  // a queue or IRQ that is not there now; said by the caller's second pass
        p.keys.push_back(key);
        const auto dot = key.find('.');
        const std::string kind = key.substr(0, dot), name = dot == std::string::npos ? "" : key.substr(dot + 1);
        TuningRequest& t = p.back.tuning;
        if (key == "mtu") p.back.mtu = static_cast<uint32_t>(number(key, w.before));
        else if (kind == "features") p.back.features[name] = w.before == "on";
        else if (kind == "channels") t.channels[name] = static_cast<uint32_t>(number(key, w.before));
        else if (kind == "rings") t.rings[name] = static_cast<uint32_t>(number(key, w.before));
        else if (kind == "coalesce") t.coalesce[name] = static_cast<uint32_t>(number(key, w.before));
        else if (kind == "rps") t.rps[name] = w.before;
        else if (kind == "xps") t.xps[name] = w.before;
        else if (kind == "irq_affinity") t.irq_affinity[name] = w.before;
        else if (kind == "napi") t.napi[name] = number(key, w.before);
        else if (kind == "sysctl") t.sysctl[name] = w.before;
        else if (key == "qdisc") {
            try {
                t.qdisc_original = Json::parse(w.before).get<QdiscTree>();
            } catch (const std::exception& e) {
                throw Error(ErrorKind::Failed, std::string("journal: the original qdisc tree cannot be read: ") + e.what());
            }
            if (const std::string why = check_qdisc_tree(*t.qdisc_original); !why.empty()) {
                throw Error(ErrorKind::Failed, "journal: the original qdisc tree is not one nicmatrix rebuilds: " + why);
            }
        }
    }
    return p;
}

UndoResult undo_writes(DeviceControl& device, std::string_view ifname, const SettingWrites& writes, SettingsJournal* journal) {
    UndoResult out;
    out.report.ifname = std::string(ifname);
    std::vector<std::string> keys;
    // Two passes: queue counts first can bring back the queues whose masks were journalled.
    for (int pass = 0; pass < 2; ++pass) {
        const LinkState now = device.read(ifname);
        out.report.netns = now.netns;
        out.report.mtu_after = now.mtu;
        UndoPlan p = plan_undo(writes, setting_values(now));
        if (pass == 0) out.foreign = p.foreign;
        if (p.back.empty()) break;
        ApplyReport r = journal != nullptr ? apply_recorded(device, *journal, ifname, p.back).report : device.apply(ifname, p.back);
        out.report.ifname = r.ifname;
        out.report.path = r.path;
        out.report.features.insert(out.report.features.end(), r.features.begin(), r.features.end());
        if (r.mtu) out.report.mtu = r.mtu;
        out.report.tuning.insert(out.report.tuning.end(), r.tuning.begin(), r.tuning.end());
        out.report.active_after = r.active_after;
        out.report.mtu_after = r.mtu_after;
        keys.insert(keys.end(), p.keys.begin(), p.keys.end());
    }
    if (keys.empty()) return out;
    const auto after = setting_values(device.read(ifname));
    for (const auto& key : keys) {
        const auto it = after.find(key);
        const std::string is = it == after.end() ? std::string(kGone) : it->second;
        const std::string& was = writes.at(key).before;
        if (is != was) out.differences += " " + key + "=" + is + " (was " + was + ")";
    }
    return out;
}

RecordedApply apply_recorded(DeviceControl& device, SettingsJournal& journal, std::string_view ifname, const LinkSettings& wanted,
                             SettingWrites* partial, const LinkWait& link) {
    const LinkState before = device.read(ifname);
    const SettingWrites planned = planned_writes(before, wanted);
    journal.record(before, planned);
    RecordedApply out;
    const std::optional<CarrierState> carrier_before = link.bound.count() > 0 ? device.carrier(ifname) : std::nullopt;
    ChangeWindow window;
    try {
        window.started = std::chrono::steady_clock::now();
        out.report = device.apply(ifname, wanted);
        window.ended = std::chrono::steady_clock::now();
    } catch (...) {
        // Whatever part was made is journalled as written, so a restore takes exactly that back.
        try {
            SettingWrites made = finished_writes(planned, before, device.read(ifname));
            journal.record(before, made);
            if (partial != nullptr) *partial = std::move(made);
        } catch (const Error&) {  // NOLINT(bugprone-empty-catch): the journal keeps the writes in flight
        }
        throw;
    }
    out.writes = finished_writes(planned, before, device.read(ifname));
    journal.record(before, out.writes);
    // Only a change that changed something can reset the device.
    const bool moved = std::any_of(out.writes.begin(), out.writes.end(), [](const auto& w) { return w.second.before != w.second.written; });
    if (moved) {
        out.report.link = wait_for_link(device, ifname, carrier_before, window, !before.driver.bus_info.empty(), link);
    } else if (link.bound.count() > 0 && carrier_before && carrier_before->admin_up && carrier_before->carrier) {
        out.report.link = LinkSettle{};  // nothing moved: the link had no reason to go
    }
    return out;
}

}  // namespace nm
