#pragma once
// One end of a test: the worker threads that move data, the measured window, and the end's own figures
// (thread CPU, /proc/stat, softnet, interrupts, interface counters). Client and server each run one
// EndEngine; what it runs is an EnginePlan (core/workers/engine_plan.hpp), the control protocol around it is
// in traffic_session.hpp, which streams each end sends is core/workers/stream_layout.hpp.
//
// The workers are a test kind's (core/engine/worker_kinds.hpp: TCP stream, UDP stream), each a loop over a set
// of streams (core/workers/stream_set.hpp). Threads share nothing while traffic flows: each worker owns its
// sockets, buffers and counters, and publishes only a relaxed progress counter (for stall detection).
// Results are merged after join() (core/engine/worker_merge.hpp).
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/base/unique_fd.hpp"
#include "core/host/proc_stats.hpp"
#include "core/traffic/traffic_types.hpp"
#include "core/workers/engine_plan.hpp"

namespace nm {

struct WorkerOutput;
struct WorkerProgress;

/// Told when an end's measured window starts and ends, on the thread that calls EndEngine::poll() and
/// finish(), with the same times the window's /proc snapshots are taken at. The kernel profile samples
/// exactly this window through it; the engine knows nothing of what the observer does.
class WindowObserver {
public:
    virtual ~WindowObserver() = default;
    virtual void window_started(TimePoint at) = 0;
    virtual void window_ended(TimePoint at) = 0;
};

/// Runs one end's workers and measures the window. Not copyable; the destructor stops and joins.
class EndEngine {
public:
    /// `observer` (may be null) is told the window's start and end; it must outlive the engine.
    explicit EndEngine(EnginePlan plan, WindowObserver* observer = nullptr);
    ~EndEngine();
    EndEngine(const EndEngine&) = delete;
    EndEngine& operator=(const EndEngine&) = delete;

    /// Starts the worker threads (they inherit the caller's network namespace), each named
    /// "nm-send-K"/"nm-recv-K" (top -H, /proc/PID/task/TID/comm) and pinned to plan.cpus when given; a
    /// thread that cannot be pinned fails the end with that error.
    void start(const Timeline& timeline);

    /// Called often by the session loop: takes the window's /proc snapshots when they are due, and tells
    /// the live sink (when watched) of each interval that has ended.
    void poll(TimePoint now);
    /// The next time poll() has something to do by the clock (the window's start or end, a live interval's
    /// edge); max() when nothing is due. A session loop wakes no later than this, so the snapshots are
    /// taken at the window's edges, not up to a poll period after them.
    TimePoint next_due() const;

    /// While the window is open, poll() calls `sink` once per interval of the timeline (none without
    /// intervals) with what this end's workers moved in it, and once more for the part-interval before the
    /// window closes. Set before start(); called on the thread that calls poll().
    void watch(std::function<void(const LiveInterval&)> sink) { live_sink_ = std::move(sink); }

    bool has_senders() const { return !send_progress_.empty(); }
    bool has_receivers() const { return !recv_progress_.empty(); }
    bool senders_done() const;
    bool receivers_done() const;
    bool all_done() const { return senders_done() && receivers_done(); }

    /// True when no data moved for the stall timeout while it should have (inside the window, some
    /// worker still running). A path that stops passing packets shows up here.
    bool stalled(TimePoint now);

    /// UDP receivers drain what is queued (for at most StreamSet::kDrainTime), then end.
    void stop_receivers() { recv_stop_.request_stop(); }

    /// Stops everything, joins, and builds this end's report (with the workers' thread ids). A worker's
    /// error makes an Ok `status` Failed and, when `error` is empty, becomes the report's error. Workers see
    /// the stop within a poll; one that has not ended kFinishTime later gets its sockets shut down, so no
    /// peer can keep it (and the end) going.
    EndReport finish(RunStatus status, const std::string& error);

    /// How long finish() waits for the workers before it shuts their sockets down.
    static constexpr std::chrono::milliseconds kFinishTime{2000};

private:
    void take_start_snapshot(TimePoint now);
    void take_end_snapshot(TimePoint now);
    /// The live sink's next interval, ending at `now` (read from the workers' progress counters).
    void tell_live(TimePoint now);
    /// When the live interval being counted ends; max() when nothing watches or there are no intervals.
    TimePoint next_live_edge() const;

    EnginePlan plan_;
    WindowObserver* observer_ = nullptr;
    Timeline timeline_;
    std::stop_source send_stop_;
    std::stop_source recv_stop_;
    std::vector<std::unique_ptr<WorkerProgress>> send_progress_;
    std::vector<std::unique_ptr<WorkerProgress>> recv_progress_;
    std::vector<std::unique_ptr<WorkerOutput>> send_out_;
    std::vector<std::unique_ptr<WorkerOutput>> recv_out_;
    std::vector<std::jthread> threads_;
    std::vector<UniqueFd> sockets_;  ///< a second handle on every data socket, to shut it down in finish()
    std::optional<ProcSnapshot> snap_start_, snap_end_;
    TimePoint t_start_{}, t_end_{};
    /// What ended the window: its clock (a sender's window_end), the workers (all done: a receiver at the
    /// peer's end of data, a byte count sent), or finish() (stopped, stalled, failed).
    enum class WindowEnd { Clock, Workers, Stopped };
    WindowEnd ended_by_ = WindowEnd::Stopped;
    uint64_t last_progress_ = 0;
    std::function<void(const LiveInterval&)> live_sink_;
    size_t live_index_ = 0;
    TimePoint live_from_{};                       ///< when the live interval being counted began
    uint64_t live_sent_ = 0, live_received_ = 0;  ///< the counters' totals at live_from_
    TimePoint last_progress_at_{};
    bool started_ = false;
};

/// Bytes one worker thread of `plan` allocates for its buffers and per-stream state: a sender
/// (`sender`) or a receiver with `streams` streams, sized as the workers size them. The kernel's socket
/// buffers are not in it. For the server's memory budget (core/session/server_limits.hpp).
uint64_t worker_memory_bytes(const EnginePlan& plan, bool sender, size_t streams);

/// Fills the per-second and per-packet rates of `napi` from its counts over `duration_s` (0 where a
/// divisor is 0). Pure.
void napi_rates(NapiStats& napi, double duration_s);

}  // namespace nm
