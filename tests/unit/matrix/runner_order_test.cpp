// The measuring loop with the fakes: shuffled rounds (the default), precision on request, the time
// budget, the interference check, and resume of partly measured cells.
#include <catch2/catch.hpp>

#include <regex>

#include "core/traffic/rr_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/matrix_world.hpp"

using nm::CellStatus;
using nm::test::cell;
using nm::test::TempDir;
using nm::test::World;

namespace {

// Two profiles x two MTUs x two tests = 8 cells, 3 repetitions, the shuffled order by default.
nm::SweepConfig make_config(const std::string& patch = "{}") {
    return nm::test::sweep_config({nm::test::kEightCellSweep, R"({"repetitions": 3})", patch});
}

nm::SweepOptions seeded(uint64_t seed) {
    nm::SweepOptions o;
    o.seed = seed;
    return o;
}

// The state of the client end during a run, to check that each visit ran under its cell's settings.
struct Seen {
    uint32_t mtu;
    bool tso;
    uint32_t streams;
};

}  // namespace

TEST_CASE("Shuffled rounds: every cell once per round in a shuffled order, never twice in a row, under its own settings", "[unit]") {
    World w;
    const auto config = make_config();
    CHECK(config.order == nm::SweepOrder::Shuffled);  // the default
    std::vector<Seen> seen;
    w.traffic.on_run = [&](size_t, const nm::TestSpec& spec) {
        seen.push_back({w.local.state("nm-a").mtu, w.local.active("nm-a", "tx-tcp-segmentation"), spec.streams});
    };
    const auto out = w.run(config, seeded(42));
    const auto cells = nm::expand_cells(config);
    const auto& visits = w.observer.started;  // 1-based cell numbers, one per visit
    REQUIRE(visits.size() == 24);
    for (size_t round = 0; round < 3; ++round) {
        std::vector<size_t> in_round(visits.begin() + static_cast<long>(round * 8), visits.begin() + static_cast<long>(round * 8 + 8));
        std::sort(in_round.begin(), in_round.end());
        CHECK(in_round == std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8});
        CHECK(w.observer.rounds[round * 8] == round + 1);
    }
    for (size_t i = 1; i < visits.size(); ++i) {
        INFO("visit " << i);
        CHECK(visits[i] != visits[i - 1]);
    }
    CHECK_FALSE(std::is_sorted(visits.begin(), visits.begin() + 8));
    // Each visit measured its own cell's settings, whatever the previous visit left.
    REQUIRE(seen.size() == visits.size());
    for (size_t i = 0; i < visits.size(); ++i) {
        const auto& c = cells[visits[i] - 1];
        INFO(c.key);
        CHECK(seen[i].mtu == c.mtu);
        CHECK(seen[i].tso == (c.offloads == "all-on"));
        CHECK(seen[i].streams == c.traffic.test.streams);
    }
    // Recorded in the config's order, each with its three runs, each run with its start time.
    REQUIRE(out.results.cells.size() == 8);
    const std::regex stamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
    for (size_t i = 0; i < 8; ++i) {
        CHECK(out.results.cells[i].spec.key == cells[i].key);
        REQUIRE(out.results.cells[i].runs.size() == 3);
        for (const auto& r : out.results.cells[i].runs) CHECK(std::regex_match(r.started, stamp));
    }
    CHECK(out.results.run.order.mode == nm::SweepOrder::Shuffled);
    CHECK(out.results.run.order.seed == 42u);
    const nm::Json j = out.results;
    CHECK(j.at("run").at("order") == nm::Json::parse(R"({"mode": "shuffled", "seed": 42})"));
    w.check_restored();
}

TEST_CASE("The same seed gives the same order, another seed another, and the sequential order keeps cells together", "[unit]") {
    const auto order_of = [](const nm::SweepConfig& config, const nm::SweepOptions& options) {
        World w;
        w.run(config, options);
        return w.observer.started;
    };
    const auto a = order_of(make_config(), seeded(7));
    CHECK(order_of(make_config(), seeded(7)) == a);
    CHECK(order_of(make_config(), seeded(8)) != a);
    // Without --seed a random one is drawn, and recorded so it can be given back.
    World w;
    const auto out = w.run(make_config());
    REQUIRE(out.results.run.order.seed);
    CHECK(order_of(make_config(), seeded(*out.results.run.order.seed)) == w.observer.started);

    World s;
    const auto seq = s.run(make_config(R"({"order": "sequential"})"));
    CHECK(s.observer.started == std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(seq.results.run.order.mode == nm::SweepOrder::Sequential);
    CHECK_FALSE(seq.results.run.order.seed);
    CHECK(s.traffic.specs.size() == 24);
}

TEST_CASE("Decisions of a cell's first visit stand: a duplicate or a blackhole is visited once, the path probed once per cell", "[unit]") {
    World w;
    w.probe.max_mtu = 1500;
    const auto config = make_config(R"({"offloads": [{"name": "tx-off", "features": {"tx": "off"}},
                                                     {"name": "tx-tso-off", "features": {"tx": "off", "tso": "off"}}],
                                        "traffic": [{"streams": 1}]})");
    const auto out = w.run(config, seeded(3));
    // At each MTU the two profiles have the same effective settings: whichever cell comes first is measured
    // (or found a blackhole at 9000), the other is its duplicate.
    std::map<CellStatus, size_t> statuses;
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key);
        ++statuses[c.status];
        if (c.status == CellStatus::Ok) CHECK(c.runs.size() == 3);
        if (c.status != CellStatus::Ok) CHECK(c.runs.empty());
        if (c.status == CellStatus::PathMtuBlackhole) CHECK(c.spec.mtu == 9000);
    }
    CHECK(statuses == std::map<CellStatus, size_t>{{CellStatus::Ok, 1}, {CellStatus::Duplicate, 2}, {CellStatus::PathMtuBlackhole, 1}});
    // 4 first visits (the path probed at the two that are not duplicates), then 2 more of the measured cell.
    CHECK(w.observer.started.size() == 4 + 2);
    CHECK(w.probe.probed.size() == 2);
    CHECK(w.traffic.specs.size() == 3);
    w.check_restored();
}

TEST_CASE("Shuffled: the file is saved after every visit, a stop keeps partly measured cells, and --resume gives them the rest", "[unit]") {
    TempDir dir;
    nm::SweepOptions options = seeded(11);
    options.output_path = dir.file("r.json");
    const auto config = make_config();
    std::map<std::string, std::vector<double>> kept;
    {
        World w;
        std::stop_source stop;
        w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
            // Before every visit the file holds every run measured before it.
            const auto file = nm::load_results(options.output_path);
            size_t runs = 0;
            for (const auto& c : file.cells) runs += c.runs.size();
            CHECK(runs == n - 1);
            if (n == 13) stop.request_stop();  // in round 2
        };
        const auto out = w.run(config, options, stop.get_token());
        CHECK(out.interrupted);
        const auto file = nm::load_results(options.output_path);
        CHECK(file.cells.size() == 8);
        size_t runs = 0;
        for (const auto& c : file.cells) {
            runs += c.runs.size();
            for (const auto& r : c.runs) kept[c.spec.key].push_back(r.throughput_bps);
        }
        CHECK(runs == 12);
        CHECK(file.run.finished.empty());
        CHECK(file.run.order.seed == 11u);
        w.check_restored();
    }
    {
        World w;
        options.resume = nm::load_results(options.output_path);
        options.seed.reset();  // the file's seed is used again
        const auto out = w.run(config, options);
        CHECK_FALSE(out.interrupted);
        CHECK(w.traffic.specs.size() == 24 - 12);
        CHECK(out.results.run.order.seed == 11u);
        for (const auto& c : out.results.cells) {
            INFO(c.spec.key);
            REQUIRE(c.runs.size() == 3);
            const auto& before = kept[c.spec.key];
            for (size_t i = 0; i < before.size(); ++i) CHECK(c.runs[i].throughput_bps == before[i]);  // kept, not re-measured
        }
        CHECK_FALSE(out.results.run.finished.empty());
        w.check_restored();
    }
}

TEST_CASE("Cooldown waits between visits, not after the last", "[unit]") {
    World w;
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "repetitions": 2, "cooldown_s": 3,
                                        "interference": {"sample_ms": 0}})");
    const auto before = w.clock.now();
    w.run(config, seeded(1));
    // 2 cells x 2 repetitions = 4 visits, 3 cooldowns; the fakes take no other time.
    CHECK(std::chrono::duration<double>(w.clock.now() - before).count() == Catch::Detail::Approx(9));
    CHECK(w.load.samples == 0);
}

TEST_CASE("Precision: a steady cell stops when its median's interval is within ci_pct, a noisy one runs to max_repetitions", "[unit]") {
    World w;
    // all-on cells are steady (within ±1%); all-off cells swing between 1 and 2 Gbit/s.
    size_t on_runs = 0, off_runs = 0;
    w.traffic.on_result = [&](size_t, nm::RunResult& r) {
        if (w.local.active("nm-a", "tx-tcp-segmentation")) {
            r.throughput_bps = 10e9 * (0.99 + 0.01 * static_cast<double>(on_runs++ % 3));
        } else {
            r.throughput_bps = off_runs++ % 2 ? 1e9 : 2e9;
        }
    };
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}],
                                        "precision": {"ci_pct": 5, "max_repetitions": 10}})");
    const auto out = w.run(config, seeded(5));
    const auto& steady = cell(out.results, "all-on/mtu1500/tcp-p1");
    const auto& noisy = cell(out.results, "all-off/mtu1500/tcp-p1");
    // 95% needs 6 repetitions (below that [min, max] covers less than 95%).
    CHECK(steady.runs.size() == 6);
    CHECK(steady.precision_met == true);
    CHECK(*steady.summary.at("throughput_bps").median_ci_confidence == Catch::Detail::Approx(96.875));
    CHECK(noisy.runs.size() == 10);
    CHECK(noisy.precision_met == false);
    const nm::Json j = noisy;
    CHECK(j.at("repetitions_run") == 10);
    CHECK(j.at("precision_met") == false);
    // A sweep without a precision records none.
    World plain;
    const auto none = plain.run(make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}]})"));
    CHECK_FALSE(none.results.cells[0].precision_met);
    CHECK(nm::Json(none.results.cells[0]).at("precision_met").is_null());
}

TEST_CASE("Precision: min_repetitions holds even when the interval is tight sooner, and another metric can be asked", "[unit]") {
    World w;
    w.traffic.on_result = [](size_t, nm::RunResult& r) {
        r.throughput_bps = 5e9;
        r.receiver.cpu.util_pct = 50;
    };
    const auto config = make_config(R"({"mtu": [1500], "traffic": [{"streams": 1}], "offloads": [{"name": "x", "features": {}}],
                                        "precision": {"ci_pct": 1, "confidence": 75, "min_repetitions": 5, "metric": "cpu_receiver_pct"}})");
    const auto out = w.run(config, seeded(1));
    CHECK(out.results.cells[0].runs.size() == 5);  // 75% is reachable at 3, but 5 were asked at least
    CHECK(out.results.cells[0].precision_met == true);
    CHECK(*out.results.cells[0].summary.at("cpu_receiver_pct").median_ci_confidence == Catch::Detail::Approx(93.75));
}

TEST_CASE("Precision: without a metric a request/response cell is judged by its transactions/s, a stream cell by its throughput", "[unit]") {
    World w;
    // Both cells' byte rates swing by 2x; the rr cell's transactions/s is steady.
    size_t stream_runs = 0, rr_runs = 0;
    w.traffic.on_result = [&](size_t, nm::RunResult& r) {
        const bool stream = r.spec.pattern == nm::TrafficPattern::Stream;
        r.throughput_bps = (stream ? stream_runs++ : rr_runs++) % 2 ? 1e9 : 2e9;
        if (!stream) {
            r.rr = nm::RrStats{};
            r.rr->transactions_per_s = 30000;
        }
    };
    const auto config = make_config(R"({"mtu": [1500], "offloads": [{"name": "x", "features": {}}],
                                        "traffic": [{"name": "rr", "test": "rr"}, {"name": "stream", "streams": 1}],
                                        "precision": {"ci_pct": 5, "max_repetitions": 8}})");
    const auto out = w.run(config, seeded(3));
    const auto& rr = cell(out.results, "x/mtu1500/rr");
    const auto& stream = cell(out.results, "x/mtu1500/stream");
    CHECK(rr.runs.size() == 6);  // 95% is reached at 6 with a steady figure
    CHECK(rr.precision_met == true);
    CHECK(stream.runs.size() == 8);
    CHECK(stream.precision_met == false);
    // The file says which metric was asked only when one was: none here.
    CHECK_FALSE(nm::Json(out.results.run.config).at("precision").contains("metric"));
    CHECK(nm::precision_metric(*out.results.run.config.precision, rr.spec.traffic.test) == "rr_transactions_per_s");
}

TEST_CASE("The time budget: no repetition starts that would end after it, the cells keep what they have", "[unit]") {
    World w;
    w.traffic.on_run = [&](size_t, const nm::TestSpec& spec) {
        w.clock.advance(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(spec.omit_s + spec.duration_s)));
    };
    w.traffic.on_result = [&](size_t n, nm::RunResult& r) { r.throughput_bps = 1e9 * static_cast<double>(1 + n % 7); };  // never precise
    auto options = seeded(2);
    options.time_budget_s = 40;
    const auto config = make_config(R"({"mtu": [1500], "precision": {"ci_pct": 1}, "interference": {"sample_ms": 0}})");
    const auto before = w.clock.now();
    const auto out = w.run(config, options);
    const double spent = std::chrono::duration<double>(w.clock.now() - before).count();
    CHECK(spent <= 40);
    CHECK_FALSE(out.interrupted);
    CHECK(out.results.run.budget_reached);
    CHECK(out.results.run.time_budget_s == 40.0);
    CHECK_FALSE(out.results.run.finished.empty());
    size_t runs = 0;
    for (const auto& c : out.results.cells) {
        runs += c.runs.size();
        CHECK(c.precision_met == false);
    }
    // 1.5 s per repetition, and one starts only while 1.5 s + 0.2 s of margin still fit: 26 in 40 s.
    CHECK(runs == 26);
    REQUIRE_FALSE(w.observer.etas.empty());
    for (double eta : w.observer.etas) CHECK(eta <= 40);
    CHECK(std::find(w.observer.notes.begin(), w.observer.notes.end(),
                    "the time budget ended the sweep before every cell had its repetitions; --resume continues it") != w.observer.notes.end());
}

TEST_CASE("Interference: a busy machine is waited for, if it stays busy the repetition is measured and marked disturbed", "[unit]") {
    World w;
    const auto config = make_config(R"({"offloads": [{"name": "x", "features": {}}], "mtu": [1500], "traffic": [{"streams": 1}],
                                        "repetitions": 3, "interference": {"max_busy_pct": 20, "max_steal_pct": 5, "max_wait_s": 1}})");
    // Run 1: quiet. Run 2: busy once, then quiet. Run 3: busy (80%) for all of the 1 s wait: 5 samples of 200 ms.
    w.load.script = {{2, 0, 0, 0}, {60, 0, 0, 0}, {3, 0, 0, 0}, {80, 0, 0, 0}, {80, 0, 0, 0}, {80, 0, 0, 0}, {80, 0, 0, 0}, {80, 1, 0, 0}};
    const auto out = w.run(config, seeded(1));
    const auto& runs = out.results.cells.at(0).runs;
    REQUIRE(runs.size() == 3);
    for (const auto& r : runs) REQUIRE(r.background);
    CHECK_FALSE(runs[0].disturbed);
    CHECK(runs[0].background->waited_s == 0);
    CHECK_FALSE(runs[1].disturbed);
    CHECK(runs[1].background->waited_s == Catch::Detail::Approx(0.2));
    CHECK(runs[1].background->busy_pct == 3);
    CHECK(runs[2].disturbed);
    CHECK(runs[2].background->busy_pct == 80);
    CHECK(runs[2].background->steal_pct == 1);
    CHECK(runs[2].background->waited_s == Catch::Detail::Approx(0.8));  // before its last sample
    CHECK(w.load.samples == 8);
    const nm::Json j = runs[2];
    CHECK(j.at("disturbed") == true);
    CHECK(j.at("background").at("busy_pct") == 80);

    // Steal alone is enough; with max_wait_s 0 nothing waits, the run is only marked.
    World s;
    s.load.script = {{10, 9, 0, 0}};
    const auto stolen = s.run(make_config(R"({"offloads": [{"name": "x", "features": {}}], "mtu": [1500], "traffic": [{"streams": 1}],
                                              "repetitions": 1, "interference": {"max_wait_s": 0}})"));
    CHECK(stolen.results.cells.at(0).runs.at(0).disturbed);
    CHECK(s.load.samples == 1);
}
