#pragma once
// A log-linear latency histogram (HdrHistogram's layout): below 2^(kSubBucketBits+1) ns every nanosecond
// has its own bucket; above, each power of two is cut into 2^kSubBucketBits equal buckets. A bucket's
// width is then at most 1/128 of its lower bound, and a percentile reported as its bucket's midpoint is
// within 1/256 (0.39%) of the exact nearest-rank value. The mean, min and max are exact (kept aside).
// Histograms merge by adding counts, so flows, threads, ends and repetitions combine without losing
// anything. Pure value type; JSON in json_codec_traffic.cpp.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nm {

class LatencyHistogram {
public:
    /// 2^7 = 128 buckets per power of two.
    static constexpr int kSubBucketBits = 7;
    /// Values above this (2^40 ns, about 18 minutes) are counted in the last bucket.
    static constexpr uint64_t kMaxValueNs = uint64_t{1} << 40;
    /// The bound on a percentile's relative error against the exact nearest-rank value.
    static constexpr double kRelativeError = 1.0 / (1 << (kSubBucketBits + 1));

    /// Counts one latency of `ns` nanoseconds.
    void record(uint64_t ns);
    /// Adds every count of `other` (the union of the two samples).
    void merge(const LatencyHistogram& other);

    uint64_t count() const { return count_; }
    uint64_t min_ns() const { return count_ ? min_ : 0; }
    uint64_t max_ns() const { return max_; }
    /// Exact mean of the recorded values (0 when empty).
    double mean_ns() const;
    /// The nearest-rank percentile (`pct` in 0..100: the smallest value with at least pct% of the sample
    /// at or below it), as its bucket's midpoint clamped to [min, max]; 0 when empty. Monotonic in `pct`.
    double percentile_ns(double pct) const;

    /// The bucket a value falls in, and a bucket's [lower, lower + width) range in ns. Pure.
    static size_t bucket_of(uint64_t ns);
    static uint64_t bucket_lower(size_t index);
    static uint64_t bucket_width(size_t index);

    /// Non-empty buckets as (index, count), in index order: what the JSON carries.
    std::vector<std::pair<size_t, uint64_t>> buckets() const;
    /// The empirical CDF, one step per non-empty bucket: (the bucket's upper bound in ns, the fraction of the
    /// sample in it and below), in order; the last fraction is 1. Empty when nothing was recorded.
    std::vector<std::pair<uint64_t, double>> cdf() const;
    /// Rebuilds a histogram from its JSON parts; throws std::invalid_argument for an index out of range
    /// or counts that do not add up to `count`.
    static LatencyHistogram from_parts(const std::vector<std::pair<size_t, uint64_t>>& buckets, uint64_t count, uint64_t sum_ns, uint64_t min_ns,
                                       uint64_t max_ns);
    uint64_t sum_ns() const { return sum_; }

private:
    std::vector<uint64_t> counts_;  ///< grown on demand up to the bucket of kMaxValueNs
    uint64_t count_ = 0;
    uint64_t sum_ = 0;
    uint64_t min_ = UINT64_MAX;
    uint64_t max_ = 0;
};

}  // namespace nm
