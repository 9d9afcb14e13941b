// The JSON Schema files are documentation users and other tools validate against; these tests keep them
// true to what the C++ code reads and writes. (tests/python/test_schemas.py validates the same files with
// the jsonschema package, a full validator.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/base/json.hpp"
#include "core/traffic/test_spec_fields.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/results_store.hpp"
#include "matrix/stats.hpp"
#include "tests/support/matrix_world.hpp"

namespace {

using nm::Json;

Json read_json(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    return Json::parse(in);
}

bool has_type(const Json& v, const std::string& type) {
    if (type == "null") return v.is_null();
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    return false;
}

const std::string kSource = NM_SOURCE_DIR;
// How the results schema refers into the sweep schema (a run's spec is the sweep schema's $defs/spec).
const std::string kSweepRef = "../configs/sweep.schema.json#";

const Json& sweep_schema() {
    static const Json schema = read_json(kSource + "/configs/sweep.schema.json");
    return schema;
}

// The parts of JSON Schema these files use: $ref (local, or into the sweep schema), oneOf, type, const, enum, required, properties,
// additionalProperties, items. Enough to catch a key written but not documented, or documented as
// required but not written.
void check(const Json& root, const Json& schema, const Json& v, const std::string& at, std::vector<std::string>& errors) {
    if (const auto ref = schema.find("$ref"); ref != schema.end()) {
        const auto r = ref->get<std::string>();
        if (r.rfind("#/", 0) == 0) {
            check(root, root.at(Json::json_pointer(r.substr(1))), v, at, errors);
        } else if (r.rfind(kSweepRef + "/", 0) == 0) {
            check(sweep_schema(), sweep_schema().at(Json::json_pointer(r.substr(kSweepRef.size()))), v, at, errors);
        }
        return;  // the sweep schema as a whole (a results file's run.config) is checked by the Python test
    }
    if (const auto one = schema.find("oneOf"); one != schema.end()) {
        size_t passing = 0;
        for (const auto& branch : *one) {
            std::vector<std::string> e;
            check(root, branch, v, at, e);
            if (e.empty()) ++passing;
        }
        if (passing != 1) errors.push_back(at + ": matches " + std::to_string(passing) + " branches of oneOf");
        return;
    }
    if (const auto t = schema.find("type"); t != schema.end()) {
        const auto types = t->is_array() ? t->get<std::vector<std::string>>() : std::vector<std::string>{t->get<std::string>()};
        if (std::none_of(types.begin(), types.end(), [&](const std::string& ty) { return has_type(v, ty); })) {
            errors.push_back(at + ": not of type " + t->dump());
            return;
        }
    }
    if (schema.contains("const") && schema.at("const") != v) errors.push_back(at + ": not " + schema.at("const").dump());
    if (schema.contains("enum") && std::find(schema.at("enum").begin(), schema.at("enum").end(), v) == schema.at("enum").end()) {
        errors.push_back(at + ": " + v.dump() + " not in " + schema.at("enum").dump());
    }
    if (v.is_object()) {
        for (const auto& key : schema.value("required", Json::array())) {
            if (!v.contains(key.get<std::string>())) errors.push_back(at + ": missing required " + key.get<std::string>());
        }
        const auto props = schema.value("properties", Json::object());
        for (const auto& [key, value] : v.items()) {
            if (props.contains(key)) {
                check(root, props.at(key), value, at + "/" + key, errors);
            } else if (schema.contains("additionalProperties")) {
                const auto& extra = schema.at("additionalProperties");
                if (extra == Json(false)) errors.push_back(at + "/" + key + ": not in the schema");
                else if (extra.is_object()) check(root, extra, value, at + "/" + key, errors);
            }
        }
    }
    if (v.is_array() && schema.contains("items")) {
        for (size_t i = 0; i < v.size(); ++i) check(root, schema.at("items"), v[i], at + "/" + std::to_string(i), errors);
    }
}

std::vector<std::string> validate(const Json& schema, const Json& v) {
    std::vector<std::string> errors;
    check(schema, schema, v, "", errors);
    return errors;
}

// A results file from a fake sweep with every status in it, made deterministic (no times, no host).
Json fake_sweep_results(const std::string& path) {
    nm::test::World w;
    w.local.fix("nm-a", "rx-gro");
    w.probe.max_mtu = 4096;
    w.traffic.fail_runs = {5};
    const auto config = nm::parse_sweep_config_text(R"({"name": "fake-lab",
      "description": "made by tests/unit/matrix/schema_test.cpp with the fakes of tests/support/matrix_fakes.hpp",
      "offloads": [{"name": "original", "features": {}}, {"name": "tx-off", "features": {"tx": "off"}},
                   {"name": "tx-tso-off", "features": {"tx": "off", "tso": "off"}}, {"name": "gro-on", "features": {"gro": "on"}}],
      "mtu": [1500, 9000], "traffic": [{"streams": 1}, {"protocol": "udp", "write_size": 18}],
      "duration_s": 1, "omit_s": 0, "repetitions": 2})",
                                                    "fake");
    nm::SweepOptions options;
    options.output_path = path;
    options.seed = 1;
    options.tool_version = "test";
    options.command = "nicmatrix sweep fake-lab.json --lab";
    w.run(config, options);
    Json j = read_json(path);
    j["run"]["started"] = "2026-01-01T00:00:00Z";
    j["run"]["finished"] = "2026-01-01T00:01:00Z";
    for (auto& c : j["cells"]) {
        for (auto& r : c["runs"]) r["started"] = "2026-01-01T00:00:30.000Z";
    }
    for (auto* host : {&j["hosts"]["local"], &j["hosts"]["remote"]}) {
        (*host)["hostname"] = "lab";
        (*host)["kernel"] = "6.18.0";
        (*host)["cpu"] = {{"model", "Fake CPU"}, {"count", 2}};
    }
    return j;
}

// `written` without the test-spec keys `fixture` predates: a field added to the table since the fixture
// was made, at its default value, so that a new field does not make the golden file one more file to
// change. A new field's changed value, a changed value of any other key, or any other new key still differs.
Json without_new_default_spec_keys(Json written, const Json& fixture) {
    static const Json defaults = Json(nm::TestSpec{});
    if (written.is_object() && fixture.is_object()) {
        for (auto it = written.begin(); it != written.end();) {
            const bool new_default_field =
                !fixture.contains(it.key()) && defaults.contains(it.key()) && defaults.at(it.key()) == it.value() &&
                std::any_of(std::begin(nm::kTestSpecFields), std::end(nm::kTestSpecFields), [&](const auto& f) { return it.key() == f.key; });
            if (new_default_field) {
                it = written.erase(it);
                continue;
            }
            if (fixture.contains(it.key())) it.value() = without_new_default_spec_keys(it.value(), fixture.at(it.key()));
            ++it;
        }
    } else if (written.is_array() && fixture.is_array()) {
        for (size_t i = 0; i < written.size() && i < fixture.size(); ++i) {
            written[i] = without_new_default_spec_keys(written[i], fixture[i]);
        }
    }
    return written;
}

}  // namespace

TEST_CASE("Every example config uses only keys and values the sweep schema documents", "[unit]") {
    const Json schema = read_json(kSource + "/configs/sweep.schema.json");
    size_t checked = 0;
    for (const auto& e : std::filesystem::directory_iterator(kSource + "/configs")) {
        if (e.path().extension() != ".json" || e.path().string().find(".schema.json") != std::string::npos) continue;
        if (e.path().filename() == "profile-categories.json") continue;  // the kernel profile's category table, not a sweep
        INFO(e.path().string());
        const Json config = read_json(e.path().string());
        CHECK(validate(schema, config).empty());
        // And the normalized form the results file keeps.
        const auto normalized_errors = validate(schema, Json(nm::load_sweep_config(e.path().string())));
        CAPTURE(normalized_errors);
        CHECK(normalized_errors.empty());
        ++checked;
    }
    CHECK(checked >= 3);
    // The schema knows every key the C++ parser accepts, and no other.
    const auto& props = schema.at("properties");
    for (const char* key :
         {"$schema",     "name",     "description", "offloads",  "mtu",          "traffic",      "duration_s", "omit_s",  "repetitions", "cooldown_s",
          "link_wait_s", "apply_to", "exclude",     "precision", "order",        "interference", "affinity",   "profile", "profile_hz",  "channels",
          "rings",       "coalesce", "rps",         "xps",       "irq_affinity", "napi",         "sysctl",     "qdisc"}) {
        CHECK(props.contains(key));
    }
    CHECK(props.size() == 28);
    // The precision's metrics are the ones the sweep summarizes.
    CHECK(props.at("precision").at("properties").at("metric").at("enum").get<std::vector<std::string>>() == nm::known_metrics());
    // A traffic entry's keys, per kind of entry: the field table's sweep axes (a new field needs no change
    // here) and the keys coded by hand, each in the entries that take it.
    std::set<std::string> stream_keys{"name", "test", "length", "dscp"};
    std::set<std::string> rr_keys{"name", "test", "connect_per_transaction", "dscp"};
    for (const auto& f : nm::kTestSpecFields) {
        const bool stream =
            f.axis == nm::FieldAxis::Both || f.axis == nm::FieldAxis::Knob || f.axis == nm::FieldAxis::Stream || f.axis == nm::FieldAxis::StreamKnob;
        const bool rr = f.axis == nm::FieldAxis::Both || f.axis == nm::FieldAxis::Knob || f.axis == nm::FieldAxis::Rr;
        if (stream) stream_keys.insert(f.key);
        if (rr) rr_keys.insert(f.key);
    }
    const auto property_names = [&](const char* def) {
        std::set<std::string> keys;
        for (const auto& [key, value] : schema.at("$defs").at(def).at("properties").items()) keys.insert(key);
        return keys;
    };
    CHECK(property_names("test") == stream_keys);
    CHECK(property_names("rr") == rr_keys);
    // Spot checks that the table's axes mean what they say (a field in the wrong entry fails above).
    CHECK(stream_keys.count("write_size") == 1);
    CHECK(rr_keys.count("write_size") == 0);
    CHECK(rr_keys.count("response_size") == 1);
    CHECK(stream_keys.count("response_size") == 0);
    CHECK(stream_keys.count("host") == 0);
    CHECK_FALSE(validate(schema, Json::parse(R"({"offloads": [], "mtu": [1500], "traffic": [{"stream": 1}]})")).empty());
}

TEST_CASE("A results file the runner writes has every key the results schema requires, and only documented statuses", "[unit]") {
    nm::test::TempDir dir;
    const Json written = fake_sweep_results(dir.file("r.json"));
    const Json schema = read_json(kSource + "/results/results.schema.json");
    const auto errors = validate(schema, written);
    CAPTURE(errors);
    CHECK(errors.empty());
    std::set<std::string> statuses;
    for (const auto& c : written.at("cells")) statuses.insert(c.at("status").get<std::string>());
    CHECK(statuses == std::set<std::string>{"ok", "infeasible", "duplicate", "failed", "path_mtu_blackhole"});

    // The committed example (read by the Python tests and SCHEMA.md) is what the writer makes today, but for
    // a test-spec field added since at its default value (and only that: checked first).
    const Json older = Json::parse(R"({"runs": [{"spec": {"streams": 1}}]})");
    CHECK(without_new_default_spec_keys(Json::parse(R"({"runs": [{"spec": {"streams": 1, "rx_spin_us": 0}}]})"), older) == older);
    CHECK(without_new_default_spec_keys(Json::parse(R"({"runs": [{"spec": {"streams": 1, "rx_spin_us": 5}}]})"), older) != older);
    CHECK(without_new_default_spec_keys(Json::parse(R"({"runs": [{"spec": {"streams": 2, "rx_spin_us": 0}}]})"), older) != older);
    CHECK(without_new_default_spec_keys(Json::parse(R"({"runs": [{"spec": {"streams": 1, "not_a_field": 0}}]})"), older) != older);
    const std::string fixture = kSource + "/tests/fixtures/results/fake-lab.json";
    if (std::getenv("NM_UPDATE_FIXTURES") != nullptr) std::ofstream(fixture) << written.dump(1) << '\n';
    const Json committed = read_json(fixture);
    CHECK(committed == without_new_default_spec_keys(written, committed));
    CHECK(nm::Json(nm::load_results(fixture)) == written);
}
