// The kernel profile in sweeps: the config switch, cpu:<category> metrics and their cell medians, the
// --cpu-breakdown table.
#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/profile/profile_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/profile_metrics.hpp"
#include "matrix/report/profile_report.hpp"
#include "matrix/stats.hpp"

namespace {

nm::CpuProfile profile(const std::string& host, double copy, double gro, uint64_t samples = 1000) {
    nm::CpuProfile p;
    p.host = host;
    p.samples = samples;
    p.categories = {{"copy", copy}, {"gro", gro}, {"checksum", 0.0}, {"idle", 100 - copy - gro}};
    return p;
}

nm::RunResult shared_run(double copy, double gro) {
    nm::RunResult r;
    r.sender.profile = profile("vm", copy, gro);
    r.sender.profile->shared_with = "receiver";
    r.receiver.profile = r.sender.profile;
    r.receiver.profile->shared_with = "sender";
    return r;
}

}  // namespace

TEST_CASE("profile in a sweep config: \"profile\": true and profile_hz parse, bad values name the pointer", "[unit]") {
    const auto c = nm::parse_sweep_config_text(R"({"name": "p", "offloads": [{"name": "a", "features": {}}], "mtu": [1500],
        "traffic": [{"streams": 1}], "profile": true, "profile_hz": 499})",
                                               "p.json");
    CHECK(c.profile);
    CHECK(c.profile_hz == 499);
    CHECK(nm::Json(c).at("profile") == true);
    CHECK_FALSE(nm::parse_sweep_config_text(R"({"name": "p", "offloads": [{"name": "a", "features": {}}], "mtu": [1500],
        "traffic": [{"streams": 1}]})",
                                            "p.json")
                    .profile);
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(R"({"name": "p", "offloads": [{"name": "a", "features": {}}], "mtu": [1500],
        "traffic": [{"streams": 1}], "profile_hz": 0})",
                                                  "p.json"),
                      Catch::Contains("/profile_hz"));
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(R"({"name": "p", "offloads": [{"name": "a", "features": {}}], "mtu": [1500],
        "traffic": [{"streams": 1}], "profile": "yes"})",
                                                  "p.json"),
                      Catch::Contains("/profile"));
}

TEST_CASE("profile metrics: one host gives cpu:<category>, two give each end's and both pooled by samples", "[unit]") {
    std::map<std::string, double> m;
    nm::add_profile_metrics(shared_run(30, 2), m);
    CHECK(m.at("cpu:copy") == 30);
    CHECK(m.at("cpu:gro") == 2);
    CHECK_FALSE(m.count("cpu:sender:copy"));

    nm::RunResult two;
    two.sender.profile = profile("a", 40, 0, 1000);
    two.receiver.profile = profile("b", 10, 6, 3000);
    std::map<std::string, double> t;
    nm::add_profile_metrics(two, t);
    CHECK(t.at("cpu:sender:copy") == 40);
    CHECK(t.at("cpu:receiver:gro") == 6);
    CHECK(t.at("cpu:copy") == Approx((40 * 1000 + 10 * 3000) / 4000.0));
    CHECK(nm::run_metrics(two).at("cpu:receiver:copy") == 10);  // the summaries take them

    std::map<std::string, double> none;
    nm::add_profile_metrics(nm::RunResult{}, none);
    CHECK(none.empty());
    CHECK(nm::is_profile_metric("cpu:copy"));
    CHECK(nm::is_profile_metric("cpu:receiver:gro"));
    CHECK_FALSE(nm::is_profile_metric("cpu:"));
    CHECK_FALSE(nm::is_profile_metric("cpu:Copy"));
    CHECK_FALSE(nm::is_profile_metric("cpu_sender_pct"));
    CHECK(nm::format_metric("cpu:copy", 31.25) == "31.2%");
}

TEST_CASE("profile report --cpu-breakdown: per cell the median of each category, zero columns left out", "[unit]") {
    nm::ResultsFile r;
    r.run.config = nm::parse_sweep_config_text(R"({"name": "t", "offloads": [{"name": "on", "features": {}},
        {"name": "off", "features": {}}], "mtu": [1500], "traffic": [{"streams": 1}], "profile": true})",
                                               "t");
    const auto cells = nm::expand_cells(r.run.config);
    REQUIRE(cells.size() == 2);
    nm::CellResult on;
    on.spec = cells[0];
    on.runs = {shared_run(30, 2), shared_run(20, 4), shared_run(40, 3)};
    on.summary = nm::summarize_runs(on.runs);
    nm::CellResult off;
    off.spec = cells[1];
    off.runs = {nm::RunResult{}};
    off.summary = nm::summarize_runs(off.runs);
    r.cells = {on, off};
    CHECK(r.cells[0].summary.at("cpu:copy").median == 30);

    const std::string text = nm::render_cpu_breakdown(r, nm::TableFormat::Text);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("on/mtu1500/tcp-p1"));
    CHECK_THAT(text, Catch::Contains("both ends (vm)"));
    CHECK_THAT(text, Catch::Contains("30.0"));  // median copy
    CHECK_THAT(text, Catch::Contains("3.0"));   // median gro
    CHECK_THAT(text, Catch::Contains("0.0 in every cell, not shown: checksum"));
    CHECK_THAT(text, Catch::Contains("off/mtu1500/tcp-p1: not profiled"));
    const std::string csv = nm::render_cpu_breakdown(r, nm::TableFormat::Csv);
    CHECK_THAT(csv, Catch::StartsWith("cell,host,copy,checksum,gro,idle,runs\n"));

    nm::ResultsFile empty = r;
    empty.cells = {off};
    CHECK_THROWS_WITH(nm::render_cpu_breakdown(empty, nm::TableFormat::Text), Catch::Contains("\"profile\": true"));
}
