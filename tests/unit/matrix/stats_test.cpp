// The statistics against computations that do not use the code under test: exact enumeration with
// integer binomial coefficients and arrangements, and published tables of Student's t. (tests/python
// checks the same functions against scipy.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "matrix/stats.hpp"

using Catch::Detail::Approx;

namespace {

uint64_t choose(uint64_t n, uint64_t k) {
    uint64_t r = 1;
    for (uint64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
}

// Coverage of [x(k), x(n+1-k)] for the median, by counting: the interval misses the median when fewer
// than k values (or more than n-k) lie below it, each of the 2^n sign patterns equally likely.
double order_statistic_coverage(size_t n, size_t k) {
    uint64_t miss = 0;
    for (size_t i = 0; i < k; ++i) miss += choose(n, i);
    return 100.0 * (1.0 - 2.0 * static_cast<double>(miss) / std::pow(2.0, static_cast<double>(n)));
}

// P(U <= u) under the null, by listing every way to pick which m of the m+n ranks belong to A.
double mann_whitney_tail(size_t m, size_t n, size_t u) {
    const size_t total = m + n;
    uint64_t count = 0, all = 0;
    for (uint32_t mask = 0; mask < (1u << total); ++mask) {
        if (static_cast<size_t>(__builtin_popcount(mask)) != m) continue;
        ++all;
        // U = pairs (a, b) with a above b: for each A rank, the B ranks below it.
        size_t pairs = 0, b_below = 0;
        for (size_t r = 0; r < total; ++r) {
            if (mask & (1u << r)) pairs += b_below;
            else ++b_below;
        }
        if (pairs <= u) ++count;
    }
    return static_cast<double>(count) / static_cast<double>(all);
}

}  // namespace

TEST_CASE("The median's interval is the order-statistic interval with its exact coverage, counted independently", "[unit]") {
    for (size_t n = 2; n <= 20; ++n) {
        INFO("n = " << n);
        const auto iv = nm::median_interval(n, 95);
        REQUIRE(iv);
        // The narrowest k whose coverage reaches 95%, found by counting.
        size_t k = 1;
        while (2 * (k + 1) <= n && order_statistic_coverage(n, k + 1) >= 95) ++k;
        CHECK(iv->k == k);
        CHECK(iv->coverage_pct == Approx(order_statistic_coverage(n, k)).epsilon(1e-12));
    }
    // The figures a reader meets: [min, max] of 3 covers 75%, of 5 93.75%; 6 is the first n to reach 95%.
    CHECK(nm::median_interval(3, 95)->coverage_pct == Approx(75));
    CHECK(nm::median_interval(5, 95)->coverage_pct == Approx(93.75));
    CHECK(nm::median_interval(6, 95)->coverage_pct == Approx(96.875));
    CHECK(nm::repetitions_for_confidence(95) == 6);
    CHECK(nm::repetitions_for_confidence(99) == 8);
    CHECK_FALSE(nm::median_interval(1, 95));
}

TEST_CASE("summarize: median with its interval, mean, sample stddev, min, max, the mean's t interval", "[unit]") {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7.
    const auto s = nm::summarize({9, 2, 4, 4, 5, 4, 5, 7});
    CHECK(s.n == 8);
    CHECK(s.median == 4.5);
    CHECK(s.mean == 5);
    CHECK(s.min == 2);
    CHECK(s.max == 9);
    CHECK(s.stddev == Approx(std::sqrt(32.0 / 7)).epsilon(1e-12));
    // t(0.975, 7) = 2.3646 (published tables give 2.365).
    CHECK(s.ci95 == Approx(2.3646243 * std::sqrt(32.0 / 7) / std::sqrt(8.0)).epsilon(1e-6));
    // n = 8 at 95%: k = 1 (k = 2 covers only 92.97%), so the interval is [min, max] at 99.22%.
    REQUIRE(s.median_ci_low);
    CHECK(*s.median_ci_low == 2);
    CHECK(*s.median_ci_high == 9);
    CHECK(*s.median_ci_confidence == Approx(order_statistic_coverage(8, 1)));
    // At 90% the narrower k = 2 will do: [x(2), x(7)] = [4, 7] at 92.97%.
    const auto s90 = nm::summarize({9, 2, 4, 4, 5, 4, 5, 7}, 90);
    CHECK(*s90.median_ci_low == 4);
    CHECK(*s90.median_ci_high == 7);
    CHECK(*s90.median_ci_confidence == Approx(order_statistic_coverage(8, 2)));
}

TEST_CASE("summarize: three values claim 75%, one value claims no interval, none gives zeros", "[unit]") {
    const auto three = nm::summarize({10, 30, 20});
    CHECK(three.median == 20);
    CHECK(three.stddev == Approx(10));
    CHECK(three.ci95 == Approx(4.302653 * 10 / std::sqrt(3.0)).epsilon(1e-6));
    CHECK(*three.median_ci_low == 10);
    CHECK(*three.median_ci_high == 30);
    CHECK(*three.median_ci_confidence == Approx(75));
    const auto one = nm::summarize({7});
    CHECK(one.median == 7);
    CHECK(one.stddev == 0);
    CHECK(one.ci95 == 0);
    CHECK_FALSE(one.median_ci_low);
    CHECK_FALSE(one.median_ci_confidence);
    CHECK(nm::summarize({}).n == 0);
}

TEST_CASE("student_t_quantile matches published tables at 95% and 99%", "[unit]") {
    // Two-sided critical values from the usual table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
    CHECK(nm::student_t_quantile(95, 1) == Approx(12.706).epsilon(1e-4));
    CHECK(nm::student_t_quantile(95, 2) == Approx(4.303).epsilon(1e-4));
    CHECK(nm::student_t_quantile(95, 30) == Approx(2.042).epsilon(1e-3));
    CHECK(nm::student_t_quantile(99, 1) == Approx(63.657).epsilon(1e-4));
    CHECK(nm::student_t_quantile(99, 8) == Approx(3.355).epsilon(1e-3));
    CHECK(nm::student_t_quantile(90, 10) == Approx(1.812).epsilon(1e-3));
    CHECK(nm::student_t_quantile(95, 100000) == Approx(1.960).margin(0.001));
    CHECK(nm::student_t_quantile(95, 0) == 0);
}

TEST_CASE("The ratio interval is the Mann-Whitney interval of the log shift, checked by listing every arrangement", "[unit]") {
    const std::vector<double> a{10, 11, 12, 13, 14};
    const std::vector<double> b{20, 19.5, 23, 22, 21, 25};
    const auto e = nm::ratio_interval(a, b, 95);
    // k by enumeration: the largest with P(U <= k-1) <= 2.5%.
    size_t k = 0;
    while (mann_whitney_tail(5, 6, k) <= 0.025) ++k;
    REQUIRE(k >= 1);
    std::vector<double> d;
    for (double x : a) {
        for (double y : b) d.push_back(std::log(y) - std::log(x));
    }
    std::sort(d.begin(), d.end());
    REQUIRE(e.ci_low);
    CHECK(*e.ci_low == Approx(std::exp(d[k - 1])).epsilon(1e-12));
    CHECK(*e.ci_high == Approx(std::exp(d[d.size() - k])).epsilon(1e-12));
    CHECK(*e.ci_confidence == Approx(100 * (1 - 2 * mann_whitney_tail(5, 6, k - 1))).epsilon(1e-9));
    CHECK(*e.ratio == Approx(21.5 / 12));
    CHECK(e.verdict == nm::RatioVerdict::Significant);

    // Every size a sweep makes, against the enumeration.
    for (size_t m = 2; m <= 6; ++m) {
        for (size_t n = 2; n <= 6; ++n) {
            INFO(m << "+" << n);
            std::vector<double> x(m), y(n);
            std::iota(x.begin(), x.end(), 100.0);
            std::iota(y.begin(), y.end(), 100.5);
            const auto r = nm::ratio_interval(x, y, 95);
            size_t kk = 0;
            while (kk < m * n / 2 && mann_whitney_tail(m, n, kk) <= 0.025) ++kk;
            const double reach = 100 * (1 - 2 * mann_whitney_tail(m, n, kk == 0 ? 0 : kk - 1));
            CHECK(*r.ci_confidence == Approx(reach).epsilon(1e-9));
            CHECK((r.verdict == nm::RatioVerdict::TooFew) == (kk == 0));
        }
    }
}

TEST_CASE("Too few repetitions claim nothing: 1 run on a side, 3 and 3 at 95%, the same figures twice are not significant", "[unit]") {
    const auto one = nm::ratio_interval({10}, {20, 21, 22}, 95);
    CHECK(one.verdict == nm::RatioVerdict::TooFew);
    CHECK_FALSE(one.ci_low);
    CHECK(*one.ratio == Approx(2.1));
    CHECK(one.why == "1+3 runs: one run on a side claims nothing");
    CHECK(nm::ratio_interval({10}, {20}, 95).verdict == nm::RatioVerdict::TooFew);
    // 3 and 3: the widest interval covers 1 - 2/20 = 90% only, however far apart the figures are.
    const auto three = nm::ratio_interval({10, 11, 12}, {100, 101, 102}, 95);
    CHECK(three.verdict == nm::RatioVerdict::TooFew);
    CHECK(*three.ci_confidence == Approx(90));
    CHECK(three.why == "3+3 runs: at most 90.0% confidence, 95.0% asked");
    CHECK(nm::ratio_interval({10, 11, 12}, {100, 101, 102}, 90).verdict == nm::RatioVerdict::Significant);
    CHECK(nm::repetitions_for_ratio(95) == 4);
    CHECK(nm::repetitions_for_ratio(99) == 5);
    // A/A: the same values on both sides include 1.
    const auto same = nm::ratio_interval({9, 10, 11, 12, 13}, {9, 10, 11, 12, 13}, 95);
    CHECK(same.verdict == nm::RatioVerdict::NotSignificant);
    CHECK(*same.ci_low < 1);
    CHECK(*same.ci_high > 1);
    // No logarithm of 0: nothing is tested.
    CHECK(nm::ratio_interval({0, 1, 2, 3}, {1, 2, 3, 4}, 95).verdict == nm::RatioVerdict::NotTestable);
    CHECK(nm::ratio_interval({}, {1, 2}, 95).verdict == nm::RatioVerdict::NotTestable);
}

TEST_CASE("precision_met: enough repetitions, the asked confidence reached, both ends within ci_pct of the median", "[unit]") {
    nm::PrecisionSpec p;                                                             // 5%, 95%, 3..12
    CHECK(nm::precision_met(nm::summarize({100, 101, 99, 102, 98, 100}), p));        // [98, 102] at 96.9%
    CHECK_FALSE(nm::precision_met(nm::summarize({100, 101, 99}), p));                // [99, 101] but at 75% only
    CHECK_FALSE(nm::precision_met(nm::summarize({100, 101, 99, 102, 98, 106}), p));  // 106 is 5.5% above 100.5
    p.confidence = 75;
    p.min_repetitions = 3;
    CHECK(nm::precision_met(nm::summarize({100, 101, 99}, 75), p));
    p.min_repetitions = 4;
    CHECK_FALSE(nm::precision_met(nm::summarize({100, 101, 99}, 75), p));
}

TEST_CASE("summarize_runs summarizes every metric of the runs, steal included", "[unit]") {
    std::vector<nm::RunResult> runs(2);
    runs[0].throughput_bps = 1e9;
    runs[1].throughput_bps = 3e9;
    runs[0].sender.cpu.util_pct = 50;
    runs[1].sender.cpu.util_pct = 70;
    runs[1].receiver.system.steal_pct = 4;
    runs[1].loss = nm::LossStats{};
    const auto s = nm::summarize_runs(runs);
    CHECK(s.at("throughput_bps").mean == 2e9);
    CHECK(s.at("throughput_bps").n == 2);
    CHECK(s.at("cpu_sender_pct").median == 60);
    CHECK(s.at("steal_pct").max == 4);
    CHECK(s.at("loss_pct").n == 1);  // only the UDP run has loss figures
    CHECK(nm::metric_values(runs, "loss_pct").size() == 1);
    CHECK(nm::metric_values(runs, "throughput_bps") == std::vector<double>{1e9, 3e9});
}

// The reference figures below come from tests/unit/matrix/stats_reference.py (enumeration of every
// arrangement, the adjustments from their definitions, scipy.stats.mannwhitneyu for the exact p-value).
TEST_CASE("Holm and Benjamini-Hochberg adjust p-values as their definitions do, in the input's order", "[unit]") {
    const std::vector<double> p{0.01, 0.04, 0.03, 0.005, 0.2, 0.04};
    const std::vector<double> holm{0.05, 0.12, 0.12, 0.03, 0.2, 0.12};
    const std::vector<double> bh{0.03, 0.048, 0.048, 0.03, 0.2, 0.048};
    const auto h = nm::adjust_p_values(p, nm::PAdjustment::Holm);
    const auto b = nm::adjust_p_values(p, nm::PAdjustment::BenjaminiHochberg);
    REQUIRE(h.size() == p.size());
    REQUIRE(b.size() == p.size());
    for (size_t i = 0; i < p.size(); ++i) {
        INFO("i = " << i);
        CHECK(h[i] == Approx(holm[i]).epsilon(1e-12));
        CHECK(b[i] == Approx(bh[i]).epsilon(1e-12));
    }
    CHECK(nm::adjust_p_values(p, nm::PAdjustment::None) == p);
    CHECK(nm::adjust_p_values({}, nm::PAdjustment::Holm).empty());
    // Never above 1, one test is its own adjustment.
    CHECK(nm::adjust_p_values({0.6, 0.7}, nm::PAdjustment::Holm) == std::vector<double>{1.0, 1.0});
    CHECK(nm::adjust_p_values({0.03}, nm::PAdjustment::BenjaminiHochberg) == std::vector<double>{0.03});
    CHECK(nm::parse_adjustment("bh") == nm::PAdjustment::BenjaminiHochberg);
    CHECK_THROWS_WITH(nm::parse_adjustment("bonferroni"), Catch::Matchers::Contains("--adjust"));
}

TEST_CASE("The ratio's p-value is the exact Mann-Whitney p-value and agrees with its interval", "[unit]") {
    const std::vector<double> a{10, 11, 12, 13, 14};
    const std::vector<double> b{20, 19.5, 23, 22, 21, 25};
    const auto e = nm::ratio_interval(a, b, 95);
    REQUIRE(e.p_value);
    CHECK(*e.p_value == Approx(0.004329004329004329).epsilon(1e-9));
    CHECK_FALSE(e.equivalence_p_value);
    const std::vector<double> c{10.0, 10.2, 9.9, 10.1, 10.05, 9.95};
    const std::vector<double> d{10.11, 10.01, 10.15, 9.92, 10.03, 10.08};
    const auto same = nm::ratio_interval(c, d, 95, 5.0);
    REQUIRE(same.p_value);
    CHECK(*same.p_value == Approx(0.6991341991341992).epsilon(1e-9));
    REQUIRE(same.equivalence_p_value);
    CHECK(*same.equivalence_p_value == Approx(0.0010822510822510823).epsilon(1e-9));
    CHECK(*nm::ratio_interval(c, d, 95, 1.0).equivalence_p_value == Approx(0.12012987012987013).epsilon(1e-9));
    CHECK(*nm::ratio_interval(a, b, 95, 5.0).equivalence_p_value == Approx(1.0));
    // Ties count against the claim: equal figures on both sides never look different.
    CHECK(*nm::ratio_interval({10.0, 10.1, 10.2, 10.3}, {10.0, 10.1, 10.2, 10.4}, 95).p_value == Approx(1.0));
    // The interval excludes 1 exactly when p <= alpha, for every size a sweep makes.
    for (size_t m = 4; m <= 7; ++m) {
        for (size_t n = 4; n <= 7; ++n) {
            for (double shift : {1.001, 1.01, 1.03, 1.1}) {
                std::vector<double> x(m), y(n);
                for (size_t i = 0; i < m; ++i) x[i] = 100 + 0.37 * static_cast<double>(i * 7 % m);
                for (size_t j = 0; j < n; ++j) y[j] = shift * (100.13 + 0.41 * static_cast<double>(j * 5 % n));
                const auto r = nm::ratio_interval(x, y, 95, 2.0);
                INFO(m << "+" << n << " x" << shift);
                REQUIRE(r.p_value);
                CHECK((r.verdict == nm::RatioVerdict::Significant) == (*r.p_value <= 0.05));
                // TOST at 5% each: the 90% interval lies inside [0.98, 1.02].
                const auto ninety = nm::ratio_interval(x, y, 90);
                REQUIRE(ninety.ci_low);
                CHECK((*r.equivalence_p_value <= 0.05) == (*ninety.ci_low > 0.98 && *ninety.ci_high < 1.02));
            }
        }
    }
}
