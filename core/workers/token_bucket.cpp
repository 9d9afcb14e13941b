#include "core/workers/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace nm {

TokenBucket::TokenBucket(const Clock& clock, double rate_per_s, double burst)
    : clock_(clock), rate_(rate_per_s), burst_(std::max(1.0, burst)), last_(clock.now()) {}

void TokenBucket::refill() {
    const auto now = clock_.now();
    if (now <= last_) return;
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
    last_ = now;
}

uint64_t TokenBucket::take(uint64_t want) {
    refill();
    const auto whole = static_cast<uint64_t>(std::floor(tokens_));
    const uint64_t n = std::min(want, whole);
    tokens_ -= static_cast<double>(n);
    return n;
}

Clock::time_point TokenBucket::next_available() const {
    const auto now = clock_.now();
    const double elapsed = now > last_ ? std::chrono::duration<double>(now - last_).count() : 0.0;
    const double have = std::min(burst_, tokens_ + elapsed * rate_);
    if (have >= 1.0) return now;
    // Bounded before the conversion: a rate of 1e-300/s would otherwise overflow the duration (the
    // caller sleeps in short slices anyway).
    const double wait_s = std::min((1.0 - have) / rate_, 86400.0);
    return now + std::chrono::duration_cast<Clock::time_point::duration>(std::chrono::duration<double>(wait_s));
}

}  // namespace nm
