// JSON of results files. They are written by nicmatrix and read back tolerantly: fields added later get
// their defaults, and files of older layouts read as they were meant (old metric names are renamed).
// A results file's config is read as strictly as a config file (parse_sweep_config).
#include <string>

#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/json_node.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"

namespace nm {

using codec::opt;
using codec::req;

namespace {

constexpr std::pair<CellStatus, const char*> kCellStatuses[] = {{CellStatus::Ok, "ok"},
                                                                {CellStatus::Infeasible, "infeasible"},
                                                                {CellStatus::Duplicate, "duplicate"},
                                                                {CellStatus::Failed, "failed"},
                                                                {CellStatus::Stalled, "stalled"},
                                                                {CellStatus::PathMtuBlackhole, "path_mtu_blackhole"},
                                                                {CellStatus::UnreachableAfterChange, "unreachable_after_change"},
                                                                {CellStatus::LinkLost, "link_lost"}};

}  // namespace

void to_json(Json& j, const CellStatus& v) { j = sweep_json::enum_name(v, kCellStatuses); }
void from_json(const Json& j, CellStatus& v) { v = sweep_json::enum_value(sweep_json::Node(j, "/status"), kCellStatuses); }

void to_json(Json& j, const CellResult& v) {
    Json applied = Json::object();
    if (v.applied_local) applied["local"] = *v.applied_local;
    if (v.applied_remote) applied["remote"] = *v.applied_remote;
    if (!v.applied_dut.empty()) applied["dut"] = v.applied_dut;
    j = Json{{"key", v.spec.key},
             {"params",
              {{"offloads", v.spec.offloads},
               {"features_requested", v.spec.features_requested},
               {"mtu", v.spec.mtu},
               {"traffic", v.spec.traffic.name},
               {"test", v.spec.traffic}}},
             {"applied", applied},
             {"status", v.status},
             {"error", v.error},
             {"duplicate_of", v.duplicate_of.empty() ? Json(nullptr) : Json(v.duplicate_of)},
             {"overhead_s", v.overhead_s},
             {"runs", v.runs},
             {"repetitions_run", v.runs.size()},
             {"precision_met", v.precision_met ? Json(*v.precision_met) : Json(nullptr)},
             {"summary", v.summary},
             {"modes", v.modes ? Json(*v.modes) : Json(nullptr)}};
    if (v.rfc2544) j["rfc2544"] = *v.rfc2544;
    for (const auto& [axis, name] : v.spec.axes) j["params"][axis] = name;
}

void from_json(const Json& j, CellResult& v) {
    j.at("key").get_to(v.spec.key);
    const auto& params = j.at("params");
    params.at("offloads").get_to(v.spec.offloads);
    params.at("features_requested").get_to(v.spec.features_requested);
    req(params, "mtu", v.spec.mtu);
    v.spec.traffic = TrafficEntry{};
    params.at("traffic").get_to(v.spec.traffic.name);
    for (const char* axis : kTuningAxes) {
        if (const auto it = params.find(axis); it != params.end() && it->is_string()) v.spec.axes[axis] = it->get<std::string>();
    }
    const auto& test = params.at("test");
    if (test.value("test", "") == "rfc2544") {
        v.spec.traffic.rfc2544 = test.get<Rfc2544Spec>();
        v.spec.traffic.test.protocol = Protocol::Udp;
        v.spec.traffic.test.streams = v.spec.traffic.rfc2544->streams;
    } else {
        test.get_to(v.spec.traffic.test);
    }
    const auto& applied = j.at("applied");
    if (applied.contains("local")) v.applied_local = applied.at("local").get<EndSettings>();
    if (applied.contains("remote")) v.applied_remote = applied.at("remote").get<EndSettings>();
    if (applied.contains("dut")) v.applied_dut = applied.at("dut").get<std::map<std::string, EndSettings>>();
    j.at("status").get_to(v.status);
    v.error = j.value("error", "");
    if (const auto it = j.find("duplicate_of"); it != j.end() && it->is_string()) v.duplicate_of = it->get<std::string>();
    v.overhead_s = j.value("overhead_s", 0.0);
    j.at("runs").get_to(v.runs);
    j.at("summary").get_to(v.summary);
    // Files written before the rename summarize the engines' CPU per KB as service_demand_us_per_kb.
    if (const auto old = v.summary.find("service_demand_us_per_kb"); old != v.summary.end()) {
        v.summary.try_emplace("engine_service_demand_us_per_kb", old->second);
        v.summary.erase(old);
    }
    if (const auto it = j.find("precision_met"); it != j.end() && it->is_boolean()) v.precision_met = it->get<bool>();
    if (const auto it = j.find("rfc2544"); it != j.end() && !it->is_null()) v.rfc2544 = it->get<Rfc2544Result>();
    if (const auto it = j.find("modes"); it != j.end() && it->is_object()) v.modes = it->get<CellModes>();
}

void to_json(Json& j, const CellModes& v) {
    Json modes = Json::array();
    for (const auto& m : v.modes) {
        Json mode = m.summary;
        mode["runs"] = m.runs;
        mode["precision_met"] = m.precision_met ? Json(*m.precision_met) : Json(nullptr);
        mode["placement"] = m.placement.empty() ? Json(nullptr) : Json(m.placement);
        mode["placement_runs"] = m.placement_runs;
        modes.push_back(std::move(mode));
    }
    j = Json{{"metric", v.metric},
             {"method", v.method},
             {"modes", std::move(modes)},
             {"placement_by", v.placement_by.empty() ? Json(nullptr) : Json(v.placement_by)},
             {"explanation", v.explanation}};
}

void from_json(const Json& j, CellModes& v) {
    j.at("metric").get_to(v.metric);
    v.method = j.value("method", "");
    for (const auto& m : j.at("modes")) {
        ValueMode mode;
        m.get_to(mode.summary);
        opt(m, "runs", mode.runs);
        if (const auto it = m.find("precision_met"); it != m.end() && it->is_boolean()) mode.precision_met = it->get<bool>();
        if (const auto it = m.find("placement"); it != m.end() && it->is_string()) mode.placement = it->get<std::string>();
        opt(m, "placement_runs", mode.placement_runs);
        v.modes.push_back(std::move(mode));
    }
    if (const auto it = j.find("placement_by"); it != j.end() && it->is_string()) v.placement_by = it->get<std::string>();
    v.explanation = j.value("explanation", "");
}

void to_json(Json& j, const ResultsFile& v) {
    j = Json{{"schema", v.schema},
             {"tool", v.tool},
             {"run",
              {{"started", v.run.started},
               {"finished", v.run.finished.empty() ? Json(nullptr) : Json(v.run.finished)},
               {"command", v.run.command},
               {"config_file", v.run.config_file},
               {"config", v.run.config},
               {"order", {{"mode", v.run.order.mode}, {"seed", v.run.order.seed ? Json(*v.run.order.seed) : Json(nullptr)}}},
               {"time_budget_s", v.run.time_budget_s ? Json(*v.run.time_budget_s) : Json(nullptr)},
               {"budget_reached", v.run.budget_reached}}},
             {"hosts", {{"local", v.local}, {"remote", v.remote}}},
             {"cells", v.cells}};
    if (!v.run.resumed.empty()) j["run"]["resumed"] = v.run.resumed;
    if (v.run.json_stream) j["run"]["json_stream"] = *v.run.json_stream;
}

void from_json(const Json& j, ResultsFile& v) {
    const auto schema = j.at("schema").get<std::string>();
    if (schema != kResultsSchema) {
        throw usage_error(std::string("/schema: expected \"") + kResultsSchema + "\", got \"" + schema + "\"");
    }
    v.schema = schema;
    j.at("tool").get_to(v.tool);
    const auto& run = j.at("run");
    run.at("started").get_to(v.run.started);
    if (const auto it = run.find("finished"); it != run.end() && it->is_string()) v.run.finished = it->get<std::string>();
    v.run.command = run.value("command", "");
    v.run.config_file = run.value("config_file", "");
    v.run.config = parse_sweep_config(run.at("config"));
    // Before the order was recorded every sweep ran its cells one after the other.
    v.run.order = OrderInfo{};
    if (const auto it = run.find("order"); it != run.end() && it->is_object()) {
        it->at("mode").get_to(v.run.order.mode);
        if (const auto seed = it->find("seed"); seed != it->end() && seed->is_number_unsigned()) v.run.order.seed = seed->get<uint64_t>();
    }
    if (const auto it = run.find("time_budget_s"); it != run.end() && it->is_number()) v.run.time_budget_s = it->get<double>();
    v.run.budget_reached = run.value("budget_reached", false);
    if (const auto it = run.find("resumed"); it != run.end() && it->is_array()) it->get_to(v.run.resumed);
    if (const auto it = run.find("json_stream"); it != run.end() && it->is_object()) v.run.json_stream = it->get<JsonStreamStats>();
    j.at("hosts").at("local").get_to(v.local);
    j.at("hosts").at("remote").get_to(v.remote);
    j.at("cells").get_to(v.cells);
}

}  // namespace nm
