#pragma once
// Pacing for -b / --pps: a token bucket in units (datagrams or bytes) per second, driven by a Clock so the
// timing logic is tested with a fake clock.
#include <chrono>
#include <cstdint>

#include "core/base/clock.hpp"

namespace nm {

/// Tokens accrue at `rate_per_s` up to `burst`; take() hands out whole tokens. Starting empty keeps the
/// first second from bursting. The average rate over any long span is exact: tokens are never lost by
/// rounding, only capped by the burst (so a sender that falls behind by more than `burst` does not catch up
/// in one go, which is what keeps the path loss-free).
class TokenBucket {
public:
    /// `rate_per_s` > 0; `burst` >= 1 whole tokens.
    TokenBucket(const Clock& clock, double rate_per_s, double burst);

    /// Takes up to `want` whole tokens now; returns how many were taken (0 when none is available).
    uint64_t take(uint64_t want);

    /// When the next whole token will be available (now, if one is).
    Clock::time_point next_available() const;

    double rate_per_s() const { return rate_; }

private:
    void refill();

    const Clock& clock_;
    double rate_;
    double burst_;
    double tokens_ = 0;
    Clock::time_point last_;
};

}  // namespace nm
