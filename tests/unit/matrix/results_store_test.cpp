#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/host_info.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

struct TempDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / nm::test::unique_name("nmstore");
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

nm::ResultsFile sample() {
    nm::ResultsFile r;
    r.tool.version = "0.1.0";
    r.run.started = "2026-11-30T01:00:00Z";
    r.run.command = "nicmatrix sweep configs/x.json --lab";
    r.run.config = nm::parse_sweep_config_text(R"({"name": "x", "offloads": [{"name": "p", "features": {"tso": "off"}}],
        "mtu": [9000], "traffic": [{"protocol": "udp", "write_size": 18}]})", "x");
    r.local.kernel = "6.18.0";
    r.local.cpu_model = "Test CPU";
    r.local.cpu_count = 2;
    nm::InterfaceInfo itf;
    itf.name = "nm-a";
    itf.driver = "veth";
    itf.mtu_max = 65535;
    itf.original = {1500, {{"rx-gro", false}}};
    itf.rings = {{"rx", 256}};
    r.local.interface = itf;
    nm::CellResult c;
    c.spec = nm::expand_cells(r.run.config).at(0);
    c.applied_local = nm::EndSettings{9000, {{"tx-tcp-segmentation", false}}};
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
    c.summary["throughput_bps"] = {1, 1e8, 1e8, 0, 1e8, 1e8, 0};
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
