#include <catch2/catch.hpp>

#include "matrix/stats.hpp"

#include <cmath>

using Catch::Detail::Approx;

TEST_CASE("summarize: median, mean, sample stddev, min, max, Student's t 95% CI", "[unit]") {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7.
    const auto s = nm::summarize({9, 2, 4, 4, 5, 4, 5, 7});
    CHECK(s.n == 8);
    CHECK(s.median == 4.5);
    CHECK(s.mean == 5);
    CHECK(s.min == 2);
    CHECK(s.max == 9);
    CHECK(s.stddev == Approx(2.13808994).epsilon(1e-8));
    CHECK(s.ci95 == Approx(2.365 * 2.13808994 / std::sqrt(8.0)).epsilon(1e-8));
}

TEST_CASE("summarize: odd count, one value, none", "[unit]") {
    const auto three = nm::summarize({10, 30, 20});
    CHECK(three.median == 20);
    CHECK(three.stddev == Approx(10));
    CHECK(three.ci95 == Approx(4.303 * 10 / std::sqrt(3.0)));
    const auto one = nm::summarize({7});
    CHECK(one.median == 7);
    CHECK(one.stddev == 0);
    CHECK(one.ci95 == 0);
    CHECK(nm::summarize({}).n == 0);
}

TEST_CASE("student_t95 matches the table and approaches 1.96", "[unit]") {
    CHECK(nm::student_t95(1) == Approx(12.706));
    CHECK(nm::student_t95(2) == Approx(4.303));
    CHECK(nm::student_t95(30) == Approx(2.042));
    CHECK(nm::student_t95(60) == Approx(2.000).margin(0.001));
    CHECK(nm::student_t95(120) == Approx(1.980).margin(0.001));
    CHECK(nm::student_t95(100000) == Approx(1.960).margin(0.001));
}

TEST_CASE("summarize_runs summarizes every metric of the runs", "[unit]") {
    std::vector<nm::RunResult> runs(2);
    runs[0].throughput_bps = 1e9;
    runs[1].throughput_bps = 3e9;
    runs[0].sender.cpu.util_pct = 50;
    runs[1].sender.cpu.util_pct = 70;
    runs[1].loss = nm::LossStats{};
    const auto s = nm::summarize_runs(runs);
    CHECK(s.at("throughput_bps").mean == 2e9);
    CHECK(s.at("throughput_bps").n == 2);
    CHECK(s.at("cpu_sender_pct").median == 60);
    CHECK(s.at("loss_pct").n == 1);   // only the UDP run has loss figures
}
