// JSON of a sweep config. A config is what users write by hand, so it is read field by field with the JSON
// pointer of every value at hand (json_node.hpp): each error says where (`/traffic/1/streams`), what was
// expected and what was found, and unknown keys are errors (a typo must not silently become a default).
// Traffic entries and tuning axes are read in files of their own (sweep_config_parts.hpp). The keys of
// the top level, `precision` and `interference`, and the range and wording of those that are one member,
// come from their field tables (sweep_config_fields.hpp); the keys that are not are read here by hand.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <type_traits>

#include "matrix/model/json_node.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_config_fields.hpp"
#include "matrix/model/sweep_config_parts.hpp"

namespace nm {
namespace sweep_json {

namespace {

constexpr uint32_t kMinMtu = 68;  // IPv4's minimum (RFC 791)
constexpr uint32_t kMaxMtu = 65535;

constexpr std::pair<ApplyTo, const char*> kApplyTo[] = {
    {ApplyTo::Local, "local"}, {ApplyTo::Peer, "peer"}, {ApplyTo::Both, "both"}, {ApplyTo::Dut, "dut"}};
constexpr std::pair<SweepOrder, const char*> kSweepOrders[] = {{SweepOrder::Shuffled, "shuffled"}, {SweepOrder::Sequential, "sequential"}};

// The keys of `record`'s table that are one member each, those `n` has: a missing required one says
// "missing; expected <help>", a wrong value "expected <expected>, got ...".
template <typename Record>
void read_table_fields(const Node& n, Record& record) {
    for_each_sweep_field(record, [&](const SweepConfigField& f, auto& member) {
        using T = std::decay_t<decltype(member)>;
        if (!n.has(f.key)) {
            if (f.options & kSweepKeyRequired) n.required(f.key, f.help);
            return;
        }
        const Node v = n.child(f.key);
        if constexpr (std::is_same_v<T, bool>) {
            if (!v.json().is_boolean()) v.fail(f.expected);
            member = v.json().template get<bool>();
        } else if constexpr (std::is_integral_v<T>) {
            const auto min = static_cast<uint64_t>(f.min) + ((f.options & kSweepKeyAboveMin) ? 1 : 0);
            member = static_cast<T>(v.integer(min, static_cast<uint64_t>(f.max), f.expected));
        } else {
            member = v.number(f.min, f.max, (f.options & kSweepKeyAboveMin) != 0, f.expected);
        }
    });
}

// The members of `record`'s table, as a JSON object.
template <typename Record>
Json table_fields_json(const Record& record) {
    Json j = Json::object();
    for_each_sweep_field(record, [&](const SweepConfigField& f, const auto& member) { j[f.key] = member; });
    return j;
}

// A record whose keys are its table's: unknown keys refused (`what` says what the object is), the
// table's members read; the caller reads the hand-coded keys.
template <typename Record>
Record parse_table_record(const Node& n, const std::string& what) {
    n.expect_object(sweep_record_keys<Record>(), what);
    Record r;
    read_table_fields(n, r);
    return r;
}

PrecisionSpec parse_precision(const Node& n) {
    auto p = parse_table_record<PrecisionSpec>(
        n, "a precision {\"ci_pct\": 5, \"confidence\": 95, \"min_repetitions\": 3, \"max_repetitions\": 12, \"metric\": ...}");
    if (p.max_repetitions < p.min_repetitions) {
        (n.has("max_repetitions") ? n.child("max_repetitions") : n.child("min_repetitions"))
            .fail_message("max_repetitions (" + std::to_string(p.max_repetitions) + ") is below min_repetitions (" +
                          std::to_string(p.min_repetitions) + ")");
    }
    // The name is checked against the metrics the sweep summarizes by matrix/config.cpp.
    if (n.has("metric")) p.metric = n.child("metric").string("a metric name such as \"throughput_bps\"");
    // The engines' CPU per KB was called service_demand_us_per_kb before netperf's per-end figures came.
    if (p.metric == "service_demand_us_per_kb") p.metric = "engine_service_demand_us_per_kb";
    return p;
}

InterferenceSpec parse_interference(const Node& n) {
    return parse_table_record<InterferenceSpec>(
        n, "an interference check {\"max_busy_pct\": 20, \"max_steal_pct\": 5, \"sample_ms\": 200, \"max_wait_s\": 2}");
}

// `"affinity": {"client": [0], "server": [1]}`: CPU numbers; whether they exist is checked on the host
// that pins them (matrix/sweep_request.cpp for this host, the server for its own).
AffinitySpec parse_affinity(const Node& n) {
    n.expect_object({"client", "server"}, "CPUs to pin the engine threads to {\"client\": [0], \"server\": [1]}");
    AffinitySpec a;
    const auto cpus = [](const Node& list) {
        std::vector<uint32_t> out;
        for (const auto& c : list.array("an array of CPU numbers", false)) {
            const auto cpu = static_cast<uint32_t>(c.integer(0, 8191, "a CPU number from 0 to 8191"));
            if (std::find(out.begin(), out.end(), cpu) != out.end()) c.fail("a CPU not listed before");
            out.push_back(cpu);
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    if (n.has("client")) a.client = cpus(n.child("client"));
    if (n.has("server")) a.server = cpus(n.child("server"));
    return a;
}

// `offloads`: named profiles of feature -> "on"/"off", each name once.
void read_offloads(const Node& root, SweepConfig& c) {
    std::set<std::string> profile_names;
    for (const auto& p : root.required("offloads", "a non-empty array of offload profiles")
                             .array("a non-empty array of offload profiles ({\"name\": ..., \"features\": {...}})", true)) {
        p.expect_object({"name", "features"}, "an offload profile {\"name\": ..., \"features\": {\"tso\": \"off\", ...}}");
        OffloadProfile profile;
        profile.name = p.required("name", "a profile name").name();
        if (!profile_names.insert(profile.name).second) p.child("name").fail("a profile name not used before");
        const auto features = p.required("features", "an object of feature name -> \"on\"/\"off\"");
        if (!features.json().is_object()) features.fail("an object of feature name -> \"on\"/\"off\"");
        for (const auto& [name, value] : features.json().items()) {
            const auto f = features.child(name);
            if (name.empty()) f.fail_message("a feature name must not be empty");
            profile.features[name] = f.on_off();
        }
        c.offloads.push_back(std::move(profile));
    }
}

// `mtu` and `traffic`: the other two axes every sweep has, each value once (a test by its name).
void read_mtus_and_traffic(const Node& root, SweepConfig& c) {
    for (const auto& m : root.required("mtu", "a non-empty array of MTUs").array("a non-empty array of MTUs in bytes", true)) {
        const auto mtu = static_cast<uint32_t>(m.integer(kMinMtu, kMaxMtu, "an MTU in bytes from 68 to 65535"));
        if (std::find(c.mtu.begin(), c.mtu.end(), mtu) != c.mtu.end()) m.fail("an MTU not listed before");
        c.mtu.push_back(mtu);
    }

    std::map<std::string, std::string> traffic_names;  // name -> pointer of its entry
    for (const auto& t : root.required("traffic", "a non-empty array of tests").array("a non-empty array of tests", true)) {
        auto entry = parse_traffic(t);
        if (const auto [it, fresh] = traffic_names.emplace(entry.name, t.pointer()); !fresh) {
            (t.has("name") ? t.child("name") : t)
                .fail_message("the test name \"" + entry.name + "\" is already used by " + it->second + "; give each test a unique \"name\"");
        }
        c.traffic.push_back(std::move(entry));
    }
}

// How each cell is measured: its times, repetitions and profile (the table's), precision, order,
// interference check, affinity.
void read_measuring(const Node& root, SweepConfig& c) {
    read_table_fields(root, c);
    if (root.has("precision")) c.precision = parse_precision(root.child("precision"));
    if (root.has("order")) c.order = enum_value(root.child("order"), kSweepOrders);
    if (root.has("interference")) c.interference = parse_interference(root.child("interference"));
    if (root.has("affinity")) c.affinity = parse_affinity(root.child("affinity"));
}

// `apply_to`: one end for every axis ("local", "peer", "both", "dut"), or one per axis.
void read_apply_to(const Node& a, SweepConfig& c) {
    if (a.json().is_string()) {
        c.apply_offloads_to = c.apply_mtu_to = enum_value(a, kApplyTo);
        for (const auto& [axis, values] : c.axes) c.apply_axes[axis] = c.apply_offloads_to;
    } else {
        std::vector<std::string> keys = {"offloads", "mtu"};
        keys.insert(keys.end(), std::begin(kTuningAxes), std::end(kTuningAxes));
        a.expect_object(keys, "\"local\", \"peer\", \"both\" or {\"offloads\": ..., \"mtu\": ..., \"rps\": ...}");
        if (a.has("offloads")) c.apply_offloads_to = enum_value(a.child("offloads"), kApplyTo);
        if (a.has("mtu")) c.apply_mtu_to = enum_value(a.child("mtu"), kApplyTo);
        for (const char* axis : kTuningAxes) {
            if (a.has(axis)) c.apply_axes[axis] = enum_value(a.child(axis), kApplyTo);
        }
    }
}

// One rule of `exclude`: values of the axes already read (a profile, an MTU, a tuning value by name) and
// some of a test's fields.
ExcludeRule read_exclude_rule(const Node& r, const SweepConfig& c) {
    std::vector<std::string> rule_keys = {"offloads", "mtu", "traffic"};
    rule_keys.insert(rule_keys.end(), std::begin(kTuningAxes), std::end(kTuningAxes));
    r.expect_object(rule_keys, "an exclusion rule {\"offloads\", \"mtu\", \"traffic\", or a tuning axis: value name} (any of them)");
    if (r.json().empty()) r.fail("at least one of \"offloads\", \"mtu\", \"traffic\"");
    ExcludeRule rule;
    if (r.has("offloads")) {
        std::set<std::string> profile_names;
        for (const auto& p : c.offloads) profile_names.insert(p.name);
        rule.offloads = r.child("offloads").string();
        if (!profile_names.count(*rule.offloads)) {
            r.child("offloads").fail("one of the profile names " + join_quoted({profile_names.begin(), profile_names.end()}));
        }
    }
    if (r.has("mtu")) {
        rule.mtu = static_cast<uint32_t>(r.child("mtu").integer(kMinMtu, kMaxMtu, "an MTU from the mtu axis"));
        if (std::find(c.mtu.begin(), c.mtu.end(), *rule.mtu) == c.mtu.end()) r.child("mtu").fail("an MTU from the mtu axis");
    }
    for (const char* axis : kTuningAxes) {
        if (!r.has(axis)) continue;
        const auto v = r.child(axis);
        const std::string name = v.string("a value name of the " + std::string(axis) + " axis");
        const auto it = c.axes.find(axis);
        std::vector<std::string> names;
        if (it != c.axes.end()) {
            for (const auto& p : it->second) names.push_back(p.name);
        }
        if (std::find(names.begin(), names.end(), name) == names.end())
            v.fail("one of the " + std::string(axis) + " value names " + join_quoted(names));
        rule.axes[axis] = name;
    }
    if (r.has("traffic")) {
        const auto t = r.child("traffic");
        t.expect_object(traffic_match_keys(), "an object with some of a test's fields");
        for (const auto& [key, value] : t.json().items()) rule.traffic[key == "length" ? "write_size" : key] = value;
    }
    return rule;
}

}  // namespace
}  // namespace sweep_json

void to_json(Json& j, const SweepOrder& v) { j = sweep_json::enum_name(v, sweep_json::kSweepOrders); }
void from_json(const Json& j, SweepOrder& v) { v = sweep_json::enum_value(sweep_json::Node(j, "/order"), sweep_json::kSweepOrders); }

void to_json(Json& j, const PrecisionSpec& v) {
    j = sweep_json::table_fields_json(v);
    if (!v.metric.empty()) j["metric"] = v.metric;
}

void to_json(Json& j, const InterferenceSpec& v) { j = sweep_json::table_fields_json(v); }

void to_json(Json& j, const ApplyTo& v) { j = sweep_json::enum_name(v, sweep_json::kApplyTo); }
void from_json(const Json& j, ApplyTo& v) { v = sweep_json::enum_value(sweep_json::Node(j, "/apply_to"), sweep_json::kApplyTo); }

void to_json(Json& j, const SweepConfig& v) {
    Json profiles = Json::array();
    for (const auto& p : v.offloads) {
        Json features = Json::object();
        for (const auto& [name, on] : p.features) features[name] = on ? "on" : "off";
        profiles.push_back({{"name", p.name}, {"features", features}});
    }
    Json exclude = Json::array();
    for (const auto& r : v.exclude) {
        Json rule = Json::object();
        if (r.offloads) rule["offloads"] = *r.offloads;
        if (r.mtu) rule["mtu"] = *r.mtu;
        if (!r.traffic.empty()) rule["traffic"] = r.traffic;
        for (const auto& [axis, name] : r.axes) rule[axis] = name;
        exclude.push_back(rule);
    }
    j = sweep_json::table_fields_json(v);
    // A config without a profile is written as before profiles existed.
    if (!v.profile) {
        j.erase("profile");
        j.erase("profile_hz");
    }
    j["offloads"] = profiles;
    j["mtu"] = v.mtu;
    j["traffic"] = v.traffic;
    j["apply_to"] = Json{{"offloads", v.apply_offloads_to}, {"mtu", v.apply_mtu_to}};
    j["exclude"] = exclude;
    j["order"] = v.order;
    j["interference"] = v.interference;
    if (v.precision) j["precision"] = *v.precision;
    for (const auto& [axis, values] : v.axes) {
        Json list = Json::array();
        for (const auto& p : values) list.push_back(sweep_json::axis_value_json(axis, p));
        j[axis] = list;
    }
    for (const auto& [axis, to] : v.apply_axes) j["apply_to"][axis] = to;
    if (!v.affinity.client.empty() || !v.affinity.server.empty()) {
        j["affinity"] = Json{{"client", v.affinity.client}, {"server", v.affinity.server}};
    }
    // A config read from a file without a name is named after the file later; "" is not a valid name.
    if (!v.name.empty()) j["name"] = v.name;
    if (!v.description.empty()) j["description"] = v.description;
}

SweepConfig parse_sweep_config(const Json& j) {
    using namespace sweep_json;
    const Node root(j, "");
    root.expect_object(sweep_record_keys<SweepConfig>(), "a sweep config object");
    SweepConfig c;
    if (root.has("$schema")) root.child("$schema").string();
    if (root.has("name")) c.name = root.child("name").name();
    if (root.has("description")) c.description = root.child("description").string();
    read_offloads(root, c);
    read_mtus_and_traffic(root, c);
    for (const char* axis : kTuningAxes) {
        if (root.has(axis)) c.axes[axis] = parse_axis(axis, root.child(axis));
    }
    read_measuring(root, c);
    if (root.has("apply_to")) read_apply_to(root.child("apply_to"), c);
    if (root.has("exclude")) {
        for (const auto& r : root.child("exclude").array("an array of exclusion rules", false)) c.exclude.push_back(read_exclude_rule(r, c));
    }
    return c;
}

void from_json(const Json& j, SweepConfig& v) { v = parse_sweep_config(j); }

}  // namespace nm
