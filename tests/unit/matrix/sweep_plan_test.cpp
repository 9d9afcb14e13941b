// The plan of a sweep (its cells, expanded once) and its schedule, each on its own: no ends, no engine.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/runner.hpp"
#include "matrix/sweep_plan.hpp"
#include "matrix/sweep_schedule.hpp"
#include "tests/support/matrix_fakes.hpp"

namespace {

// Two profiles x two MTUs x two tests = 8 cells, one of them excluded.
const std::string kConfig = R"({"name": "plan",
  "offloads": [{"name": "on", "features": {"tso": "on"}}, {"name": "off", "features": {"tso": "off"}}],
  "mtu": [1500, 9000],
  "traffic": [{"name": "p1", "streams": 1}, {"name": "p4", "streams": 4}],
  "exclude": [{"offloads": "off", "mtu": 9000, "traffic": {"streams": 4}}],
  "duration_s": 1, "omit_s": 0, "repetitions": 2})";

std::vector<std::string> keys(const std::vector<nm::CellSpec>& cells) {
    std::vector<std::string> out;
    out.reserve(cells.size());
    for (const auto& c : cells) out.push_back(c.key);
    return out;
}

// A schedule over `plan` whose results are `recorded` (by key).
struct Scheduled {
    nm::test::FakeClock clock;
    std::map<std::string, nm::CellResult> recorded;
    nm::SweepSchedule schedule;

    explicit Scheduled(const nm::SweepPlan& plan, std::optional<double> budget = std::nullopt)
        : schedule(plan, clock, budget, [this](const std::string& key) -> const nm::CellResult* {
              const auto it = recorded.find(key);
              return it == recorded.end() ? nullptr : &it->second;
          }) {}
};

// Every round until none is left, marking each cell as measured `per_round` more times.
std::vector<std::vector<size_t>> rounds(const nm::SweepPlan& plan, uint64_t seed) {
    Scheduled s(plan);
    s.schedule.seed(seed);
    std::vector<std::vector<size_t>> out;
    for (auto order = s.schedule.next_round(); !order.empty(); order = s.schedule.next_round()) {
        for (size_t i : order) {
            s.schedule.visiting(i);
            auto& r = s.recorded[plan.cells[i].key];
            r.spec = plan.cells[i];
            r.runs.emplace_back();
        }
        out.push_back(order);
    }
    return out;
}

}  // namespace

TEST_CASE("SweepPlan: the config's cells expanded once, in the config's order, exclusions applied", "[unit]") {
    const auto plan = nm::parse_sweep_plan_text(kConfig, "plan.json");
    CHECK(nm::Json(plan.config) == nm::Json(nm::parse_sweep_config_text(kConfig, "plan.json")));
    CHECK(keys(plan.cells) == keys(nm::expand_cells(plan.config)));
    CHECK(keys(plan.cells) == std::vector<std::string>{"on/mtu1500/p1", "on/mtu1500/p4", "on/mtu9000/p1", "on/mtu9000/p4", "off/mtu1500/p1",
                                                       "off/mtu1500/p4", "off/mtu9000/p1"});
    CHECK(plan.index_of("on/mtu9000/p1") == 2);
    CHECK(plan.index_of("off/mtu9000/p4") == plan.cells.size());
    // make_sweep_plan gives the same plan for the config.
    CHECK(keys(nm::make_sweep_plan(plan.config).cells) == keys(plan.cells));
    // What each end gets, from the plan.
    CHECK(nm::sweep_changes_end(plan, false));
    CHECK(nm::sweep_changes_end(plan, true));
    auto local_only = plan.config;
    local_only.apply_offloads_to = nm::ApplyTo::Local;
    local_only.apply_mtu_to = nm::ApplyTo::Local;
    CHECK_FALSE(nm::sweep_changes_end(nm::make_sweep_plan(local_only), true));
}

TEST_CASE("SweepPlan: a cell's test is checked against the engine's limits at its MTU as the config is read", "[unit]") {
    auto j = nm::Json::parse(kConfig);
    j["traffic"] = nm::Json::parse(R"([{"name": "gso", "protocol": "udp", "write_size": 8972, "udp_gso": true}])");
    CHECK_THROWS_WITH(nm::parse_sweep_plan_text(j.dump(), "plan.json"),
                      Catch::StartsWith("plan.json: /traffic/0: in cell on/mtu1500/gso: gso: a UDP payload of 8972 bytes"));
}

TEST_CASE("SweepSchedule: sequential is one round in the config's order", "[unit]") {
    auto config = nm::parse_sweep_config_text(kConfig, "plan.json");
    config.order = nm::SweepOrder::Sequential;
    const auto plan = nm::make_sweep_plan(config);
    Scheduled s(plan);
    CHECK(s.schedule.sequential());
    CHECK(s.schedule.next_round() == std::vector<size_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK(s.schedule.round() == 0);
    CHECK(s.schedule.next_round().empty());
}

TEST_CASE("SweepSchedule: the shuffled order is the seed's, every cell once a round, never the same cell twice in a row", "[unit]") {
    const auto plan = nm::parse_sweep_plan_text(kConfig, "plan.json");
    const auto a = rounds(plan, 7);
    CHECK(a == rounds(plan, 7));
    CHECK(a != rounds(plan, 8));
    REQUIRE(a.size() == 2);  // two repetitions, one per round
    for (const auto& round : a) CHECK(std::set<size_t>(round.begin(), round.end()).size() == plan.cells.size());
    CHECK(a[0].back() != a[1].front());
}

TEST_CASE("SweepSchedule: repetitions wanted, with and without a precision, and the time budget", "[unit]") {
    auto config = nm::parse_sweep_config_text(kConfig, "plan.json");
    const auto plan = nm::make_sweep_plan(config);
    Scheduled s(plan, 10.0);
    nm::CellResult r;
    r.spec = plan.cells[0];
    r.runs.resize(1);
    CHECK(s.schedule.wants_more(r));
    r.runs.resize(2);
    CHECK_FALSE(s.schedule.wants_more(r));
    r.status = nm::CellStatus::Failed;
    r.runs.resize(1);
    CHECK_FALSE(s.schedule.wants_more(r));
    CHECK(s.schedule.expected_repetitions(0) == 2);

    // The budget: a repetition is expected to take 1.4 s (1 s of measuring, 0.2 s of setup, the 0.2 s look
    // at the machine's load).
    s.schedule.start();
    CHECK(s.schedule.budget_allows_another());
    s.clock.advance(std::chrono::milliseconds(8500));
    CHECK(s.schedule.budget_allows_another());
    s.clock.advance(std::chrono::milliseconds(500));
    CHECK_FALSE(s.schedule.budget_allows_another());

    config.precision = nm::PrecisionSpec{};
    config.precision->ci_pct = 5;
    const auto precise = nm::make_sweep_plan(config);
    Scheduled p(precise);
    nm::CellResult q;
    q.spec = precise.cells[0];
    q.runs.resize(config.precision->min_repetitions);
    q.precision_met = true;
    CHECK_FALSE(p.schedule.wants_more(q));
    q.precision_met = false;
    CHECK(p.schedule.wants_more(q) == (q.runs.size() < config.precision->max_repetitions));
}
