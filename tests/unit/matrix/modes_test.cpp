// The gap test and the placement explanation on fixed data. The expected groups are those of the
// test's second implementation in tests/unit/matrix/stats_reference.py (written from the description in
// matrix/modes.hpp, not from the C++).
#include <catch2/catch.hpp>

#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/modes.hpp"
#include "matrix/report/report.hpp"
#include "matrix/stats.hpp"

using Groups = std::vector<std::vector<size_t>>;

TEST_CASE("find_modes splits the lab's single stream into its two modes and leaves noise whole", "[unit]") {
    // all-off/mtu8192/tcp-p1 on the lab (README), Gbit/s.
    CHECK(nm::find_modes({8.0, 13.2, 13.4, 8.3, 12.8, 8.6, 13.2, 8.5, 13.3, 13.0}) == Groups{{0, 3, 5, 7}, {1, 2, 4, 6, 8, 9}});
    // iperf3's ten runs: a lone 11.9 is no mode, and it leaves the rest one spread.
    CHECK(nm::find_modes({8.5, 8.6, 8.5, 8.6, 8.3, 8.1, 7.2, 7.3, 7.3, 11.9}) == Groups{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}});
    // Three modes, evenly spaced.
    CHECK(nm::find_modes({5.0, 5.1, 9.0, 9.2, 9.1, 14.0, 14.3, 5.05, 14.1}) == Groups{{0, 1, 7}, {2, 3, 4}, {5, 6, 8}});
    // 5% noise, eight runs: one mode.
    CHECK(nm::find_modes({10.0, 10.4, 9.7, 10.9, 9.5, 10.2, 10.6, 9.9}) == Groups{{0, 1, 2, 3, 4, 5, 6, 7}});
    // Five runs are never split, however far apart.
    CHECK(nm::find_modes({8.0, 8.1, 13.0, 13.1, 13.2}) == Groups{{0, 1, 2, 3, 4}});
    // A gap under 5% of the median is no mode, even between tight groups.
    CHECK(nm::find_modes({10.0, 10.01, 10.02, 10.3, 10.31, 10.32}).size() == 1);
    CHECK(nm::find_modes({}).empty());
}

namespace {

// A run at `gbps` whose receive softirq ran on `softirq_cpu` and whose receiver thread on `receiver_cpu`
// (sender on CPU 0).
nm::RunResult placed_run(double gbps, uint32_t softirq_cpu, uint32_t receiver_cpu) {
    nm::RunResult run;
    run.throughput_bps = gbps * 1e9;
    run.sender.placement = {0};
    run.receiver.placement = {receiver_cpu};
    run.receiver.receive_path.incoming_cpus = {softirq_cpu};
    return run;
}

}  // namespace

TEST_CASE("cell_modes summarizes each mode and names the placement that lines up with them", "[unit]") {
    std::vector<nm::RunResult> runs;
    // Slow runs: softirq on the receiver's CPU; fast runs: elsewhere (one fast run breaks the rule).
    for (double g : {8.0, 8.3, 8.5}) runs.push_back(placed_run(g, 1, 1));
    for (double g : {13.2, 13.4, 12.8, 13.3}) runs.push_back(placed_run(g, 0, 1));
    runs.push_back(placed_run(13.0, 1, 1));
    nm::PrecisionSpec precision;
    precision.ci_pct = 5;
    const auto cm = nm::cell_modes(runs, "throughput_bps", 95, precision);
    REQUIRE(cm);
    REQUIRE(cm->modes.size() == 2);
    CHECK(cm->modes[0].runs == std::vector<size_t>{0, 1, 2});
    CHECK(cm->modes[1].runs == std::vector<size_t>{3, 4, 5, 6, 7});
    CHECK(cm->modes[0].summary.median == Catch::Detail::Approx(8.3e9));
    CHECK(cm->modes[1].summary.median == Catch::Detail::Approx(13.2e9));
    CHECK(cm->modes[0].summary.n == 3);
    // Three runs make no 95% interval: the mode's precision is not met.
    CHECK(cm->modes[0].precision_met == false);
    // 7 of 8 runs line up (87.5%): under 90%, so no explanation is claimed.
    CHECK(cm->placement_by.empty());
    CHECK_THAT(cm->explanation, Catch::Contains("no recorded placement"));

    runs.pop_back();
    runs.push_back(placed_run(13.0, 0, 1));
    const auto fixed = nm::cell_modes(runs, "throughput_bps", 95, std::nullopt);
    REQUIRE(fixed);
    CHECK(fixed->placement_by == "softirq and receiver");
    CHECK(fixed->modes[0].placement == "same CPU");
    CHECK(fixed->modes[0].placement_runs == 3);
    CHECK(fixed->modes[1].placement == "different CPUs");
    CHECK(fixed->modes[1].placement_runs == 5);
    CHECK(fixed->explanation == "runs near 8.30 Gbit/s: softirq and receiver: same CPU, 3 of 3; runs near 13.2 Gbit/s: different CPUs, 5 of 5");
    CHECK_FALSE(fixed->modes[0].precision_met);

    // The results file keeps them: a round trip.
    const nm::CellModes back = nm::Json(*fixed).get<nm::CellModes>();
    CHECK(back.explanation == fixed->explanation);
    CHECK(back.modes.size() == 2);
    CHECK(back.modes[1].runs == fixed->modes[1].runs);
    CHECK(back.modes[1].summary.median == fixed->modes[1].summary.median);

    // One mode: none recorded.
    std::vector<nm::RunResult> one;
    for (double g : {9.0, 9.1, 9.2, 9.05, 9.15, 9.12}) one.push_back(placed_run(g, 0, 1));
    CHECK_FALSE(nm::cell_modes(one, "throughput_bps", 95, std::nullopt));
}

TEST_CASE("run_placement reads the softirq CPU, the threads' CPUs and the receive queue", "[unit]") {
    nm::RunResult run = placed_run(10, 1, 1);
    run.receiver.receive_path.incoming_napi_ids = {8193};
    const auto p = nm::run_placement(run);
    const std::vector<std::pair<std::string, std::string>> want{
        {"softirq and receiver", "same CPU"}, {"sender and receiver threads", "different CPUs"},
        {"receive softirq", "CPU 1"},         {"receiver thread", "CPU 1"},
        {"sender thread", "CPU 0"},           {"receive queue", "NAPI 8193"}};
    CHECK(p == want);
    CHECK(nm::run_placement(nm::RunResult{}).empty());
}

TEST_CASE("The matrix shows a cell's modes with their run counts, the unit once when the modes share it", "[unit]") {
    nm::ResultsFile r;
    r.run.config = nm::parse_sweep_config_text(R"({"name": "t", "offloads": [{"name": "on", "features": {}}], "mtu": [1500],
        "traffic": [{"name": "p1", "streams": 1}, {"name": "p10", "streams": 10}]})",
                                               "t");
    const auto cells = nm::expand_cells(r.run.config);
    const std::vector<std::vector<double>> gbps{{8.0, 13.2, 13.4, 8.3, 12.8, 8.6, 13.2}, {0.644, 0.65, 0.64, 0.66, 1.69, 1.71}};
    for (size_t i = 0; i < cells.size(); ++i) {
        nm::CellResult c;
        c.spec = cells[i];
        for (double g : gbps[i]) c.runs.push_back(placed_run(g, 0, 1));
        c.summary = nm::summarize_runs(c.runs);
        r.cells.push_back(c);
    }
    const auto table = nm::build_matrix(r, "throughput_bps");
    REQUIRE(table.rows.size() == 2);
    CHECK(nm::matrix_entry_text(table.rows[0].entries[0], "throughput_bps") == "8.30 | 13.2 Gbit/s (3:4) (0/0%)");
    CHECK(nm::matrix_entry_text(table.rows[1].entries[0], "throughput_bps") == "647 Mbit/s | 1.70 Gbit/s (4:2) (0/0%)");
    const auto text = nm::render_matrix(table, nm::TableFormat::Text);
    CHECK_THAT(text, Catch::Contains("a | b (m:n) = the runs fall into modes (gap test: the sorted runs cut into 2 or 3 modes"));
    CHECK_THAT(text, Catch::Contains("2 of 2 cells"));
    CHECK_THAT(text, Catch::Contains("on/mtu1500/p1: 2 modes; no recorded placement"));
}
