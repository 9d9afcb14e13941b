#pragma once
// A worker thread's view of the measured window: its own CPU time over the window (getrusage
// RUSAGE_THREAD at the window's start and end), the CPUs it ran on (sched_getcpu at every tick inside the
// window) and what it moved per interval. Each worker owns one; the
// end merges them after join().
#include <cstdint>
#include <vector>

#include "core/workers/engine_plan.hpp"

namespace nm {

/// Thread CPU time (getrusage RUSAGE_THREAD), seconds.
struct ThreadCpu {
    double user_s = 0;
    double sys_s = 0;
};
ThreadCpu thread_cpu_now();

/// The CPU the calling thread runs on now (sched_getcpu); -1 when it cannot say.
int current_cpu();

/// What one worker measured over the window.
struct WindowCounts {
    ThreadCpu cpu;                         ///< CPU of the worker's thread over the window
    std::vector<uint64_t> interval_bytes;  ///< [k]: bytes counted in [k, k+1) intervals after window_start
    std::vector<uint64_t> interval_packets;
    std::vector<uint32_t> cpus;  ///< CPUs the thread was seen on inside the window, ascending
    TimePoint last_count{};      ///< when count() was last called (epoch: never)
};

/// Follows the window of `timeline` (its own copy) as the worker's loop ticks it. The thread CPU reading
/// is a parameter so tests can drive it; the meter must be ticked from the thread whose CPU it measures.
class WindowMeter {
public:
    using CpuReader = ThreadCpu (*)();
    using CpuIdReader = int (*)();
    WindowMeter(const Timeline& timeline, WindowCounts& out, CpuReader cpu_now = thread_cpu_now, CpuIdReader cpu_id = current_cpu)
        : tl_(timeline), out_(out), cpu_now_(cpu_now), cpu_id_(cpu_id) {}

    /// Advances the window state to `now`; true while inside the window. Every tick inside the window
    /// notes the CPU the thread is on. Ticks must not go back in time.
    bool tick(TimePoint now);
    /// True on the tick that entered the window, false on every other.
    bool began() const { return began_; }
    bool in() const { return state_ == State::In; }
    const Timeline& timeline() const { return tl_; }

    /// Adds to interval `(now - window_start) / interval` (no interval when the timeline has none), and
    /// notes `now` as the last count's time. `now` must not be before window_start.
    void count(TimePoint now, uint64_t bytes, uint64_t packets);

    /// Ends the window now if it is open (the worker stops before window_end): the CPU figure covers
    /// what was measured. Idempotent.
    void close();

private:
    void note_cpu();
    enum class State { Before, In, After };
    const Timeline tl_;
    WindowCounts& out_;
    CpuReader cpu_now_;
    CpuIdReader cpu_id_;
    int last_cpu_ = -1;
    State state_ = State::Before;
    ThreadCpu cpu_start_;
    bool began_ = false;
};

}  // namespace nm
