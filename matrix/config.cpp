#include "matrix/config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/frame_size.hpp"
#include "core/traffic_session.hpp"
#include "matrix/stats.hpp"

namespace nm {

namespace {

// Frame sizes are checked by core's parser, which the codec in core/base cannot call.
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
void check_engine_limits(const SweepConfig& config, const std::string& source) {
    for (size_t i = 0; i < config.traffic.size(); ++i) {
        if (config.traffic[i].rfc2544) continue;   // its trials are made by run_rfc2544, checked there
        TestSpec spec = config.traffic[i].test;
        spec.duration_s = config.duration_s;
        spec.omit_s = config.omit_s;
        try {
            resolve_spec(spec, engine_cores());
        } catch (const Error& e) {
            throw usage_error(source + ": /traffic/" + std::to_string(i) + ": " + e.what());
        }
    }
    for (const auto& cell : expand_cells(config)) {
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

// The precision's metric must be one the sweep summarizes, which the codec in core/base does not know.
void check_precision_metric(const SweepConfig& config, const std::string& source) {
    if (!config.precision) return;
    const auto known = known_metrics();
    if (std::find(known.begin(), known.end(), config.precision->metric) != known.end()) return;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "\"" : ", \"") + name + "\"";
    throw usage_error(source + ": /precision/metric: expected one of " + list + ", got \"" + config.precision->metric + "\"");
}

}  // namespace

SweepConfig parse_sweep_config_text(const std::string& text, const std::string& source) {
    Json j;
    try {
        j = Json::parse(text);
    } catch (const Json::exception& e) {
        // nlohmann's message carries the line and column ("parse error at line 3, column 5: ..."); a number
        // too big for a double is an out_of_range error (found by fuzz/sweep_config_fuzz.cpp).
        std::string what = e.what();
        if (const auto at = what.find("parse error"); at != std::string::npos) {
            what = what.substr(at);
        } else if (const auto end = what.find("] "); end != std::string::npos) {
            what = what.substr(end + 2);
        }
        throw usage_error(source + ": not valid JSON: " + what);
    }
    SweepConfig config;
    try {
        config = parse_sweep_config(j);
    } catch (const Error& e) {
        throw usage_error(source + ": " + e.what());
    }
    check_rfc2544_entries(config, source);
    check_engine_limits(config, source);
    check_precision_metric(config, source);
    return config;
}

SweepConfig load_sweep_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error(path + ": cannot read the sweep config (no such file, or no permission)");
    std::ostringstream text;
    text << in.rdbuf();
    auto config = parse_sweep_config_text(text.str(), path);
    if (config.name.empty()) config.name = std::filesystem::path(path).stem().string();
    return config;
}

bool excludes(const ExcludeRule& rule, const CellSpec& cell) {
    if (rule.offloads && *rule.offloads != cell.offloads) return false;
    if (rule.mtu && *rule.mtu != cell.mtu) return false;
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
    std::vector<CellSpec> cells;
    for (size_t p = 0; p < config.offloads.size(); ++p) {
        for (size_t m = 0; m < config.mtu.size(); ++m) {
            for (size_t t = 0; t < config.traffic.size(); ++t) {
                CellSpec cell;
                cell.profile_index = p;
                cell.mtu_index = m;
                cell.traffic_index = t;
                cell.offloads = config.offloads[p].name;
                cell.features_requested = config.offloads[p].features;
                cell.mtu = config.mtu[m];
                cell.traffic = config.traffic[t];
                cell.key = cell.offloads + "/mtu" + std::to_string(cell.mtu) + "/" + cell.traffic.name;
                const bool excluded = std::any_of(config.exclude.begin(), config.exclude.end(),
                                                  [&](const ExcludeRule& r) { return excludes(r, cell); });
                if (!excluded) cells.push_back(std::move(cell));
            }
        }
    }
    return cells;
}

}  // namespace nm
