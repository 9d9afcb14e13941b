#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/base/error.hpp"
#include "core/host/host_codec.hpp"
#include "core/host/host_info.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "matrix/stats.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

using nm::test::TempDir;

nm::ResultsFile sample() {
    nm::ResultsFile r;
    r.tool.version = "0.1.0";
    r.run.started = "2026-11-30T01:00:00Z";
    r.run.command = "nicmatrix sweep configs/x.json --lab";
    r.run.resumed.push_back(
        {"2026-11-30T02:00:00Z", "nicmatrix sweep configs/x.json --lab --resume r.json", {.version = "0.1.1", .commit = "0123456789ab"}});
    r.run.config = nm::parse_sweep_config_text(R"({"name": "x", "offloads": [{"name": "p", "features": {"tso": "off"}}],
        "mtu": [9000], "traffic": [{"protocol": "udp", "write_size": 18}]})",
                                               "x");
    r.local.kernel = "6.18.0";
    r.local.cpu_model = "Test CPU";
    r.local.cpu_count = 2;
    r.local.tool = {.version = "0.1.0", .commit = "0123456789ab-dirty"};
    nm::InterfaceInfo itf;
    itf.name = "nm-a";
    itf.driver = "veth";
    itf.mtu_max = 65535;
    itf.original = {1500, {{"rx-gro", false}}, {}};
    itf.rings = {{"rx", 256}};
    r.local.interface = itf;
    nm::CellResult c;
    c.spec = nm::expand_cells(r.run.config).at(0);
    c.applied_local = nm::EndSettings{9000, {{"tx-tcp-segmentation", false}}, {}};
    c.overhead_s = 0.02;
    nm::RunResult run;
    run.throughput_bps = 1e8;
    run.loss = nm::LossStats{100, 99, 1, 0, 0, 1, 0.5};
    nm::StreamResult stream;
    stream.bytes = 10;
    stream.throughput_bps = 1e8;
    stream.pmtu = 9000;
    run.streams.push_back(stream);
    run.intervals.push_back({0, 1, 10, 1, 1e8, 1});
    c.runs = {run};
    c.summary = nm::summarize_runs(c.runs);
    r.cells = {c};
    return r;
}

}  // namespace

TEST_CASE("A results file round-trips through save and load", "[unit]") {
    TempDir dir;
    const auto r = sample();
    nm::save_results(r, dir.file("r.json"));
    const auto back = nm::load_results(dir.file("r.json"));
    CHECK(nm::Json(back) == nm::Json(r));
    CHECK(back.cells.at(0).runs.at(0).loss->lost == 1);
    CHECK(back.cells.at(0).spec.traffic.test.write_size == 18);
    CHECK(back.local.interface->rings.at("rx") == 256);
    const auto j = nm::Json::parse(std::ifstream(dir.file("r.json")));
    CHECK(j.at("schema") == "nicmatrix/results/v1");
    CHECK(j.at("cells").at(0).at("duplicate_of").is_null());
    CHECK(j.at("run").at("finished").is_null());
    CHECK(j.at("hosts").at("remote").at("interface").is_null());
    CHECK(j.at("run").at("resumed").at(0).at("tool").at("commit") == "0123456789ab");
    CHECK(j.at("hosts").at("local").at("tool").at("commit") == "0123456789ab-dirty");
    CHECK_FALSE(j.at("hosts").at("remote").contains("tool"));  // not read: absent, not an empty version
    CHECK_FALSE(j.at("tool").contains("commit"));              // unknown: absent
}

TEST_CASE("check_resumable: a precision metric naming every cell's headline figure is the default, any other difference is named", "[unit]") {
    const auto config = [](const std::string& metric, const std::string& traffic) {
        return nm::parse_sweep_config_text(R"({"name": "x", "offloads": [{"name": "p", "features": {"tso": "off"}}], "mtu": [1500],
            "traffic": [)" + traffic + R"(], "precision": {"ci_pct": 5)" +
                                               metric + "}}",
                                           "x");
    };
    const std::string stream = R"({"protocol": "tcp"})", rr = R"({"test": "rr", "protocol": "tcp"})";
    nm::ResultsFile old;
    old.run.config = config(R"(, "metric": "throughput_bps")", stream);  // as files before the default wrote it
    CHECK_NOTHROW(nm::check_resumable(old, config("", stream), "r.json"));
    old.run.config = config("", stream);
    CHECK_NOTHROW(nm::check_resumable(old, config(R"(, "metric": "throughput_bps")", stream), "r.json"));
    // With an rr cell the default judges it by transactions/s: naming throughput_bps asks for something else.
    old.run.config = config(R"(, "metric": "throughput_bps")", stream + ", " + rr);
    CHECK_THROWS_WITH(nm::check_resumable(old, config("", stream + ", " + rr), "r.json"),
                      "--resume r.json: the file was made with a different sweep config (\"precision\" differs); resume with the config it "
                      "was made with, or start a new file");
    old.run.config = config(R"(, "metric": "rr_transactions_per_s")", rr);
    CHECK_NOTHROW(nm::check_resumable(old, config("", rr), "r.json"));
    old.run.config = config(R"(, "metric": "rr_p99_us")", rr);
    CHECK_THROWS(nm::check_resumable(old, config("", rr), "r.json"));
}

TEST_CASE("A file written before order, precision and the median's interval were recorded still loads, and gets the interval from its runs",
          "[unit]") {
    TempDir dir;
    auto r = sample();
    for (double v : {2e8, 3e8}) {
        r.cells[0].runs.push_back(r.cells[0].runs[0]);
        r.cells[0].runs.back().throughput_bps = v;
    }
    r.cells[0].summary = nm::summarize_runs(r.cells[0].runs);
    nm::Json old = r;
    // What the writer left out before: the run's order, the median's interval, the cell's precision and
    // repetitions, the config's new keys, steal.
    old["run"].erase("order");
    old["run"].erase("time_budget_s");
    old["run"].erase("budget_reached");
    for (const char* key : {"order", "interference"}) old["run"]["config"].erase(key);
    auto& cell = old["cells"][0];
    cell.erase("precision_met");
    cell.erase("repetitions_run");
    for (auto& [metric, s] : cell["summary"].items()) {
        for (const char* key : {"median_ci_low", "median_ci_high", "median_ci_confidence"}) s.erase(key);
    }
    for (auto& run : cell["runs"]) {
        for (auto* end : {&run["cpu"]["system"]["sender"], &run["cpu"]["system"]["receiver"]}) end->erase("steal_pct");
    }
    std::ofstream(dir.file("old.json")) << old.dump();
    const auto back = nm::load_results(dir.file("old.json"));
    CHECK(back.run.order.mode == nm::SweepOrder::Sequential);  // how every sweep ran then
    CHECK_FALSE(back.run.order.seed);
    CHECK_FALSE(back.cells[0].precision_met);
    const auto& t = back.cells[0].summary.at("throughput_bps");
    CHECK(t.n == 3);
    REQUIRE(t.median_ci_confidence);
    CHECK(*t.median_ci_confidence == Catch::Detail::Approx(75));  // [min, max] of 3
    CHECK(*t.median_ci_low == 1e8);
    CHECK(*t.median_ci_high == 3e8);
    CHECK(t.ci95 == r.cells[0].summary.at("throughput_bps").ci95);  // the file's own figures stay
}

TEST_CASE("save_results replaces the file in one step and leaves no temporary file", "[unit]") {
    TempDir dir;
    auto r = sample();
    nm::save_results(r, dir.file("r.json"));
    r.cells.push_back(r.cells[0]);
    r.cells[1].spec.key = "second";
    nm::save_results(r, dir.file("r.json"));
    CHECK(nm::load_results(dir.file("r.json")).cells.size() == 2);
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++files;
    CHECK(files == 1);
    CHECK_THROWS_WITH(nm::save_results(r, dir.file("missing/r.json")), Catch::StartsWith("create " + dir.file("missing/r.json") + ".tmp."));
}

TEST_CASE("Loading a file that is not a v1 results file is a usage error naming the file", "[unit]") {
    TempDir dir;
    std::ofstream(dir.file("bad.json")) << R"({"schema": "nicmatrix/results/v9"})";
    CHECK_THROWS_WITH(nm::load_results(dir.file("bad.json")),
                      dir.file("bad.json") + ": /schema: expected \"nicmatrix/results/v1\", got \"nicmatrix/results/v9\"");
    std::ofstream(dir.file("half.json")) << R"({"schema": "nicmatrix/results/v1"})";
    CHECK_THROWS_WITH(nm::load_results(dir.file("half.json")), Catch::StartsWith(dir.file("half.json") + ": not a nicmatrix results file"));
    CHECK_THROWS_AS(nm::load_results(dir.file("none.json")), nm::Error);
}

TEST_CASE("parse_cpuinfo finds the CPU model and counts processors", "[unit]") {
    const auto h = nm::parse_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n");
    CHECK(h.cpu_model == "AMD EPYC 7B13");
    CHECK(h.cpu_count == 2);
    const auto here = nm::read_host_info();
    CHECK_FALSE(here.kernel.empty());
    CHECK(here.cpu_count >= 1);
}

TEST_CASE("read_cpu_vulnerabilities takes each file's first line, skips directories, and is empty without the directory", "[unit]") {
    TempDir dir;
    const std::string root = dir.file("vulnerabilities");
    std::filesystem::create_directories(root + "/not-a-file");
    std::ofstream(root + "/spectre_v2") << "Mitigation: Retpolines; IBPB: conditional\n";
    std::ofstream(root + "/meltdown") << "Not affected\nsecond line\n";
    const auto v = nm::read_cpu_vulnerabilities(root);
    CHECK(v == std::map<std::string, std::string>{{"meltdown", "Not affected"}, {"spectre_v2", "Mitigation: Retpolines; IBPB: conditional"}});
    CHECK(nm::read_cpu_vulnerabilities(dir.file("missing")).empty());
    // Recorded in the file and read back.
    nm::HostInfo h;
    h.cpu_vulnerabilities = v;
    CHECK(nm::Json(h).get<nm::HostInfo>().cpu_vulnerabilities == v);
}
