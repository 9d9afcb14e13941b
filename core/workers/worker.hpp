#pragma once
// The contract between EndEngine and one worker thread: what the thread is given (a group of streams,
// the end's plan and timeline, a stop token), what it publishes while traffic flows (a relaxed progress
// counter, nothing else), and what it leaves behind for the merge after join(). A test kind's workers
// (core/engine/worker_kinds.hpp) are functions of this one signature.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/traffic/traffic_types.hpp"
#include "core/workers/engine_plan.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {

/// Published by a worker for the session's stall check and done test; each on its own cache line, so
/// workers on different cores do not bounce one line between them.
struct alignas(64) WorkerProgress {
    std::atomic<uint64_t> bytes{0};  ///< moved so far, in or out of the window (relaxed)
    std::atomic<bool> done{false};   ///< the worker has ended (set by run_worker on every path)
    std::atomic<int32_t> tid{0};     ///< the worker thread's kernel thread id (gettid), set when it starts
};

/// What a worker measured, read only after join().
struct WorkerOutput {
    std::vector<StreamResult> streams;  ///< one per stream it sent or received
    WindowCounts window;                ///< its thread CPU and per-interval counts over the window
    uint64_t calls = 0;                 ///< send/recv calls in the window
    std::string error;                  ///< the first error it met; "" = none. Any error fails the run.
    RrEndCounts rr;                     ///< request/response workers: transactions, latencies (interval
                                        ///< counts are window.interval_packets, by request time)
    std::optional<SocketKnobs> knobs;   ///< its sockets' knobs as read back (the first one it could read)
    ZeroCopyStats zerocopy;             ///< -Z senders
    RxSpinStats rx_spin;                ///< --rx-spin stream receivers (over the whole test, --omit included)
};

/// What one worker thread is given. The references outlive the thread (EndEngine owns them).
struct WorkerJob {
    std::vector<DataStream> streams;  ///< the worker's group; it owns the sockets from here on
    const EnginePlan& plan;
    const Timeline& timeline;
    WorkerProgress& progress;
    std::stop_token stop;  ///< senders: stop now; UDP receivers: drain what is queued, then end
    WorkerOutput& out;
};

/// A worker: moves its group's data until its streams end, the window ends or `job.stop` is requested.
/// It may throw; run_worker records that as its error.
using WorkerFn = void (*)(WorkerJob& job);

/// The thread entry of every worker: runs `fn`, turns any exception into `job.out.error` (so the end's
/// status says failed rather than the thread taking the process down), and sets `progress.done` on every
/// path.
void run_worker(WorkerFn fn, WorkerJob& job) noexcept;

/// A receiver's timeline: the window never ends by the clock. A receiver counts until the peer's senders
/// are done, not until its own clock says so: the sender started one control message later and sends until
/// its window ends, and those bytes are part of the test (iperf3's receiver does the same). The end's
/// window then ends when its receivers are done.
Timeline until_peer_done(Timeline timeline);

/// One StreamResult per stream of `streams`, in order, with its id and `direction` filled in.
std::vector<StreamResult> stream_results(const std::vector<DataStream>& streams, Direction direction);

/// The error text of a failed call on stream `id`: "stream 3: send: Broken pipe".
std::string stream_error(uint32_t id, const char* what, int err);

/// EAGAIN, EWOULDBLOCK or EINTR: a non-blocking call would have waited, or a blocking one's SO_RCVTIMEO/
/// SO_SNDTIMEO ran out (or a signal came); the worker looks at its clock and tries again.
bool would_block(int err);

/// A stream receiver's loop: its streams on one StreamSet waiting for EPOLLIN with the plan's --rx-spin, run
/// until they end or `job.stop` (then as `on_stop` says). Records the spin's figures in `job.out` and closes
/// `meter`; `after` (when given) then sees the streams, before the set closes their sockets.
void run_receive_loop(WorkerJob& job, WindowMeter& meter, OnStop on_stop, std::function<bool(StreamSet&, TimePoint)> on_turn,
                      std::function<Step(Stream&, TimePoint)> on_ready, const std::function<void(StreamSet&)>& after = {});

/// A request/response worker moves at most this much in one send() or recv().
inline constexpr size_t kRrMaxChunk = 1 << 20;
/// How long a request/response initiator waits past its window for the answers to its last requests.
inline constexpr std::chrono::seconds kRrDrainTime{2};

/// At least one byte of a recognisable pattern ('A' to 'Z', cycled) rather than zeros, so a capture of a
/// request/response test shows where it is.
std::vector<char> rr_payload(size_t size);

}  // namespace nm
