#pragma once
// The kernel profile of one host over one window, as the engine's ends use it: armed before the test (the
// permission checks, the sampler's events opened disabled, the tasks read from /proc), started and stopped
// with the measured window, then turned into a CpuProfile (symbols named through /proc/kallsyms and the
// ELF files the tasks map, categories from the table).
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "core/profile/cpu_profile.hpp"
#include "core/profile/perf_sampler.hpp"
#include "core/profile/task_table.hpp"

namespace nm::profile {

/// Rates the profiler takes: perf's sampling-rate ceiling is far above, and below 1 Hz a window of
/// seconds holds no samples.
inline constexpr uint32_t kMinProfileHz = 1;
inline constexpr uint32_t kMaxProfileHz = 10000;

/// Throws nm::Error (Usage) for a rate outside kMinProfileHz..kMaxProfileHz, naming --profile-hz.
void check_profile_hz(uint32_t hz);

class HostProfiler {
public:
    /// Checks the permissions (check_profile_access), opens the sampler at `hz` and reads the tasks.
    /// Throws nm::Error (Usage) with the reason when the host does not allow it.
    explicit HostProfiler(uint32_t hz);

    /// The window starts: sampling begins. `at` is the engine's steady_clock time of the window's start.
    void start(std::chrono::steady_clock::time_point at);
    /// The window ends: sampling stops; samples after `at` are dropped.
    void stop(std::chrono::steady_clock::time_point at);
    bool started() const { return start_.has_value(); }

    /// The profile of the window, samples sorted by `table` and by task (`send`/`recv`: the engine's
    /// worker threads on this host). Call after stop(); once.
    CpuProfile profile(const CategoryTable& table, const std::set<int32_t>& send, const std::set<int32_t>& recv, const std::string& host);

private:
    PerfSampler sampler_;
    TaskTable tasks_;
    std::optional<uint64_t> start_;  // ns on CLOCK_MONOTONIC
    std::optional<uint64_t> stop_;
};

}  // namespace nm::profile
