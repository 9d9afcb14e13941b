// The latency histogram against an exact computation on the recorded values: nearest-rank percentiles of
// the sorted sample, the exact mean, min and max; merging equals recording everything in one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/traffic/latency_histogram.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/rr_types.hpp"

namespace {

// The exact nearest-rank percentile: the ceil(p/100 n)-th smallest value (at least the first).
double exact_percentile(std::vector<uint64_t> v, double pct) {
    std::sort(v.begin(), v.end());
    const auto rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(pct / 100 * static_cast<double>(v.size()) - 1e-9)));
    return static_cast<double>(v[rank - 1]);
}

// Latencies as a loaded veth gives them: most near 15 us, a long tail up to tens of milliseconds.
std::vector<uint64_t> recorded_latencies(size_t n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> body(std::log(15000.0), 0.25);
    std::exponential_distribution<double> tail(1.0 / 2e6);
    std::uniform_int_distribution<uint64_t> small(0, 300);
    std::vector<uint64_t> v;
    for (size_t i = 0; i < n; ++i) {
        const auto pick = i % 100;
        if (pick == 0) v.push_back(static_cast<uint64_t>(tail(rng)));
        else if (pick == 1) v.push_back(small(rng));  // the exact (linear) region below 256 ns
        else v.push_back(static_cast<uint64_t>(body(rng)));
    }
    return v;
}

}  // namespace

TEST_CASE("Latency histogram: percentiles within the stated relative error of the exact nearest-rank values", "[unit]") {
    for (unsigned seed : {1u, 2u, 3u}) {
        const auto v = recorded_latencies(20000, seed);
        nm::LatencyHistogram h;
        for (uint64_t ns : v) h.record(ns);
        REQUIRE(h.count() == v.size());
        CHECK(h.min_ns() == *std::min_element(v.begin(), v.end()));
        CHECK(h.max_ns() == *std::max_element(v.begin(), v.end()));
        const double mean = static_cast<double>(std::accumulate(v.begin(), v.end(), uint64_t{0})) / static_cast<double>(v.size());
        CHECK(h.mean_ns() == Approx(mean).epsilon(1e-12));
        double last = 0;
        for (double pct : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.5, 99.9, 99.99, 100.0}) {
            const double exact = exact_percentile(v, pct);
            const double got = h.percentile_ns(pct);
            INFO("seed " << seed << " p" << pct << ": exact " << exact << " ns, histogram " << got << " ns");
            CHECK(std::fabs(got - exact) <= nm::LatencyHistogram::kRelativeError * exact + 0.5);
            CHECK(got >= last);  // monotonic
            last = got;
        }
    }
}

TEST_CASE("Latency histogram: every bucket's range holds its values, and the width is at most 1/128 of the lower bound", "[unit]") {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> bits(0, 40);
    for (int i = 0; i < 100000; ++i) {
        const uint64_t ns = rng() >> (64 - std::max(1, bits(rng)));
        const size_t b = nm::LatencyHistogram::bucket_of(ns);
        const uint64_t lo = nm::LatencyHistogram::bucket_lower(b);
        const uint64_t w = nm::LatencyHistogram::bucket_width(b);
        REQUIRE(lo <= ns);
        REQUIRE(ns < lo + w);
        if (lo >= 256) REQUIRE(static_cast<double>(w) <= static_cast<double>(lo) / 128);
    }
    // Buckets are contiguous: the next bucket starts where this one ends.
    for (size_t b = 0; b + 1 < nm::LatencyHistogram::bucket_of(nm::LatencyHistogram::kMaxValueNs); ++b) {
        REQUIRE(nm::LatencyHistogram::bucket_lower(b) + nm::LatencyHistogram::bucket_width(b) == nm::LatencyHistogram::bucket_lower(b + 1));
    }
}

TEST_CASE("Latency histogram: merging equals recording both samples in one, and survives JSON", "[unit]") {
    const auto a = recorded_latencies(5000, 11), b = recorded_latencies(3000, 12);
    nm::LatencyHistogram ha, hb, all;
    for (uint64_t ns : a) ha.record(ns), all.record(ns);
    for (uint64_t ns : b) hb.record(ns), all.record(ns);
    ha.merge(hb);
    CHECK(ha.buckets() == all.buckets());
    CHECK(ha.count() == all.count());
    CHECK(ha.min_ns() == all.min_ns());
    CHECK(ha.max_ns() == all.max_ns());
    CHECK(ha.sum_ns() == all.sum_ns());
    const auto back = nm::Json(all).get<nm::LatencyHistogram>();
    CHECK(back.buckets() == all.buckets());
    CHECK(back.percentile_ns(99) == all.percentile_ns(99));
    CHECK(back.mean_ns() == all.mean_ns());
    nm::LatencyHistogram empty;
    CHECK(empty.percentile_ns(50) == 0);
    CHECK(nm::Json(empty).get<nm::LatencyHistogram>().count() == 0);
}

TEST_CASE("Latency histogram: the CDF steps at each non-empty bucket's upper bound to the exact fraction of values below it", "[unit]") {
    CHECK(nm::LatencyHistogram().cdf().empty());
    const auto values = recorded_latencies(20000, 7);
    nm::LatencyHistogram h;
    for (const auto v : values) h.record(v);
    const auto cdf = h.cdf();
    REQUIRE(cdf.size() == h.buckets().size());
    REQUIRE(cdf.back().second == 1.0);
    for (size_t i = 0; i < cdf.size(); ++i) {
        const auto [upper, fraction] = cdf[i];
        if (i > 0) CHECK(upper > cdf[i - 1].first);
        // Counted on the values themselves: the share strictly below the step's bound (values above the
        // histogram's range are counted in its last bucket).
        const auto below = std::count_if(values.begin(), values.end(),
                                         [&, bound = upper](uint64_t v) { return std::min(v, nm::LatencyHistogram::kMaxValueNs) < bound; });
        INFO("step " << i << " at " << upper << " ns");
        CHECK(fraction == Approx(static_cast<double>(below) / static_cast<double>(values.size())).margin(1e-12));
    }
}

TEST_CASE("Latency histogram: a JSON histogram whose counts do not add up, or of another layout, is refused", "[unit]") {
    nm::LatencyHistogram h;
    h.record(1000);
    nm::Json j = h;
    j["count"] = 2;
    CHECK_THROWS_WITH(j.get<nm::LatencyHistogram>(), Catch::Contains("add up to 1, not 2"));
    j = h;
    j["sub_bucket_bits"] = 5;
    CHECK_THROWS_WITH(j.get<nm::LatencyHistogram>(), Catch::Contains("sub_bucket_bits 5"));
    j = h;
    j["buckets"] = nm::Json::array({nm::Json::array({1u << 20, 1})});
    CHECK_THROWS_WITH(j.get<nm::LatencyHistogram>(), Catch::Contains("out of range"));
}

TEST_CASE("summarize_latency: microseconds, mean and max exact, percentiles in order", "[unit]") {
    nm::LatencyHistogram h;
    for (uint64_t us = 1; us <= 1000; ++us) h.record(us * 1000);
    const auto s = nm::summarize_latency(h);
    CHECK(s.mean == Approx(500.5));
    CHECK(s.max == 1000);
    CHECK(s.p50 == Approx(500).epsilon(nm::LatencyHistogram::kRelativeError));
    CHECK(s.p99 == Approx(990).epsilon(nm::LatencyHistogram::kRelativeError));
    CHECK(s.p999 == Approx(999).epsilon(nm::LatencyHistogram::kRelativeError));
    CHECK(s.p50 <= s.p90);
    CHECK(s.p90 <= s.p99);
    CHECK(s.p99 <= s.p999);
    CHECK(s.p999 <= s.max);
}
