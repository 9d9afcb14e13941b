#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/base/error.hpp"
#include "core/device/device_codec.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::CellStatus;
using nm::test::cell;
using nm::test::FakeDeviceControl;
using nm::test::TempDir;
using nm::test::World;

namespace {

// A sweep config: two profiles, two MTUs, two tests, 2 repetitions unless patched. These tests check the
// sequential order (each cell's repetitions back to back), whose steps they can name in turn; the
// shuffled rounds are in runner_order_test.cpp.
nm::SweepConfig make_config(const std::string& patch = "{}") {
    return nm::test::sweep_config({nm::test::kEightCellSweep, R"({"repetitions": 2, "order": "sequential"})", patch});
}

/// Every cell at MTU 9000 of `r` has `status` and `error` and was not measured; every other cell is ok.
void check_jumbo_cells(const nm::ResultsFile& r, CellStatus status, const std::string& error) {
    for (const auto& c : r.cells) {
        INFO(c.spec.key);
        if (c.spec.mtu == 9000) {
            CHECK(c.status == status);
            CHECK(c.error == error);
            CHECK(c.runs.empty());
        } else {
            CHECK(c.status == CellStatus::Ok);
        }
    }
}

std::vector<std::string> keys(const nm::ResultsFile& r) {
    std::vector<std::string> out;
    for (const auto& c : r.cells) out.push_back(c.spec.key);
    return out;
}

}  // namespace

TEST_CASE("A sweep runs every cell in order, measures each repetitions times, records the effective state and restores", "[unit]") {
    World w;
    const auto config = make_config();
    const auto out = w.run(config);
    CHECK_FALSE(out.interrupted);
    CHECK(keys(out.results) == std::vector<std::string>{"all-on/mtu1500/tcp-p1", "all-on/mtu1500/tcp-p10", "all-on/mtu9000/tcp-p1",
                                                        "all-on/mtu9000/tcp-p10", "all-off/mtu1500/tcp-p1", "all-off/mtu1500/tcp-p10",
                                                        "all-off/mtu9000/tcp-p1", "all-off/mtu9000/tcp-p10"});
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key);
        CHECK(c.status == CellStatus::Ok);
        CHECK(c.runs.size() == 2);
        CHECK(c.summary.at("throughput_bps").n == 2);
        REQUIRE(c.applied_local);
        REQUIRE(c.applied_remote);
        CHECK(c.applied_local->mtu == c.spec.mtu);
        CHECK(c.applied_remote->mtu == c.spec.mtu);
    }
    const auto& off = cell(out.results, "all-off/mtu9000/tcp-p1");
    CHECK(off.applied_local->features.at("tx-tcp-segmentation") == false);
    CHECK(off.applied_local->features.at("rx-checksum") == true);  // not in the profile: original
    CHECK(off.applied_local->features.count("rx-lro") == 0);       // fixed: not part of the cell's state
    CHECK(cell(out.results, "all-on/mtu1500/tcp-p1").applied_remote->features.at("rx-gro") == true);

    // The engine got the config's timing and the lab's server address.
    REQUIRE(w.traffic.specs.size() == 16);
    CHECK(w.traffic.specs[0].host == "198.18.0.2");
    CHECK(w.traffic.specs[0].duration_s == 1);
    CHECK(w.traffic.specs[0].omit_s == 0.5);
    CHECK(w.traffic.specs[2].streams == 10);
    CHECK(w.probe.probed == std::vector<uint32_t>{1500, 1500, 9000, 9000, 1500, 1500, 9000, 9000});

    // Identity of both ends, taken before the first change.
    REQUIRE(out.results.local.interface);
    CHECK(out.results.local.interface->name == "nm-a");
    CHECK(out.results.local.interface->driver == "veth");
    CHECK(out.results.local.interface->original.mtu == 1500);
    CHECK(out.results.local.interface->original.features.at("rx-gro") == false);
    REQUIRE(out.results.remote.interface);
    CHECK(out.results.remote.interface->netns == "lab-b");
    CHECK(out.results.local.kernel == "6.18.0-test");
    CHECK_FALSE(out.results.run.finished.empty());
    CHECK(out.results.run.config.name == config.name);

    w.check_restored();
    CHECK(w.journal.entries().empty());
    CHECK(w.journal.remember_calls == 2);
    CHECK(w.observer.done.size() == 8);
    CHECK(w.observer.started == std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(w.observer.etas.back() == 0);
}

TEST_CASE("Every cell starts from the original state: features a profile does not name are at their original value", "[unit]") {
    World w;
    // The first profile turns GSO off; the second names only GRO, so GSO must be back on in its cells.
    const auto config = make_config(R"({"offloads": [{"name": "gso-off", "features": {"gso": "off"}},
                                                     {"name": "gro-on", "features": {"gro": "on"}}],
                                        "mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 1})");
    std::vector<bool> gso_during_run;
    w.traffic.on_run = [&](size_t, const nm::TestSpec&) {
        gso_during_run.push_back(w.local.active("nm-a", "tx-generic-segmentation"));
        CHECK(w.remote.state("nm-b").features.at("tx-generic-segmentation").active == gso_during_run.back());
    };
    const auto out = w.run(config);
    CHECK(gso_during_run == std::vector<bool>{false, true});
    CHECK(cell(out.results, "gro-on/mtu1500/tcp-p1").applied_local->features.at("tx-generic-segmentation") == true);
    CHECK(cell(out.results, "gro-on/mtu1500/tcp-p1").applied_local->features.at("rx-gro") == true);
    // One apply per end per cell, and one reset per end when the profile changes (in kernel names).
    CHECK(w.local.count("apply") == 2 + 1 + 1);  // cell 1, reset, cell 2, final restore
    const auto& reset =
        w.local
            .calls()[std::size_t(std::find_if(w.local.calls().begin(), w.local.calls().end(),
                                              [](const auto& c) { return c.op == "apply" && c.settings.features.count("tx-generic-segmentation"); }) -
                                 w.local.calls().begin())];
    CHECK(reset.settings.features == std::map<std::string, bool>{{"tx-generic-segmentation", true}});
    w.check_restored();
}

TEST_CASE("tx off takes TSO with it: a cell whose effective state equals an earlier one is a duplicate, not measured", "[unit]") {
    World w;
    const auto config = make_config(R"({"offloads": [{"name": "tx-off", "features": {"tx": "off"}},
                                                     {"name": "tx-tso-off", "features": {"tx": "off", "tso": "off"}}],
                                        "mtu": [1500], "traffic": [{"streams": 1}]})");
    const auto out = w.run(config);
    const auto& first = cell(out.results, "tx-off/mtu1500/tcp-p1");
    const auto& dup = cell(out.results, "tx-tso-off/mtu1500/tcp-p1");
    CHECK(first.status == CellStatus::Ok);
    CHECK(first.applied_local->features.at("tx-tcp-segmentation") == false);  // the side effect, recorded
    CHECK(dup.status == CellStatus::Duplicate);
    CHECK(dup.duplicate_of == "tx-off/mtu1500/tcp-p1");
    CHECK(dup.runs.empty());
    CHECK(w.traffic.specs.size() == 2);  // only the first cell's repetitions
    w.check_restored();
}

TEST_CASE("A fixed feature makes a cell infeasible with the reason and the sweep goes on", "[unit]") {
    World w;
    w.local.fix("nm-a", "rx-gro");  // fixed off on the client end
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 1})");
    const auto out = w.run(config);
    const auto& on = cell(out.results, "all-on/mtu1500/tcp-p1");
    CHECK(on.status == CellStatus::Infeasible);
    CHECK(on.error == "nm-a: gro (rx-gro) is fixed off");
    CHECK(on.runs.empty());
    CHECK(cell(out.results, "all-off/mtu1500/tcp-p1").status == CellStatus::Ok);
    w.check_restored();
}

TEST_CASE("A run that fails or stalls is recorded with its error and the sweep goes on, and originals come back", "[unit]") {
    World w;
    w.traffic.fail_runs = {1};   // first repetition of the first cell
    w.traffic.stall_runs = {2};  // first repetition of the second cell (the first cell stopped at its failure)
    const auto config = make_config(R"({"mtu": [9000], "repetitions": 2})");
    const auto out = w.run(config);
    const auto& failed = cell(out.results, "all-on/mtu9000/tcp-p1");
    CHECK(failed.status == CellStatus::Failed);
    CHECK(failed.error == "repetition 1: connect to 198.18.0.2: Connection refused");
    const auto& stalled = cell(out.results, "all-on/mtu9000/tcp-p10");
    CHECK(stalled.status == CellStatus::Stalled);
    CHECK(stalled.error == "repetition 1: no data for 1 s");
    CHECK(stalled.runs.size() == 1);
    CHECK(cell(out.results, "all-off/mtu9000/tcp-p1").status == CellStatus::Ok);
    CHECK(cell(out.results, "all-off/mtu9000/tcp-p10").status == CellStatus::Ok);
    w.check_restored();
}

TEST_CASE("A run whose worker failed (status failed) fails its cell with the worker's error, and the sweep goes on", "[unit]") {
    World w;
    w.traffic.worker_error_runs = {1};
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 2})");
    const auto out = w.run(config);
    const auto& failed = cell(out.results, "all-on/mtu1500/tcp-p1");
    CHECK(failed.status == CellStatus::Failed);
    CHECK(failed.error == "repetition 1: stream 0: sendmmsg: Message too long");
    REQUIRE(failed.runs.size() == 1);  // the failed run is kept, its figures are not taken for a result
    CHECK(failed.runs[0].status == nm::RunStatus::Failed);
    CHECK(cell(out.results, "all-off/mtu1500/tcp-p1").status == CellStatus::Ok);
    w.check_restored();
}

TEST_CASE("A device error while applying fails that cell only, and the next cell starts from the original", "[unit]") {
    World w;
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 1})");
    w.remote.fail_next_apply("nm-b", nm::ErrorKind::Failed);
    const auto out = w.run(config);
    CHECK(cell(out.results, "all-on/mtu1500/tcp-p1").status == CellStatus::Failed);
    CHECK(cell(out.results, "all-on/mtu1500/tcp-p1").error == "apply nm-b: fake failure");
    CHECK(cell(out.results, "all-off/mtu1500/tcp-p1").status == CellStatus::Ok);
    w.check_restored();
}

TEST_CASE("A path that drops jumbo frames gives path_mtu_blackhole for those cells, without measuring them", "[unit]") {
    World w;
    w.probe.max_mtu = 1500;
    const auto out = w.run(make_config(R"({"repetitions": 1})"));
    check_jumbo_cells(out.results, CellStatus::PathMtuBlackhole, "9000-byte probe: no echo within 1000 ms");
    CHECK(w.traffic.specs.size() == 4);
    w.check_restored();
}

TEST_CASE("Bad input is found before the first change: unknown feature and unknown interface, while an MTU out of range is infeasible", "[unit]") {
    SECTION("unknown feature") {
        World w;
        const auto config = make_config(R"({"offloads": [{"name": "x", "features": {"tso0": "off"}}]})");
        CHECK_THROWS_WITH(w.run(config), "local end: unknown feature \"tso0\" on nm-a");
        CHECK(w.local.count("apply") == 0);
        CHECK(w.remote.count("apply") == 0);
        CHECK(w.journal.remember_calls == 0);
    }
    SECTION("MTU outside the device's range, on the peer end: those cells are infeasible before any change, the others run") {
        World w;
        w.remote.set_mtu_range("nm-b", 68, 1500);
        const auto out = w.run(make_config());
        check_jumbo_cells(out.results, CellStatus::Infeasible,
                          "nm-b (netns lab-b): mtu 9000 outside the device's range 68..1500 (IFLA_MIN_MTU..IFLA_MAX_MTU)");
        // No end was ever asked for 9000.
        for (const auto* d : {&w.local, &w.remote}) {
            for (const auto& call : d->calls()) CHECK_FALSE((call.op == "apply" && call.settings.mtu == 9000u));
        }
        w.check_restored();
    }
    SECTION("unknown interface") {
        World w;
        w.target.local.ifname = "nm-zz";
        CHECK_THROWS_WITH(w.run(make_config()), "interface nm-zz: no such interface");
        CHECK(w.local.count("apply") == 0);
    }
}

TEST_CASE("A peer that cannot be controlled refuses a config that changes it, before changing anything", "[unit]") {
    World w;
    w.target.remote = {nullptr, "", "no agent control"};
    try {
        w.run(make_config());
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        CHECK_THAT(e.what(), Catch::Contains("applies the MTU to the peer end, which cannot be changed from here (no agent control)"));
    }
    CHECK(w.local.count("apply") == 0);
    // Local-only settings run, and the peer's side is not recorded.
    const auto out = w.run(make_config(R"({"apply_to": "local", "mtu": [1500], "repetitions": 1})"));
    CHECK(out.results.cells.size() == 4);
    CHECK_FALSE(out.results.cells[0].applied_remote);
    CHECK_FALSE(out.results.remote.interface);
    CHECK(w.remote.count("apply") == 0);
}

TEST_CASE("The results file is rewritten atomically after every cell", "[unit]") {
    World w;
    TempDir dir;
    nm::SweepOptions options;
    options.output_path = dir.file("r.json");
    size_t runs_seen = 0;
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        // Before each cell's first repetition, the file has every cell before it.
        if (n % 2 == 1) {
            const auto file = nm::load_results(options.output_path);
            CHECK(file.cells.size() == (n - 1) / 2);
            CHECK(file.run.finished.empty());
        }
        ++runs_seen;
    };
    w.run(make_config(), options);
    CHECK(runs_seen == 16);
    const auto file = nm::load_results(options.output_path);
    CHECK(file.cells.size() == 8);
    CHECK_FALSE(file.run.finished.empty());
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++files;
    CHECK(files == 1);  // no temporary file left
}

TEST_CASE("A stop in the middle of a cell leaves a valid file with its finished runs, restores, and --resume runs only the rest", "[unit]") {
    TempDir dir;
    nm::SweepOptions options;
    options.output_path = dir.file("r.json");
    options.tool_version = "0.1.0";
    const auto config = make_config();
    std::vector<double> first_cell_figures;
    {
        World w;
        std::stop_source stop;
        w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
            if (n == 4) stop.request_stop();  // second repetition of the second cell
        };
        const auto out = w.run(config, options, stop.get_token());
        CHECK(out.interrupted);
        // The second cell keeps the repetition it finished; the one cut short is not a figure.
        CHECK(keys(out.results) == std::vector<std::string>{"all-on/mtu1500/tcp-p1", "all-on/mtu1500/tcp-p10"});
        CHECK(out.results.cells[1].runs.size() == 1);
        for (const auto& c : out.results.cells) first_cell_figures.push_back(c.runs[0].throughput_bps);
        w.check_restored();
        const auto file = nm::load_results(options.output_path);
        CHECK(file.cells.size() == 2);
        CHECK(file.run.finished.empty());
    }
    {
        World w;
        options.resume = nm::load_results(options.output_path);
        options.tool_commit = "0123456789ab";  // another build continues the file
        const auto out = w.run(config, options);
        CHECK_FALSE(out.interrupted);
        CHECK_THAT(w.observer.notes,
                   Catch::VectorContains(
                       std::string("the file was begun by nicmatrix 0.1.0 and is continued by 0.1.0 (0123456789ab): its cells will hold figures of "
                                   "two builds (run.resumed records which)")));
        REQUIRE(out.results.run.resumed.size() == 1);
        CHECK(out.results.run.resumed[0].tool.commit == "0123456789ab");
        CHECK(out.results.tool.commit.empty());  // the first run's build stays the file's
        options.tool_commit.clear();
        CHECK(out.cells_run == 7);
        CHECK(w.traffic.specs.size() == 1 + 6 * 2);  // the rest of the second cell, then six cells
        CHECK(keys(out.results).size() == 8);
        CHECK(out.results.cells[0].spec.key == "all-on/mtu1500/tcp-p1");
        CHECK(out.results.cells[0].runs[0].throughput_bps == first_cell_figures[0]);  // kept, not re-measured
        REQUIRE(out.results.cells[1].runs.size() == 2);
        CHECK(out.results.cells[1].runs[0].throughput_bps == first_cell_figures[1]);
        CHECK(w.observer.started.front() == 2);
        const auto file = nm::load_results(options.output_path);
        CHECK(file.cells.size() == 8);
        CHECK_FALSE(file.run.finished.empty());
        w.check_restored();
    }
    {
        World w;
        options.resume = nm::load_results(options.output_path);
        CHECK_THROWS_WITH(w.run(make_config(R"({"repetitions": 5})"), options),
                          Catch::Contains("the file was made with a different sweep config (\"repetitions\" differs)"));
        CHECK(w.local.count("apply") == 0);
    }
}

TEST_CASE("A peer agent of another build is noted when the sweep starts, one of the same build or without a version is not", "[unit]") {
    nm::SweepOptions options;
    options.tool_version = "0.1.0";
    options.tool_commit = "1c161a64d529";
    const auto config = make_config(R"({"mtu": [1500], "repetitions": 1})");
    const std::string note =
        "the peer's agent is nicmatrix 0.1.0 (0123456789ab) and this sweep 0.1.0 (1c161a64d529): the two ends' figures "
        "come from different builds (hosts.remote.tool records the agent's)";
    for (const std::string commit : {"0123456789ab", "1c161a64d529", ""}) {
        World w;
        w.remote_host.tool = nm::ToolInfo{.version = commit.empty() ? "" : "0.1.0", .commit = commit};
        INFO("agent's commit \"" << commit << "\"");
        const auto out = w.run(config, options);
        CHECK(out.results.remote.tool.commit == commit);
        const auto of_the_kind = std::count_if(w.observer.notes.begin(), w.observer.notes.end(),
                                               [](const std::string& n) { return n.find("the peer's agent is") != std::string::npos; });
        if (commit == "0123456789ab") {
            CHECK_THAT(w.observer.notes, Catch::VectorContains(note));
            CHECK(of_the_kind == 1);
        } else {
            CHECK(of_the_kind == 0);
        }
    }
}

TEST_CASE("A journal left by a killed sweep is restored before the originals are read", "[unit]") {
    World w;
    // What a sweep killed with SIGKILL leaves: the journal has the original, the device has a cell's settings.
    w.journal.remember(w.local.read("nm-a"));
    w.local.apply("nm-a", nm::LinkSettings{9000, {{"tso", false}}, {}});
    const auto out = w.run(make_config(R"({"repetitions": 1, "mtu": [1500]})"));
    REQUIRE(out.results.local.interface);
    CHECK(out.results.local.interface->original.mtu == 1500);
    CHECK(out.results.local.interface->original.features.at("tx-tcp-segmentation") == true);
    REQUIRE_FALSE(w.observer.notes.empty());
    CHECK(w.observer.notes[0] == "restored nm-a from a leftover journal");
    w.check_restored();
}

TEST_CASE("An interface another live process holds stops the sweep before anything changes, naming it", "[unit]") {
    World w;
    w.journal.held["lab-b/nm-b"] = 4242;
    try {
        w.run(make_config(R"({"repetitions": 1, "mtu": [1500]})"));
        FAIL("the sweep did not refuse");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK_THAT(e.what(), Catch::Contains("nm-b") && Catch::Contains("4242"));
    }
    CHECK(w.local.count("apply") == 0);
    CHECK(w.remote.count("apply") == 0);
    CHECK(w.traffic.specs.empty());
    CHECK(w.journal.entries().empty());  // the end claimed first was released again
    // The entries of a live process were listed, not restored.
    REQUIRE_FALSE(w.observer.notes.empty());
    CHECK_THAT(w.observer.notes[0], Catch::Contains("nm-b (netns lab-b)") && Catch::Contains("left alone"));
    w.check_restored();
}

TEST_CASE("The sweep restores from the originals it holds, even when its journal entries were taken away", "[unit]") {
    World w;
    // A foreign `restore --force` (or a lost file) empties the journal in the middle of the sweep.
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 2) {
            for (const auto& [key, state] : std::map<std::string, nm::LinkState>(w.journal.entries())) w.journal.release(state);
        }
    };
    const auto out = w.run(make_config(R"({"repetitions": 1, "mtu": [1500, 9000]})"));
    CHECK_FALSE(out.interrupted);
    CHECK(w.journal.entries().empty());
    w.check_restored();
    REQUIRE(out.restored.size() == 2);
    for (const auto& r : out.restored) CHECK(r.note.empty());
}

TEST_CASE("A final restore that does not hold keeps the journal entry and fails the sweep after saving", "[unit]") {
    World w;
    TempDir dir;
    nm::SweepOptions options;
    options.output_path = dir.file("r.json");
    // After the last cell's run, the next apply on nm-a is the final restore: the device refuses it.
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 2) w.local.fail_next_apply("nm-a", nm::ErrorKind::Failed);
    };
    const auto config = make_config(R"({"repetitions": 1, "mtu": [1500], "traffic": [{"streams": 1}]})");
    CHECK_THROWS_WITH(w.run(config, options), Catch::Contains("nm-a") && Catch::Contains("journal keeps its original"));
    CHECK(w.journal.entries().count("lab-a/nm-a") == 1);
    CHECK(nm::load_results(dir.file("r.json")).cells.size() == 2);
}

TEST_CASE("An exception out of the engine still restores the interfaces", "[unit]") {
    World w;
    w.traffic.on_run = [](size_t, const nm::TestSpec&) { throw std::runtime_error("engine bug"); };
    CHECK_THROWS_WITH(w.run(make_config()), "engine bug");
    w.check_restored();
    CHECK(w.journal.entries().empty());
}

TEST_CASE("Time outside measuring is recorded per cell as overhead_s, and cooldown waits between measured cells", "[unit]") {
    World w;
    w.local.on_apply = [&] { w.clock.advance(std::chrono::milliseconds(100)); };
    w.remote.on_apply = [&] { w.clock.advance(std::chrono::milliseconds(150)); };
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 1, "cooldown_s": 3})");
    const auto before = w.clock.now();
    const auto out = w.run(config);
    CHECK(out.results.cells[0].overhead_s == Catch::Detail::Approx(0.25));
    CHECK(out.results.cells[1].overhead_s == Catch::Detail::Approx(0.5));  // with the reset to the original
    // One cooldown (not after the last cell), the applies, the final restore, and before each of the two
    // repetitions the 200 ms look at the machine's load.
    CHECK(w.load.samples == 2);
    CHECK(std::chrono::duration<double>(w.clock.now() - before).count() == Catch::Detail::Approx(3 + 0.25 + 0.5 + 0.25 + 2 * 0.2));
}

TEST_CASE("plan_sweep lists the cells and the settings each end gets, and what a resumed file has", "[unit]") {
    const auto config = make_config(R"({"apply_to": {"offloads": "local", "mtu": "both"}})");
    auto plan = nm::plan_sweep(nm::make_sweep_plan(config), std::nullopt);
    REQUIRE(plan.size() == 8);
    CHECK(nm::describe_settings(plan[0].local) == "mtu=1500 gro=on gso=on sg=on tso=on tx=on");
    CHECK(nm::describe_settings(plan[0].remote) == "mtu=1500");
    nm::ResultsFile partial;
    partial.cells.resize(1);
    partial.cells[0].spec.key = "all-on/mtu9000/tcp-p1";
    plan = nm::plan_sweep(nm::make_sweep_plan(config), partial);
    CHECK(plan[2].done);
    CHECK_FALSE(plan[0].done);
}

TEST_CASE("apply_to dut changes only the device under test's ports and restores them", "[unit]") {
    World w;
    FakeDeviceControl dut;
    dut.add_interface("dut-a", "lab-dut");
    dut.add_interface("dut-b", "lab-dut");
    w.journal.add_device(&dut);
    w.target.dut = {{&dut, "dut-a", ""}, {&dut, "dut-b", ""}};
    const auto dut_a = dut.state("dut-a");
    const auto config = make_config(R"({"apply_to": "dut", "mtu": [1500, 4000], "repetitions": 1, "traffic": [{"streams": 1}]})");
    const auto out = w.run(config);
    REQUIRE(out.results.cells.size() == 4);
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key);
        CHECK(c.status == CellStatus::Ok);
        REQUIRE(c.applied_dut.size() == 2);
        CHECK(c.applied_dut.at("dut-b").mtu == c.spec.mtu);
        CHECK(c.applied_dut.at("dut-a").features.at("tx-tcp-segmentation") == (c.spec.offloads == "all-on"));
        CHECK(c.applied_local->mtu == 1500);  // the ends stay as they were
    }
    CHECK(w.local.count("apply") == 0);
    CHECK(w.remote.count("apply") == 0);
    CHECK(dut.count("apply") > 0);
    CHECK(dut.state("dut-a").mtu == dut_a.mtu);
    CHECK(dut.state("dut-a").features.at("rx-gro").wanted == dut_a.features.at("rx-gro").wanted);
    w.check_restored();
    // The cells read back from the file keep their DUT settings.
    const auto back = nm::Json(out.results).get<nm::ResultsFile>();
    CHECK(back.cells[0].applied_dut.size() == 2);
}

TEST_CASE("apply_to dut without a device under test is refused before anything changes", "[unit]") {
    World w;
    const auto config = make_config(R"({"apply_to": "dut"})");
    CHECK_THROWS_WITH(w.run(config), Catch::Contains("--topology bridge"));
    CHECK(w.local.count("apply") == 0);
}
