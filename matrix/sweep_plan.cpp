#include "matrix/sweep_plan.hpp"

#include <algorithm>
#include <set>
#include <type_traits>

#include "matrix/config.hpp"
#include "matrix/stats.hpp"

namespace nm {

size_t SweepPlan::index_of(const std::string& key) const {
    return static_cast<size_t>(std::find_if(cells.begin(), cells.end(), [&](const CellSpec& c) { return c.key == key; }) - cells.begin());
}

SweepPlan make_sweep_plan(SweepConfig config) {
    SweepPlan plan;
    plan.cells = expand_cells(config);
    plan.config = std::move(config);
    return plan;
}

bool applies_to(ApplyTo to, EndRole role) {
    switch (role) {
        case EndRole::Local: return to == ApplyTo::Both || to == ApplyTo::Local;
        case EndRole::Remote: return to == ApplyTo::Both || to == ApplyTo::Peer;
        case EndRole::Dut: return to == ApplyTo::Dut;
    }
    return false;
}

ApplyTo axis_applies_to(const SweepConfig& config, const std::string& axis) {
    const auto it = config.apply_axes.find(axis);
    return it == config.apply_axes.end() ? ApplyTo::Both : it->second;
}

bool uses_dut(const SweepConfig& config) {
    bool axes = false;
    for (const auto& [axis, values] : config.axes) axes = axes || axis_applies_to(config, axis) == ApplyTo::Dut;
    return axes || config.apply_offloads_to == ApplyTo::Dut || config.apply_mtu_to == ApplyTo::Dut;
}

LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, EndRole role) {
    LinkSettings s;
    if (applies_to(config.apply_mtu_to, role)) s.mtu = cell.mtu;
    if (applies_to(config.apply_offloads_to, role)) s.features = cell.features_requested;
    for (const auto& [axis, index] : cell.axis_index) {
        const auto it = config.axes.find(axis);
        if (it == config.axes.end() || index >= it->second.size() || !applies_to(axis_applies_to(config, axis), role)) continue;
        const TuningRequest& t = it->second[index].tuning;
        TuningRequest& out = s.tuning;
        out.channels.insert(t.channels.begin(), t.channels.end());
        out.rings.insert(t.rings.begin(), t.rings.end());
        out.coalesce.insert(t.coalesce.begin(), t.coalesce.end());
        out.rps.insert(t.rps.begin(), t.rps.end());
        out.xps.insert(t.xps.begin(), t.xps.end());
        out.irq_affinity.insert(t.irq_affinity.begin(), t.irq_affinity.end());
        out.napi.insert(t.napi.begin(), t.napi.end());
        out.sysctl.insert(t.sysctl.begin(), t.sysctl.end());
        if (t.qdisc) out.qdisc = t.qdisc;
    }
    return s;
}

LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, bool remote) {
    return cell_settings(config, cell, remote ? EndRole::Remote : EndRole::Local);
}

bool sweep_changes_end(const SweepPlan& plan, bool remote) {
    return std::any_of(plan.cells.begin(), plan.cells.end(), [&](const CellSpec& c) { return !cell_settings(plan.config, c, remote).empty(); });
}

double planned_seconds(const SweepConfig& config, const CellSpec& cell) {
    if (const auto& r = cell.traffic.rfc2544) {
        // A table: per size about half the trial budget (the search often ends early) plus the
        // confirmation, each trial with some setup time.
        const double sizes = r->frames.empty() ? 8.0 : static_cast<double>(r->frames.size());
        return sizes * (r->max_trials / 2.0 + 2) * (r->trial_s + 0.1) + config.cooldown_s;
    }
    return static_cast<double>(planned_repetitions(config)) * (config.omit_s + config.duration_s + config.cooldown_s);
}

uint32_t planned_repetitions(const SweepConfig& config) {
    if (!config.precision) return config.repetitions;
    const auto& p = *config.precision;
    const auto needed = static_cast<uint32_t>(repetitions_for_confidence(p.confidence));
    return std::clamp(std::max(p.min_repetitions, needed), p.min_repetitions, p.max_repetitions);
}

std::vector<CellPlan> plan_sweep(const SweepPlan& plan, const std::optional<ResultsFile>& resume) {
    std::set<std::string> done;
    if (resume) {
        for (const auto& c : resume->cells) done.insert(c.spec.key);
    }
    std::vector<CellPlan> out;
    for (const auto& cell : plan.cells) {
        out.push_back({cell, cell_settings(plan.config, cell, false), cell_settings(plan.config, cell, true),
                       cell_settings(plan.config, cell, EndRole::Dut), done.count(cell.key) > 0});
    }
    return out;
}

std::string describe_settings(const LinkSettings& settings) {
    if (settings.empty()) return "(unchanged)";
    std::string out;
    if (settings.mtu) out = "mtu=" + std::to_string(*settings.mtu);
    for (const auto& [name, on] : settings.features) out += (out.empty() ? "" : " ") + name + (on ? "=on" : "=off");
    const TuningRequest& t = settings.tuning;
    const auto add = [&](const std::string& kind, const auto& m) {
        for (const auto& [k, v] : m) {
            out += (out.empty() ? "" : " ") + kind + "." + k + "=";
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
                out += v;
            } else {
                out += std::to_string(v);
            }
        }
    };
    add("channels", t.channels);
    add("rings", t.rings);
    add("coalesce", t.coalesce);
    add("rps", t.rps);
    add("xps", t.xps);
    add("irq_affinity", t.irq_affinity);
    add("napi", t.napi);
    add("sysctl", t.sysctl);
    if (t.qdisc) out += (out.empty() ? "" : " ") + std::string("qdisc=") + t.qdisc->kind;
    return out;
}

}  // namespace nm
