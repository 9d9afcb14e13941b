#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "core/base/error.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/sweep_codec.hpp"

using nm::parse_sweep_config_text;

namespace {

const std::string kMinimal = R"({"offloads": [{"name": "a", "features": {"tso": "off"}}], "mtu": [1500], "traffic": [{}]})";

// The message of the usage error parsing `text` throws.
std::string error_of(const std::string& text) {
    try {
        parse_sweep_config_text(text, "configs/x.json");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        return e.what();
    }
    FAIL("no error for " << text);
    return "";
}

// kMinimal with `patch` merged into it (RFC 7386 merge patch).
std::string with(const std::string& patch) {
    auto j = nm::Json::parse(kMinimal);
    j.merge_patch(nm::Json::parse(patch));
    return j.dump();
}

}  // namespace

TEST_CASE("Every config shipped in configs/ parses and expands", "[unit]") {
    size_t parsed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(NM_SOURCE_DIR) + "/configs")) {
        const auto path = entry.path().string();
        // The kernel profile's category table lives there too; it is not a sweep (tests/unit/core/profile).
        if (entry.path().extension() != ".json" || path.find(".schema.json") != std::string::npos ||
            entry.path().filename() == "profile-categories.json") {
            continue;
        }
        INFO(path);
        const auto config = nm::load_sweep_config(path);
        CHECK(config.name == entry.path().stem().string());
        CHECK_FALSE(nm::expand_cells(config).empty());
        // What the codec writes parses back to the same config.
        CHECK(nm::Json(nm::parse_sweep_config(nm::Json(config))) == nm::Json(config));
        ++parsed;
    }
    CHECK(parsed >= 3);
}

TEST_CASE("The README default config is the forum matrix: 2 profiles x 4 MTUs x 2 tests", "[unit]") {
    const auto config = nm::load_sweep_config(std::string(NM_SOURCE_DIR) + "/configs/offload-mtu.json");
    CHECK(config.mtu == std::vector<uint32_t>{1500, 4096, 8192, 9000});
    REQUIRE(config.offloads.size() == 2);
    CHECK(config.offloads[0].features ==
          std::map<std::string, bool>{{"rx", true}, {"tx", true}, {"sg", true}, {"tso", true}, {"gso", true}, {"gro", true}});
    CHECK(config.offloads[1].features.at("tso") == false);
    const auto cells = nm::expand_cells(config);
    REQUIRE(cells.size() == 16);
    CHECK(cells.front().key == "all-on/mtu1500/tcp-p1");
    CHECK(cells[1].key == "all-on/mtu1500/tcp-p10");
    CHECK(cells.back().key == "all-off/mtu9000/tcp-p10");
    CHECK(cells.back().traffic.test.streams == 10);
}

TEST_CASE("Config errors name the file, the JSON pointer and what was expected", "[unit]") {
    CHECK(error_of(with(R"({"traffic": [{}, {"streams": -3}]})")) ==
          "configs/x.json: /traffic/1/streams: expected a positive integer (at most 256), got -3");
    CHECK(error_of(with(R"({"traffic": [{"streams": "ten"}]})")) ==
          "configs/x.json: /traffic/0/streams: expected a positive integer (at most 256), got \"ten\"");
    CHECK(error_of(with(R"({"mtu": [1500, 9000, 70000]})")) == "configs/x.json: /mtu/2: expected an MTU in bytes from 68 to 65535, got 70000");
    CHECK(error_of(with(R"({"mtu": []})")) == "configs/x.json: /mtu: expected a non-empty array of MTUs in bytes, got an array");
    CHECK(error_of(with(R"({"offloads": [{"name": "a", "features": {"tso": "maybe"}}]})")) ==
          "configs/x.json: /offloads/0/features/tso: expected \"on\", \"off\", true or false, got \"maybe\"");
    CHECK(error_of(with(R"({"duration_s": 0})")) == "configs/x.json: /duration_s: expected a positive number of seconds, got 0");
    CHECK(error_of(with(R"({"repetitions": 2.5})")) == "configs/x.json: /repetitions: expected a positive integer, got 2.5");
    CHECK(error_of(with(R"({"apply_to": "remote"})")) ==
          "configs/x.json: /apply_to: expected one of \"local\", \"peer\", \"both\", \"dut\", got \"remote\"");
    CHECK(error_of(with(R"({"apply_to": {"mtu": "server"}})")) ==
          "configs/x.json: /apply_to/mtu: expected one of \"local\", \"peer\", \"both\", \"dut\", got \"server\"");
    CHECK(error_of(R"({"mtu": [1500], "traffic": [{}]})") == "configs/x.json: /offloads: missing; expected a non-empty array of offload profiles");
    CHECK(error_of("[1, 2]") == "configs/x.json: /: expected a sweep config object, got an array");
    CHECK(error_of(with(R"({"traffic": [{"protocol": "sctp"}]})")) ==
          "configs/x.json: /traffic/0/protocol: expected \"tcp\" or \"udp\", got \"sctp\"");
    CHECK(error_of(with(R"({"traffic": [{"protocol": "udp", "write_size": 8}]})")) ==
          "configs/x.json: /traffic/0/write_size: expected a UDP payload size from 18 to 65507 bytes, got 8");
    CHECK(error_of(with(R"({"traffic": [{"udp_gso": true}]})")) == "configs/x.json: /traffic/0/udp_gso: only for \"protocol\": \"udp\"");
    CHECK(error_of(with(R"({"traffic": [{"streams": 2}, {"streams": 2}]})")) ==
          "configs/x.json: /traffic/1: the test name \"tcp-p2\" is already used by /traffic/0; give each test a unique \"name\"");
    CHECK(error_of(with(R"({"offloads": [{"name": "a/b", "features": {}}]})")) ==
          "configs/x.json: /offloads/0/name: expected a non-empty name of letters, digits, '.', '_', '-', '+', '=', got \"a/b\"");
    CHECK(error_of(with(R"({"exclude": [{"offloads": "nope"}]})")) ==
          "configs/x.json: /exclude/0/offloads: expected one of the profile names \"a\", got \"nope\"");
    CHECK(error_of(with(R"({"exclude": [{"mtu": 9000}]})")) == "configs/x.json: /exclude/0/mtu: expected an MTU from the mtu axis, got 9000");
    CHECK_THAT(error_of("{\"mtu\": [1500,"), Catch::StartsWith("configs/x.json: not valid JSON: parse error at line 1, column 15"));
}

TEST_CASE("An unknown traffic key is refused with every key the sweep schema documents for an entry", "[unit]") {
    const std::string message = error_of(with(R"({"traffic": [{"stream": 2}]})"));
    const std::string head = "configs/x.json: /traffic/0/stream: unknown key; expected one of ";
    REQUIRE_THAT(message, Catch::StartsWith(head));
    // The list: "a", "b", ... in order.
    std::vector<std::string> listed;
    for (size_t at = head.size(); at < message.size();) {
        REQUIRE(message[at] == '"');
        const size_t end = message.find('"', at + 1);
        REQUIRE(end != std::string::npos);
        listed.push_back(message.substr(at + 1, end - at - 1));
        at = end + 1;
        if (at < message.size()) {
            REQUIRE(message.compare(at, 2, ", ") == 0);
            at += 2;
        }
    }
    CAPTURE(message);
    // The oracle is the committed schema (generated from the field table): a stream entry's and a
    // request/response entry's keys together, each listed once.
    std::ifstream in(std::string(NM_SOURCE_DIR) + "/configs/sweep.schema.json");
    REQUIRE(in);
    const nm::Json schema = nm::Json::parse(in);
    std::set<std::string> documented;
    for (const char* def : {"test", "rr"}) {
        for (const auto& [key, value] : schema.at("$defs").at(def).at("properties").items()) documented.insert(key);
    }
    CHECK(std::set<std::string>(listed.begin(), listed.end()) == documented);
    CHECK(listed.size() == documented.size());
    // The order: the entry's name and kind first, then the table's; each key coded by hand after its field.
    REQUIRE(listed.size() >= 3);
    CHECK(std::vector<std::string>(listed.begin(), listed.begin() + 3) == std::vector<std::string>{"name", "test", "protocol"});
    const auto right_after = [&](const std::string& field, const std::string& hand) {
        const auto it = std::find(listed.begin(), listed.end(), field);
        return it != listed.end() && it + 1 != listed.end() && *(it + 1) == hand;
    };
    CHECK(right_after("write_size", "length"));
    CHECK(right_after("burst", "connect_per_transaction"));
    CHECK(right_after("mss", "dscp"));
}

TEST_CASE("A missing config file is a usage error naming it", "[unit]") {
    CHECK_THROWS_WITH(nm::load_sweep_config("/nonexistent/sweep.json"),
                      "/nonexistent/sweep.json: cannot read the sweep config (no such file, or no permission)");
}

TEST_CASE("Traffic names are derived from the test when not given", "[unit]") {
    const auto c = parse_sweep_config_text(with(R"({"traffic": [{"streams": 10}, {"protocol": "udp", "length": 18},
        {"protocol": "udp", "write_size": 1472, "rate_bps": 100000000, "udp_gso": true}, {"direction": "reverse"}]})"),
                                           "x");
    REQUIRE(c.traffic.size() == 4);
    CHECK(c.traffic[0].name == "tcp-p10");
    CHECK(c.traffic[1].name == "udp-l18");
    CHECK(c.traffic[1].test.write_size == 18);
    CHECK(c.traffic[2].name == "udp-l1472-b100M-gso");
    CHECK(c.traffic[3].name == "tcp-p1-R");
    CHECK(c.traffic[3].test.direction == nm::Direction::Reverse);
}

TEST_CASE("Defaults, apply_to forms and on/off spellings", "[unit]") {
    auto c = parse_sweep_config_text(kMinimal, "x");
    CHECK(c.duration_s == 10);
    CHECK(c.omit_s == 1);
    CHECK(c.repetitions == 3);
    CHECK(c.apply_offloads_to == nm::ApplyTo::Both);
    CHECK(c.apply_mtu_to == nm::ApplyTo::Both);
    c = parse_sweep_config_text(with(R"({"apply_to": "local", "offloads": [{"name": "a", "features": {"gro": true, "tso": "off"}}]})"), "x");
    CHECK(c.apply_offloads_to == nm::ApplyTo::Local);
    CHECK(c.apply_mtu_to == nm::ApplyTo::Local);
    CHECK(c.offloads[0].features == std::map<std::string, bool>{{"gro", true}, {"tso", false}});
    c = parse_sweep_config_text(with(R"({"apply_to": {"offloads": "local"}})"), "x");
    CHECK(c.apply_offloads_to == nm::ApplyTo::Local);
    CHECK(c.apply_mtu_to == nm::ApplyTo::Both);
}

TEST_CASE("rfc2544 traffic entries: test or protocol, frames, search options, errors by pointer", "[unit]") {
    const auto c = parse_sweep_config_text(with(R"({"traffic": [{"test": "rfc2544", "frames": [64, 1518, "imix"], "trial_s": 0.5, "resolution_pct": 2,
                              "max_trials": 8, "loss_tolerance_pct": 0.1, "line_rate_bps": 1e9},
                             {"name": "t2", "protocol": "rfc2544"}]})"),
                                           "x.json");
    REQUIRE(c.traffic.size() == 2);
    const auto& t = c.traffic[0];
    CHECK(t.name == "rfc2544");
    REQUIRE(t.rfc2544);
    CHECK(t.rfc2544->frames == std::vector<std::string>{"64", "1518", "imix"});
    CHECK(t.rfc2544->trial_s == 0.5);
    CHECK(t.rfc2544->resolution_pct == 2);
    CHECK(t.rfc2544->max_trials == 8);
    CHECK(t.rfc2544->loss_tolerance_pct == 0.1);
    CHECK(t.rfc2544->line_rate_bps == 1e9);
    REQUIRE(c.traffic[1].rfc2544);
    CHECK(c.traffic[1].rfc2544->frames.empty());  // the defaults: RFC 2544's sizes and IMIX

    // Written into a results file and read back, the entry is the same.
    const auto again = nm::parse_sweep_config(nm::Json(c));
    REQUIRE(again.traffic[0].rfc2544);
    CHECK(nm::Json(again.traffic[0]) == nm::Json(t));

    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "frames": [32]}]})")),
               Catch::Contains("/traffic/0/frames/0: expected a frame size"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "frames": ["jumbo"]}]})")), Catch::Contains("/traffic/0/frames/0"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "frames": ["imix:64"]}]})")), Catch::Contains("/traffic/0/frames/0: frame mix"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "trial_s": 0}]})")), Catch::Contains("/traffic/0/trial_s"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "resolution_pct": 100}]})")), Catch::Contains("/traffic/0/resolution_pct"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "write_size": 18}]})")), Catch::Contains("/traffic/0/write_size: unknown key"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"test": "rfc2544", "direction": "reverse"}]})")), Catch::Contains("/traffic/0/direction"));
}

TEST_CASE("apply_to dut puts the axes on the device under test", "[unit]") {
    const auto c = parse_sweep_config_text(with(R"({"apply_to": "dut"})"), "x.json");
    CHECK(c.apply_offloads_to == nm::ApplyTo::Dut);
    CHECK(c.apply_mtu_to == nm::ApplyTo::Dut);
    CHECK(nm::Json(c)["apply_to"]["mtu"] == "dut");
    CHECK_THAT(error_of(with(R"({"apply_to": "router"})")), Catch::Contains("\"dut\""));
}

TEST_CASE("A config the engine would refuse fails at load, naming the entry, before anything runs (review L6)", "[unit]") {
    // The engine's own limits (resolve_spec) on every traffic entry as the sweep will run it.
    CHECK(error_of(with(R"({"traffic": [{"bytes": 1e19}]})")) ==
          "configs/x.json: /traffic/0: bytes: 10000000000000000000; at most 1000000000000000000");
    CHECK_THAT(error_of(with(R"({"traffic": [{"streams": 2, "window": 1073741824}]})")),
               Catch::StartsWith("configs/x.json: /traffic/0: window: 1073741824 bytes on each of 2 sockets"));
    CHECK_THAT(error_of(with(R"({"traffic": [{"protocol": "udp", "rate_pps": 5, "rate_bps": 1000}]})")),
               Catch::StartsWith("configs/x.json: /traffic/0: rate: give -b or --pps, not both"));
    // An integer that does not fit is refused exactly, not cast from a double of 2^64.
    CHECK(error_of(with(R"({"traffic": [{"bytes": 18446744073709551616.0}]})")) ==
          "configs/x.json: /traffic/0/bytes: expected a byte count (0 = run for duration_s), got 1.8446744073709552e+19");
    CHECK(parse_sweep_config_text(with(R"({"traffic": [{"bytes": 1e9}]})"), "x").traffic[0].test.bytes == 1000000000);
    // The GSO rule against each cell's MTU: a jumbo GSO payload fits the 9000 cell, not the 1500 one ...
    CHECK_THAT(error_of(with(R"({"mtu": [9000, 1500], "traffic": [{"name": "g", "protocol": "udp", "write_size": 8972, "udp_gso": true}]})")),
               Catch::StartsWith("configs/x.json: /traffic/0: in cell a/mtu1500/g: gso: a UDP payload of 8972 bytes plus 28 bytes") &&
                   Catch::Contains("path MTU 1500"));
    // ... unless that cell is excluded.
    CHECK_NOTHROW(parse_sweep_config_text(
        with(
            R"({"mtu": [9000, 1500], "traffic": [{"name": "g", "protocol": "udp", "write_size": 8972, "udp_gso": true}], "exclude": [{"mtu": 1500}]})"),
        "x"));
}

TEST_CASE("affinity: client and server CPU lists, errors by pointer, kept in the config's JSON", "[unit]") {
    const auto c = parse_sweep_config_text(with(R"({"affinity": {"client": [1, 0], "server": [2]}})"), "x");
    CHECK(c.affinity.client == std::vector<uint32_t>{0, 1});
    CHECK(c.affinity.server == std::vector<uint32_t>{2});
    const nm::Json j = c;
    CHECK(j.at("affinity").at("client") == nm::Json::array({0, 1}));
    CHECK(parse_sweep_config_text(j.dump(), "x").affinity.server == std::vector<uint32_t>{2});
    CHECK_FALSE(nm::Json(parse_sweep_config_text(kMinimal, "x")).contains("affinity"));
    CHECK_THAT(error_of(with(R"({"affinity": {"client": [-1]}})")), Catch::Contains("/affinity/client/0: expected a CPU number"));
    CHECK_THAT(error_of(with(R"({"affinity": {"client": [0, 0]}})")), Catch::Contains("/affinity/client/1: expected a CPU not listed before"));
    CHECK_THAT(error_of(with(R"({"affinity": {"cpus": [0]}})")), Catch::Contains("/affinity/cpus: unknown key"));
    CHECK_THAT(error_of(with(R"({"affinity": [0, 1]})")), Catch::Contains("/affinity: expected CPUs to pin"));
}
