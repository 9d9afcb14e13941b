#pragma once
#include <chrono>

namespace nm {

/// Time as the engine and the runner see it; tests substitute a fake to drive timing logic.
class Clock {
public:
    using time_point = std::chrono::steady_clock::time_point;
    virtual ~Clock() = default;
    virtual time_point now() const = 0;
    virtual void sleep_until(time_point when) = 0;
};

/// The real monotonic clock.
class SteadyClock final : public Clock {
public:
    time_point now() const override { return std::chrono::steady_clock::now(); }
    void sleep_until(time_point when) override;
};

}  // namespace nm
