#include <catch2/catch.hpp>

#include <fstream>

#include "core/base/error.hpp"
#include "matrix/results_store.hpp"
#include "matrix/sweep_request.hpp"
#include "tests/support/matrix_world.hpp"

namespace {

const std::string kConfig = std::string(NM_SOURCE_DIR) + "/configs/offload-mtu.json";

}  // namespace

TEST_CASE("prepare_sweep: the output defaults to results/<name>-<stamp>.json, or to the file being resumed", "[unit]") {
    nm::SweepRequest req;
    req.config_file = kConfig;
    auto p = nm::prepare_sweep(req);
    CHECK(p.config.name == "offload-mtu");
    CHECK_THAT(p.output, Catch::Matches(R"(results/offload-mtu-\d{8}T\d{6}Z\.json)"));
    CHECK_FALSE(p.resume);
    req.output = "x.json";
    CHECK(nm::prepare_sweep(req).output == "x.json");

    nm::test::TempDir dir;
    nm::ResultsFile partial;
    partial.run.started = "2026-01-01T00:00:00Z";
    partial.run.config = p.config;
    nm::save_results(partial, dir.file("partial.json"));
    req.output.clear();
    req.resume = dir.file("partial.json");
    p = nm::prepare_sweep(req);
    CHECK(p.output == dir.file("partial.json"));
    REQUIRE(p.resume);

    partial.run.config.repetitions = 9;
    nm::save_results(partial, dir.file("other.json"));
    req.resume = dir.file("other.json");
    CHECK_THROWS_WITH(nm::prepare_sweep(req), Catch::StartsWith("--resume " + dir.file("other.json") + ": the file was made with a different sweep config"));
}

TEST_CASE("execute_sweep: lab or peer, not both and not neither, before anything else", "[unit]") {
    nm::SweepRequest req;
    req.config_file = kConfig;
    const auto p = nm::prepare_sweep(req);
    nm::SweepBackends none;   // any use of a backend would throw bad_function_call
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: give either --lab or --iface IF --peer HOST");
    req.lab = true;
    req.iface = "eth9";
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: give either --lab or --iface IF --peer HOST");
    req.lab = false;
    CHECK_THROWS_WITH(nm::execute_sweep(req, p, none, nullptr, {}), "sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)");
}
