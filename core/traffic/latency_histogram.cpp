#include "core/traffic/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace nm {
namespace {

constexpr uint64_t kLinearEnd = uint64_t{1} << (LatencyHistogram::kSubBucketBits + 1);  // 256 ns

}  // namespace

size_t LatencyHistogram::bucket_of(uint64_t ns) {
    ns = std::min(ns, kMaxValueNs);
    if (ns < kLinearEnd) return static_cast<size_t>(ns);
    // The top kSubBucketBits + 1 bits of the value, offset by one row of 2^kSubBucketBits per doubling.
    const int shift = std::bit_width(ns) - (kSubBucketBits + 1);
    return (static_cast<size_t>(shift) << kSubBucketBits) + static_cast<size_t>(ns >> shift);
}

uint64_t LatencyHistogram::bucket_lower(size_t index) {
    if (index < kLinearEnd) return index;
    const size_t shift = (index >> kSubBucketBits) - 1;
    return static_cast<uint64_t>(index - (shift << kSubBucketBits)) << shift;
}

uint64_t LatencyHistogram::bucket_width(size_t index) {
    if (index < kLinearEnd) return 1;
    return uint64_t{1} << ((index >> kSubBucketBits) - 1);
}

void LatencyHistogram::record(uint64_t ns) {
    const size_t i = bucket_of(ns);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++count_;
    sum_ += ns;
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
    for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
}

double LatencyHistogram::mean_ns() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }

double LatencyHistogram::percentile_ns(double pct) const {
    if (count_ == 0) return 0;
    pct = std::clamp(pct, 0.0, 100.0);
    // Nearest rank: the ceil(p/100 * n)-th smallest value (at least the first). The tolerance keeps
    // 99.9% of 1000 at rank 999 where the product lands a hair above it.
    const double exact_rank = pct / 100 * static_cast<double>(count_);
    const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(exact_rank - 1e-9)));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        seen += counts_[i];
        if (seen >= rank) {
            const double mid = static_cast<double>(bucket_lower(i)) + static_cast<double>(bucket_width(i) - 1) / 2;
            return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
        }
    }
    return static_cast<double>(max_);
}

std::vector<std::pair<size_t, uint64_t>> LatencyHistogram::buckets() const {
    std::vector<std::pair<size_t, uint64_t>> out;
    for (size_t i = 0; i < counts_.size(); ++i) {
        if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
    }
    return out;
}

LatencyHistogram LatencyHistogram::from_parts(const std::vector<std::pair<size_t, uint64_t>>& buckets, uint64_t count, uint64_t sum_ns,
                                              uint64_t min_ns, uint64_t max_ns) {
    LatencyHistogram h;
    const size_t limit = bucket_of(kMaxValueNs);
    uint64_t total = 0;
    for (const auto& [index, n] : buckets) {
        if (index > limit) throw std::invalid_argument("latency histogram: bucket " + std::to_string(index) + " out of range");
        if (index >= h.counts_.size()) h.counts_.resize(index + 1, 0);
        h.counts_[index] += n;
        total += n;
    }
    if (total != count)
        throw std::invalid_argument("latency histogram: bucket counts add up to " + std::to_string(total) + ", not " + std::to_string(count));
    h.count_ = count;
    h.sum_ = sum_ns;
    h.min_ = count ? min_ns : UINT64_MAX;
    h.max_ = max_ns;
    return h;
}

std::vector<std::pair<uint64_t, double>> LatencyHistogram::cdf() const {
    std::vector<std::pair<uint64_t, double>> points;
    const double total = static_cast<double>(count_);
    uint64_t below = 0;
    for (const auto& [index, n] : buckets()) {
        below += n;
        points.emplace_back(bucket_lower(index) + bucket_width(index), static_cast<double>(below) / total);
    }
    return points;
}

}  // namespace nm
