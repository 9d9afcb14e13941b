#include <catch2/catch.hpp>

#include <fstream>

#include "core/base/error.hpp"
#include "matrix/results_store.hpp"
#include "matrix/sweep_request.hpp"
#include "tests/support/matrix_world.hpp"

namespace {

const std::string kConfig = std::string(NM_SOURCE_DIR) + "/configs/offload-mtu.json";

}  // namespace

TEST_CASE("prepare_sweep: the output defaults to nicmatrix-results/<name>-<stamp>.json, or to the file being resumed", "[unit]") {
    nm::SweepRequest req;
    req.config_file = kConfig;
    auto p = nm::prepare_sweep(req);
    CHECK(p.plan.config.name == "offload-mtu");
    CHECK_THAT(p.output, Catch::Matches(R"(nicmatrix-results/offload-mtu-\d{8}T\d{6}Z\.json)"));
    CHECK_FALSE(p.resume);
    req.output = "x.json";
    CHECK(nm::prepare_sweep(req).output == "x.json");

    nm::test::TempDir dir;
    nm::ResultsFile partial;
    partial.run.started = "2026-01-01T00:00:00Z";
    partial.run.config = p.plan.config;
    nm::save_results(partial, dir.file("partial.json"));
    req.output.clear();
    req.resume = dir.file("partial.json");
    p = nm::prepare_sweep(req);
    CHECK(p.output == dir.file("partial.json"));
    REQUIRE(p.resume);

    partial.run.config.repetitions = 9;
    nm::save_results(partial, dir.file("other.json"));
    req.resume = dir.file("other.json");
    CHECK_THROWS_WITH(nm::prepare_sweep(req),
                      Catch::StartsWith("--resume " + dir.file("other.json") + ": the file was made with a different sweep config"));
}

TEST_CASE("execute_sweep: lab or peer, not both and not neither, before anything else", "[unit]") {
    nm::SweepRequest req;
    req.config_file = kConfig;
    const auto p = nm::prepare_sweep(req);
    nm::SweepBackends none;  // any use of a backend would throw bad_function_call
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: give either --lab or --iface IF --peer HOST");
    req.lab = true;
    req.iface = "eth9";
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: give either --lab or --iface IF --peer HOST");
    req.lab = false;
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)");
}

TEST_CASE("parse_duration_s: seconds, or h/m/s in falling order, anything else names the flag", "[unit]") {
    CHECK(nm::parse_duration_s("600", "--time-budget") == 600);
    CHECK(nm::parse_duration_s("90s", "--time-budget") == 90);
    CHECK(nm::parse_duration_s("15m", "--time-budget") == 900);
    CHECK(nm::parse_duration_s("1h30m", "--time-budget") == 5400);
    CHECK(nm::parse_duration_s("1h30m15s", "--time-budget") == 5415);
    CHECK(nm::parse_duration_s("2.5m", "--time-budget") == 150);
    for (const char* bad : {"", "0", "0s", "10x", "1h30", "30m1h", "1m1m", "-5", " 5", "inf", "m", "5 m"}) {
        INFO("\"" << bad << "\"");
        CHECK_THROWS_WITH(nm::parse_duration_s(bad, "--time-budget"),
                          std::string("--time-budget ") + bad + ": expected a duration like 600 (seconds), 90s, 15m or 1h30m, above 0");
    }
}

TEST_CASE("prepare_sweep: --precision sets the config's ci_pct (defaults for the rest), --time-budget is parsed", "[unit]") {
    nm::test::TempDir dir;
    const auto cfg = dir.file("c.json");
    std::ofstream(cfg) << R"({"offloads": [{"name": "a", "features": {}}], "mtu": [1500], "traffic": [{}]})";
    nm::SweepRequest r;
    r.config_file = cfg;
    r.output = dir.file("r.json");
    r.precision_pct = 2.5;
    r.time_budget = "10m";
    const auto p = nm::prepare_sweep(r);
    REQUIRE(p.plan.config.precision);
    CHECK(p.plan.config.precision->ci_pct == 2.5);
    CHECK(p.plan.config.precision->confidence == 95);
    CHECK(p.plan.config.precision->max_repetitions == 12);
    CHECK(p.time_budget_s == 600.0);
    r.precision_pct = 0;
    CHECK_THROWS_WITH(nm::prepare_sweep(r), "--precision 0: expected a half-width in percent of the median (0 < x <= 100)");
}

TEST_CASE("resolve_peer: numeric IPv4 and IPv6 stay as given, a name resolves once, the asked family is kept", "[unit]") {
    CHECK(nm::resolve_peer("198.18.0.2", 0) == "198.18.0.2");
    CHECK(nm::resolve_peer("2001:2::2", 0) == "2001:2::2");
    CHECK(nm::resolve_peer("2001:0002:0000::0002", 6) == "2001:2::2");  // in the canonical form the probe and engine print
    CHECK(nm::resolve_peer("198.18.0.2", 4) == "198.18.0.2");
    CHECK(nm::resolve_peer("localhost", 4) == "127.0.0.1");
    CHECK_THROWS_WITH(nm::resolve_peer("198.18.0.2", 6), Catch::StartsWith("--peer 198.18.0.2: ") && Catch::EndsWith("(IPv6)"));
    CHECK_THROWS_WITH(nm::resolve_peer("2001:2::2", 4), Catch::StartsWith("--peer 2001:2::2: ") && Catch::EndsWith("(IPv4)"));
    CHECK_THROWS_WITH(nm::resolve_peer("no-such-host.invalid", 0), Catch::StartsWith("--peer no-such-host.invalid: "));
    CHECK_THROWS_WITH(nm::resolve_peer("198.18.0.2", 5), "ip_version 5: expected 4 or 6");
}
