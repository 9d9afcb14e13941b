#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/base/error.hpp"
#include "core/rfc2544/throughput_search.hpp"

namespace {

// A path that delivers everything up to `limit_fps` and drops the excess; a generator that cannot send
// faster than `generator_fps`.
struct FakePath {
    double limit_fps;
    double generator_fps;
    int calls = 0;

    nm::TrialOutcome operator()(double offered) {
        ++calls;
        const double sent_fps = std::min(offered, generator_fps);
        nm::TrialOutcome t;
        t.sent_fps = sent_fps;
        t.sent = static_cast<uint64_t>(sent_fps);  // a one-second trial
        t.received = static_cast<uint64_t>(std::min(sent_fps, limit_fps));
        return t;
    }
};

/// A trial at `offered` frames/s that sent `sent` frames and saw `received` of them arrive.
nm::TrialOutcome trial(double offered, uint64_t sent, uint64_t received) {
    nm::TrialOutcome t;
    t.sent_fps = offered;
    t.sent = sent;
    t.received = received;
    return t;
}

/// Notes `offered` in `offered_rates`; true when that rate had been offered before.
bool offered_again(std::vector<double>& offered_rates, double offered) {
    const bool seen = std::find(offered_rates.begin(), offered_rates.end(), offered) != offered_rates.end();
    offered_rates.push_back(offered);
    return seen;
}

}  // namespace

TEST_CASE("The search finds a known limit within the resolution and confirms it", "[unit]") {
    FakePath path{300000, 10e6};
    nm::SearchOptions o;
    o.max_fps = 1488095;
    o.resolution_pct = 0.5;
    o.max_trials = 30;
    const auto r = nm::find_throughput(std::ref(path), o);
    REQUIRE(r.found);
    CHECK(r.throughput_fps <= 300000);
    CHECK(r.throughput_fps >= 300000 - o.max_fps * 0.005);
    CHECK(r.confirmed);
    CHECK(r.confirmation.lost() == 0);
    CHECK_FALSE(r.generator_limited);
    CHECK(r.trials == r.history.size());
    CHECK(path.calls == static_cast<int>(r.trials) + 1);
}

TEST_CASE("A path that carries line rate ends after one trial", "[unit]") {
    FakePath path{2e6, 10e6};
    nm::SearchOptions o;
    o.max_fps = 1488095;
    const auto r = nm::find_throughput(std::ref(path), o);
    CHECK(r.trials == 1);
    CHECK(r.throughput_fps == Approx(1488095).epsilon(1e-6));
    CHECK(r.confirmed);
}

TEST_CASE("A slow generator is reported, not blamed on the device", "[unit]") {
    FakePath path{2e6, 400000};
    nm::SearchOptions o;
    o.max_fps = 1488095;
    const auto r = nm::find_throughput(std::ref(path), o);
    CHECK(r.generator_limited);
    CHECK(r.generator_max_fps == Approx(400000));
    CHECK(r.throughput_fps == Approx(400000));
}

TEST_CASE("Loss tolerance lets a trial with a little loss pass", "[unit]") {
    const auto lossy = [](double offered) {
        nm::TrialOutcome t;
        t.sent_fps = offered;
        t.sent = 100000;
        t.received = offered > 500000 ? 90000 : 99950;  // 0.05% loss below 500k, 10% above
        return t;
    };
    nm::SearchOptions o;
    o.max_fps = 1e6;
    o.loss_tolerance_pct = 0.1;
    const auto tolerant = nm::find_throughput(lossy, o);
    CHECK(tolerant.throughput_fps <= 500000);
    CHECK(tolerant.throughput_fps > 490000);
    o.loss_tolerance_pct = 0;
    const auto strict = nm::find_throughput(lossy, o);
    CHECK_FALSE(strict.found);
    // Every trial failed: the bracket shrank towards zero until its top was below 1% of the maximum.
    CHECK(strict.trials < o.max_trials);
    CHECK(strict.history.back().outcome.offered_fps < 2 * 0.01 * o.max_fps);
    o.max_trials = 3;
    CHECK(nm::find_throughput(lossy, o).trials == 3);
}

TEST_CASE("Bad search options are usage errors", "[unit]") {
    const auto never = [](double) { return nm::TrialOutcome{}; };
    nm::SearchOptions o;
    CHECK_THROWS_WITH(nm::find_throughput(never, o), Catch::Contains("line-rate"));
    o.max_fps = 1000;
    o.resolution_pct = 0;
    CHECK_THROWS_WITH(nm::find_throughput(never, o), Catch::Contains("resolution_pct"));
}

TEST_CASE("A stop request ends the search between trials", "[unit]") {
    std::stop_source source;
    int calls = 0;
    const auto trial = [&](double offered) {
        if (++calls == 2) source.request_stop();
        nm::TrialOutcome t;
        t.sent_fps = offered;
        t.sent = 1000;
        t.received = 10;
        return t;
    };
    nm::SearchOptions o;
    o.max_fps = 1e6;
    const auto r = nm::find_throughput(trial, o, source.get_token());
    CHECK(r.interrupted);
    CHECK(calls == 2);
}

TEST_CASE("A rate that passed by luck fails its confirmation and the search backs off until one holds twice", "[unit]") {
    // Up to `limit` everything arrives. Just above it (within 2.5%) a trial passes the first time its rate
    // is offered (a shaper's burst and queue absorb the excess once) and fails when offered again.
    constexpr double limit = 1000;
    std::vector<double> offered_rates;
    const auto lucky_edge = [&](double offered) {
        const bool lucky = !offered_again(offered_rates, offered) && offered <= limit * 1.025;
        const auto sent = static_cast<uint64_t>(offered);
        return trial(offered, sent, offered <= limit || lucky ? sent : static_cast<uint64_t>(limit));
    };
    nm::SearchOptions o;
    o.max_fps = 2000;
    o.resolution_pct = 0.2;
    o.max_trials = 16;
    const auto r = nm::find_throughput(lucky_edge, o);
    REQUIRE(r.found);
    CHECK(r.confirmed);
    CHECK(r.throughput_fps <= limit);
    CHECK(r.throughput_fps >= limit * 0.95);
    CHECK(r.confirmation.offered_fps == r.at_rate.offered_fps);
    // The lucky rate's failed confirmation is in the history, as a failed trial.
    const auto failed_repeats = std::count_if(r.history.begin(), r.history.end(), [&](const nm::SearchStep& s) {
        return !s.passed && std::count(offered_rates.begin(), offered_rates.end(), s.outcome.offered_fps) > 1;
    });
    CHECK(failed_repeats >= 1);
    CHECK(r.trials == r.history.size());
    CHECK(offered_rates.size() == r.history.size() + 1);
}

TEST_CASE("A failed step below a failed confirmation does not end the search", "[unit]") {
    // The host gets busier once the bisection is over: the path carries 1000 frames/s during it, 975 after.
    FakePath plain{1000, 1e6};
    nm::SearchOptions o;
    o.max_fps = 2000;
    o.resolution_pct = 1;
    const auto bisection = nm::find_throughput(std::ref(plain), o);
    REQUIRE(bisection.confirmed);
    const uint32_t bisection_trials = bisection.trials;
    REQUIRE(bisection.throughput_fps > 985);  // so the first back-off step (1%) still fails at 975

    int calls = 0;
    const auto slowing = [&](double offered) {
        const double limit = ++calls <= static_cast<int>(bisection_trials) ? 1000.0 : 975.0;
        return trial(offered, static_cast<uint64_t>(offered), static_cast<uint64_t>(std::min(offered, limit)));
    };
    const auto r = nm::find_throughput(slowing, o);
    REQUIRE(r.found);
    CHECK(r.confirmed);
    CHECK(r.throughput_fps <= 975);
    CHECK(r.throughput_fps >= 975 * 0.95);
    // Bisection, the failed confirmation, the failed 1% step, the passing 2% step; then its confirmation.
    CHECK(r.trials == bisection_trials + 3);
    CHECK_FALSE(r.history[bisection_trials].passed);
    CHECK_FALSE(r.history[bisection_trials + 1].passed);
    CHECK(r.history[bisection_trials + 2].passed);
}

TEST_CASE("A path that never holds a rate twice ends the back-off after four steps, not found", "[unit]") {
    std::vector<double> offered_rates;
    const auto only_once = [&](double offered) {
        const bool seen = offered_again(offered_rates, offered);
        return trial(offered, 1000, seen || offered > 1500 ? 900 : 1000);
    };
    nm::SearchOptions o;
    o.max_fps = 2000;
    o.max_trials = 8;
    const auto r = nm::find_throughput(only_once, o);
    CHECK_FALSE(r.found);
    CHECK_FALSE(r.confirmed);
    // Each back-off step passed once and failed its confirmation: 4 steps and 5 confirmations.
    CHECK(r.trials == 8 + 4 + 5);
    CHECK(offered_rates.size() == r.history.size());
}
