// `nicmatrix sweep` on the lab in its default order, shuffled rounds: every visit of a cell runs under
// that cell's settings as ethtool -k and ip show them, repetitions of a cell never run back to back, a seed
// repeats the order, a SIGKILLed sweep resumes its partly measured cells, and precision and the time budget
// show in the progress, the file and the table. Short durations: these check the loop, not figures.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <vector>

#include "core/base/wait_until.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/sweep_progress.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

// Two profiles x two MTUs, one test, 2 repetitions: 8 visits in 2 shuffled rounds.
const char* kShuffled = R"({"name": "shuffled",
  "offloads": [{"name": "all-on", "features": {"tx": "on", "sg": "on", "tso": "on", "gso": "on", "gro": "on"}},
               {"name": "all-off", "features": {"tx": "off", "sg": "off", "tso": "off", "gso": "off", "gro": "off"}}],
  "mtu": [1500, 9000], "traffic": [{"name": "tcp-p1", "streams": 1}],
  "duration_s": 1, "omit_s": 0.2, "repetitions": 2, "interference": {"max_wait_s": 0}})";

// "[round 2, 3/4] all-off/mtu1500/tcp-p1  repetition 2 ... ": the cell key of a visit's start line.
std::string visit_key(const std::string& line) {
    const auto from = line.find("] ") + 2;
    return line.substr(from, line.find("  ", from) - from);
}

std::vector<std::string> visits_in(const std::string& output) {
    std::vector<std::string> keys;
    for (size_t at = 0; (at = output.find("[round ", at)) != std::string::npos; ++at) keys.push_back(visit_key(output.substr(at, 200)));
    return keys;
}

uint64_t tx_bytes(const std::string& netns) { return std::stoull(run_in_netns(netns, "cat /sys/class/net/nm-a/statistics/tx_bytes").output); }

}  // namespace

TEST_CASE("sweep --lab in shuffled rounds: every visit runs under its cell's settings (ethtool -k and ip), no cell twice in a row", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("shuffled.json", kShuffled);
    const std::string name = nm::test::unique_name("nmso");
    const std::string ns = name + "-a";
    std::vector<std::pair<std::string, std::map<std::string, bool>>> seen;  // per visit: key, ethtool -k while it measured
    const auto sweep =
        nm::test::follow_sweep(nicmatrix_binary() + " sweep " + cfg + " --lab --lab-name " + name + " --seed 1234 -o " + dir.file("r.json") +
                                   " --journal " + dir.file("j.json"),
                               std::chrono::seconds(180), [&](const std::string& key) {
                                   const std::string mtu = nm::test::mtu_of_key(key);
                                   // The visit has applied its settings once its MTU shows and its traffic flows (the previous
                                   // visit may have had the same MTU, and its traffic has ended).
                                   const uint64_t before = tx_bytes(ns);
                                   nm::wait_until([&] { return nm::test::link_mtu(ns, "nm-a") == mtu + "\n" && tx_bytes(ns) > before + (1u << 20); },
                                                  std::chrono::seconds(20), "the traffic of " + key + " on nm-a");
                                   seen.emplace_back(key, nm::test::ethtool_features(ns, "nm-a"));
                               });
    const std::string& text = sweep.output;
    const int status = sweep.wait_status;
    INFO(text);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 4);
    REQUIRE(seen.size() == 8);
    CHECK(results.run.order.mode == nm::SweepOrder::Shuffled);
    CHECK(results.run.order.seed == 1234u);
    std::map<std::string, const nm::CellResult*> by_key;
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key << ": " << cell.error);
        CHECK(cell.status == nm::CellStatus::Ok);
        CHECK(cell.runs.size() == 2);
        by_key[cell.spec.key] = &cell;
    }
    for (size_t i = 0; i < seen.size(); ++i) {
        const auto& [key, features] = seen[i];
        INFO("visit " << i + 1 << ": " << key);
        if (i > 0) CHECK(key != seen[i - 1].first);
        REQUIRE(by_key.count(key));
        for (const auto& [feature, on] : by_key[key]->applied_local->features) {
            INFO(feature);
            if (features.count(feature)) CHECK(features.at(feature) == on);
        }
    }
    // Each round visits every cell once; the runs' start times interleave the cells.
    for (size_t round = 0; round < 2; ++round) {
        std::vector<std::string> keys;
        for (size_t i = 0; i < 4; ++i) keys.push_back(seen[round * 4 + i].first);
        std::sort(keys.begin(), keys.end());
        CHECK(std::unique(keys.begin(), keys.end()) == keys.end());
    }
    std::vector<std::pair<std::string, std::string>> starts;  // started, key
    for (const auto& cell : results.cells) {
        for (const auto& r : cell.runs) starts.emplace_back(r.started, cell.spec.key);
    }
    std::sort(starts.begin(), starts.end());
    for (size_t i = 1; i < starts.size(); ++i) CHECK(starts[i].second != starts[i - 1].second);
    // Every run records its background load and steal, and the whole file validates.
    for (const auto& cell : results.cells) {
        for (const auto& r : cell.runs) CHECK(r.background);
    }
    CHECK(run_command("ip netns list | grep -q " + name).exit_status != 0);

    // The same seed gives the same order of visits.
    const auto again =
        run_command(nicmatrix_binary() + " sweep " + cfg + " --lab --seed 1234 -o " + dir.file("r2.json") + " --journal " + dir.file("j.json"),
                    std::chrono::seconds(180));
    REQUIRE(again.exit_status == 0);
    std::vector<std::string> first;
    first.reserve(seen.size());
    for (const auto& v : seen) first.push_back(v.first);
    CHECK(visits_in(again.output) == first);
}

TEST_CASE("SIGKILL mid-round: the file keeps every run, restore puts the lab back, --resume gives each cell the rest", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("shuffled.json", kShuffled);
    const std::string name = nm::test::unique_name("nmsk");
    const std::string file = dir.file("r.json");
    const std::string journal = dir.file("j.json");
    nm::test::Background sweep(nicmatrix_binary() + " sweep " + cfg + " --lab --lab-name " + name + " -o " + file + " --journal " + journal,
                               dir.file("log"), std::chrono::seconds(300));
    const auto runs_in = [](const nm::ResultsFile& f) {
        size_t n = 0;
        for (const auto& c : f.cells) n += c.runs.size();
        return n;
    };
    // Kill it in the second round: every cell has a run, some have two.
    nm::wait_until(
        [&] {
            try {
                return std::filesystem::exists(file) && runs_in(nm::load_results(file)) >= 5;
            } catch (const nm::Error&) {
                return false;
            }
        },
        std::chrono::seconds(120), "five runs in " + file);
    REQUIRE(::kill(sweep.pid(), SIGKILL) == 0);
    REQUIRE(sweep.wait(std::chrono::seconds(10)) == 128 + SIGKILL);
    const auto partial = nm::load_results(file);
    CHECK(partial.run.finished.empty());
    REQUIRE(partial.cells.size() == 4);
    const size_t done = runs_in(partial);
    REQUIRE(done < 8);

    auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    CHECK(r.exit_status == 0);
    REQUIRE(partial.local.interface);
    CHECK(nm::test::link_mtu(name + "-a", "nm-a") == std::to_string(partial.local.interface->original.mtu) + "\n");
    run_command(nicmatrix_binary() + " lab down --name " + name);

    r = run_command(nicmatrix_binary() + " sweep " + cfg + " --lab --resume " + file + " --journal " + journal, std::chrono::seconds(180));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto full = nm::load_results(file);
    REQUIRE(full.cells.size() == 4);
    CHECK_FALSE(full.run.finished.empty());
    CHECK(full.run.order.seed == partial.run.order.seed);
    for (size_t i = 0; i < 4; ++i) {
        INFO(full.cells[i].spec.key);
        REQUIRE(full.cells[i].runs.size() == 2);
        for (size_t k = 0; k < partial.cells[i].runs.size(); ++k) CHECK(nm::Json(full.cells[i].runs[k]) == nm::Json(partial.cells[i].runs[k]));
    }
    CHECK(visits_in(r.output).size() == 8 - done);
}

TEST_CASE("sweep --precision --time-budget on the lab: the estimate and the budget in the progress, the marks in the table", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    // 0.001% cannot be met; at most 3 repetitions; a budget of 8 s stops the sweep before 4 x 3 runs of 0.7 s.
    auto j = nm::Json::parse(kShuffled);
    j["duration_s"] = 0.5;
    j["precision"] = {{"ci_pct", 50}, {"max_repetitions", 3}};
    const auto cfg = dir.write("p.json", j.dump());
    const auto r = run_command(nicmatrix_binary() + " sweep " + cfg + " --lab --precision 0.001 --time-budget 8s -o " + dir.file("r.json") +
                                   " --journal " + dir.file("j.json"),
                               std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("(budget 0:08)"));
    CHECK_THAT(r.output, Catch::Contains("time budget reached: some cells did not get all their repetitions; --resume"));
    CHECK_THAT(r.output, Catch::Contains("? = desired precision not achieved (the 95% interval of the median throughput_bps within ±0.001%"));
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.run.config.precision);
    CHECK(results.run.config.precision->ci_pct == 0.001);  // --precision set it
    CHECK(results.run.config.precision->max_repetitions == 3);
    CHECK(results.run.budget_reached);
    CHECK(results.run.time_budget_s == 8.0);
    size_t runs = 0;
    for (const auto& c : results.cells) {
        INFO(c.spec.key);
        runs += c.runs.size();
        CHECK(c.precision_met == false);
        CHECK(nm::Json(c).at("repetitions_run") == c.runs.size());
    }
    CHECK(runs < 12);
    // The estimate never exceeds what is left of the budget.
    for (size_t at = r.output.find(" eta "); at != std::string::npos; at = r.output.find(" eta ", at + 1)) {
        const int minutes = std::stoi(r.output.substr(at + 5));
        const int seconds = std::stoi(r.output.substr(r.output.find(':', at) + 1));
        CHECK(minutes * 60 + seconds <= 8);
    }
}

TEST_CASE("sweep with a precision on another metric: the progress line gives that metric's median and interval", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    // One cell, 3 runs at 75%: the interval of the median is [min, max] of the runs' receiver CPU.
    const auto cfg = dir.write("cpu.json", R"({"name": "cpu", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1500],
        "traffic": [{"name": "t", "protocol": "tcp", "streams": 1}], "duration_s": 0.4, "omit_s": 0, "cooldown_s": 0,
        "precision": {"ci_pct": 50, "confidence": 75, "min_repetitions": 3, "max_repetitions": 3, "metric": "cpu_receiver_pct"}})");
    const auto r = run_command(nicmatrix_binary() + " sweep " + cfg + " --lab -o " + dir.file("r.json") + " --journal " + dir.file("j.json"),
                               std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 1);
    const auto& runs = results.cells[0].runs;
    REQUIRE(runs.size() == 3);
    std::vector<double> cpu;
    cpu.reserve(runs.size());
    for (const auto& run : runs) cpu.push_back(run.receiver.cpu.util_pct);
    std::sort(cpu.begin(), cpu.end());
    const double half = std::max(cpu[1] - cpu[0], cpu[2] - cpu[1]) / cpu[1] * 100;
    char want[64];
    std::snprintf(want, sizeof want, " ±%.1f%% (75.0%%, n=3)", half);
    // The last visit's line: the throughput median without an interval, then the judged metric with its own.
    std::string last;
    for (size_t at = r.output.find("] as-is/mtu1500/t"); at != std::string::npos; at = r.output.find("] as-is/mtu1500/t", at + 1)) {
        last = r.output.substr(at, r.output.find('\n', at) - at);
    }
    CHECK_THAT(last, Catch::Contains("bit/s (n=3) cpu_receiver_pct ") && Catch::Contains(want) && Catch::Contains("precision "));
}
