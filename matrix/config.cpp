#include "matrix/config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/json_text.hpp"
#include "core/device/cpu_list.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/rfc2544/frame_size.hpp"
#include "core/session/traffic_session.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/qdisc.hpp"
#include "ethtool_ctl/tuning_files.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/stats.hpp"

namespace nm {

namespace {

// Frame sizes are checked by core's parser, which the config codec in matrix/model cannot call.
void check_rfc2544_entries(const SweepConfig& config, const std::string& source) {
    for (size_t i = 0; i < config.traffic.size(); ++i) {
        const auto& spec = config.traffic[i].rfc2544;
        if (!spec) continue;
        for (size_t k = 0; k < spec->frames.size(); ++k) {
            try {
                parse_frame_size(spec->frames[k]);
            } catch (const Error& e) {
                throw usage_error(source + ": /traffic/" + std::to_string(i) + "/frames/" + std::to_string(k) + ": " + e.what());
            }
        }
    }
}

// The engine's own checks (resolve_spec) on every test of the sweep as the runner will give it, so a
// config the engine would refuse fails here, before anything is journaled or changed, and not in every
// cell. The GSO rule needs the path MTU: each cell's MTU is the MTU its path will have.
void check_engine_limits(const SweepPlan& plan, const std::string& source) {
    const SweepConfig& config = plan.config;
    for (size_t i = 0; i < config.traffic.size(); ++i) {
        if (config.traffic[i].rfc2544) continue;  // its trials are made by run_rfc2544, checked there
        TestSpec spec = config.traffic[i].test;
        spec.duration_s = config.duration_s;
        spec.omit_s = config.omit_s;
        try {
            resolve_spec(spec, engine_cores());
        } catch (const Error& e) {
            throw usage_error(source + ": /traffic/" + std::to_string(i) + ": " + e.what());
        }
    }
    for (const auto& cell : plan.cells) {
        if (cell.traffic.rfc2544) continue;
        TestSpec spec = cell.traffic.test;
        spec.duration_s = config.duration_s;
        spec.omit_s = config.omit_s;
        try {
            resolve_spec(spec, engine_cores(), UdpPath{cell.mtu, 28, ""});
        } catch (const Error& e) {
            throw usage_error(source + ": /traffic/" + std::to_string(cell.traffic_index) + ": in cell " + cell.key + ": " + e.what());
        }
    }
}

// The precision's metric must be one the sweep summarizes, which the config codec in matrix/model does not know.
void check_precision_metric(const SweepConfig& config, const std::string& source) {
    if (!config.precision || config.precision->metric.empty()) return;
    const auto known = known_metrics();
    if (std::find(known.begin(), known.end(), config.precision->metric) != known.end()) return;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "\"" : ", \"") + name + "\"";
    throw usage_error(source + ": /precision/metric: expected one of " + list + ", got \"" + config.precision->metric + "\"");
}

// What only this host can say, checked before anything changes: a CPU list naming a CPU it does not have,
// a qdisc kind (or parameters) its kernel does not take (asked of a scratch namespace's loopback).
void check_tuning_on_host(const SweepConfig& config, const std::string& source) {
    const unsigned cpus = host_cpu_count();
    const auto fail = [&](const std::string& pointer, const std::string& what) { throw usage_error(source + ": " + pointer + ": " + what); };
    for (const auto& [axis, values] : config.axes) {
        for (size_t i = 0; i < values.size(); ++i) {
            const TuningRequest& t = values[i].tuning;
            const std::string at = "/" + axis + "/" + std::to_string(i);
            const auto& lists = axis == "rps" ? t.rps : axis == "xps" ? t.xps : t.irq_affinity;
            if (axis == "rps" || axis == "xps" || axis == "irq_affinity") {
                for (const auto& [q, list] : lists) {
                    try {
                        parse_cpu_list(list, cpus);
                    } catch (const Error& e) {
                        fail(q == "*" ? at : at + "/" + axis + "/" + q, e.what());
                    }
                }
            }
            if (t.qdisc) {
                try {
                    probe_qdisc(*t.qdisc);
                } catch (const Error& e) {
                    if (e.kind() != ErrorKind::Usage) continue;  // no CAP_NET_ADMIN: the sweep's own check says so later
                    std::string what = e.what();
                    std::string field = "kind";
                    if (const auto colon = what.find(": "); colon != std::string::npos && colon < 16) {
                        field = what.substr(0, colon);
                        what = what.substr(colon + 2);
                    }
                    fail(at + "/" + field, what);
                }
            }
        }
    }
}

}  // namespace

SweepPlan parse_sweep_plan_text(const std::string& text, const std::string& source) {
    const Json j = parse_json_text(text, source);
    SweepConfig config;
    try {
        config = parse_sweep_config(j);
    } catch (const Error& e) {
        throw usage_error(source + ": " + e.what());
    }
    check_rfc2544_entries(config, source);
    SweepPlan plan = make_sweep_plan(std::move(config));
    check_engine_limits(plan, source);
    check_precision_metric(plan.config, source);
    check_tuning_on_host(plan.config, source);
    return plan;
}

SweepConfig parse_sweep_config_text(const std::string& text, const std::string& source) { return parse_sweep_plan_text(text, source).config; }

SweepPlan load_sweep_plan(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error(path + ": cannot read the sweep config (no such file, or no permission)");
    std::ostringstream text;
    text << in.rdbuf();
    auto plan = parse_sweep_plan_text(text.str(), path);
    // The cells do not depend on the config's name.
    if (plan.config.name.empty()) plan.config.name = std::filesystem::path(path).stem().string();
    return plan;
}

SweepConfig load_sweep_config(const std::string& path) { return load_sweep_plan(path).config; }

bool excludes(const ExcludeRule& rule, const CellSpec& cell) {
    if (rule.offloads && *rule.offloads != cell.offloads) return false;
    if (rule.mtu && *rule.mtu != cell.mtu) return false;
    for (const auto& [axis, name] : rule.axes) {
        const auto it = cell.axes.find(axis);
        if (it == cell.axes.end() || it->second != name) return false;
    }
    if (!rule.traffic.empty()) {
        const Json fields = cell.traffic;
        for (const auto& [key, value] : rule.traffic.items()) {
            // Numbers compare by value: a rule's 10 matches a stored 10.0.
            // A field the cell's test does not have (an rfc2544 table has no write_size) does not match.
            if (!fields.contains(key)) return false;
            const auto& have = fields.at(key);
            const bool equal = (have.is_number() && value.is_number()) ? have.get<double>() == value.get<double>() : have == value;
            if (!equal) return false;
        }
    }
    return true;
}

std::vector<CellSpec> expand_cells(const SweepConfig& config) {
    // The tuning axes the config has, in kTuningAxes order: the product nests them between MTU and traffic.
    std::vector<const std::pair<const std::string, std::vector<TuningProfile>>*> axes;
    for (const char* name : kTuningAxes) {
        const auto it = config.axes.find(name);
        if (it != config.axes.end() && !it->second.empty()) axes.push_back(&*it);
    }
    std::vector<std::vector<size_t>> combos = {{}};
    for (const auto* axis : axes) {
        std::vector<std::vector<size_t>> next;
        for (const auto& c : combos) {
            for (size_t i = 0; i < axis->second.size(); ++i) {
                auto more = c;
                more.push_back(i);
                next.push_back(std::move(more));
            }
        }
        combos = std::move(next);
    }
    std::vector<CellSpec> cells;
    for (size_t p = 0; p < config.offloads.size(); ++p) {
        for (size_t m = 0; m < config.mtu.size(); ++m) {
            for (const auto& combo : combos) {
                for (size_t t = 0; t < config.traffic.size(); ++t) {
                    CellSpec cell;
                    cell.profile_index = p;
                    cell.mtu_index = m;
                    cell.traffic_index = t;
                    cell.offloads = config.offloads[p].name;
                    cell.features_requested = config.offloads[p].features;
                    cell.mtu = config.mtu[m];
                    cell.traffic = config.traffic[t];
                    cell.key = cell.offloads + "/mtu" + std::to_string(cell.mtu) + "/";
                    for (size_t a = 0; a < axes.size(); ++a) {
                        cell.axis_index[axes[a]->first] = combo[a];
                        cell.axes[axes[a]->first] = axes[a]->second[combo[a]].name;
                        cell.key += axes[a]->second[combo[a]].name + "/";
                    }
                    cell.key += cell.traffic.name;
                    const bool excluded =
                        std::any_of(config.exclude.begin(), config.exclude.end(), [&](const ExcludeRule& r) { return excludes(r, cell); });
                    if (!excluded) cells.push_back(std::move(cell));
                }
            }
        }
    }
    return cells;
}

}  // namespace nm
