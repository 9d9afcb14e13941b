#pragma once
// `sweep --json-stream`: the sweep's progress as one JSON object per line, written as it happens, for a
// dashboard or `jq` to follow live. The events and their fields are listed in results/STREAM.md and
// checked by results/stream.schema.json; every line carries "event" and "time" (UTC, ISO 8601).
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>

#include "core/base/unique_fd.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/runner.hpp"

namespace nm {

inline constexpr const char* kStreamSchema = "nicmatrix/stream/v1";

/// Lines the stream queues by default before it drops events (--json-stream-queue).
inline constexpr size_t kDefaultJsonStreamQueue = 1024;

/// One JSON object per line on a descriptor, stamped with "time", never blocking the caller: each line
/// joins a queue of at most `queue_lines` lines that is written as far as the reader takes it whenever a
/// line is added (or drain() is called). An event that finds the queue full is dropped and counted; a
/// reader that goes away (EPIPE) closes the output, the rest is counted, nothing is thrown. The
/// descriptor is written through a description of its own opened non-blocking (/proc/self/fd/N), so the
/// shell's or another process's view of it is unchanged; a socket is sent to with MSG_DONTWAIT. Safe to
/// call from several threads. The process ignores SIGPIPE (cli/main.cpp does), so a reader gone is EPIPE.
class JsonLines {
public:
    /// `fd` is not owned and must outlive this object.
    JsonLines(int fd, size_t queue_lines);
    JsonLines(const JsonLines&) = delete;
    JsonLines& operator=(const JsonLines&) = delete;

    void write(Json event);
    /// Writes what is queued until the queue is empty, the output closed, `deadline` passed or `stop`
    /// requested; waits for the reader with poll(), never in write().
    void drain(std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});
    JsonStreamStats stats() const;

private:
    void flush_locked();
    void close_locked();

    mutable std::mutex mutex_;
    UniqueFd own_;          ///< the non-blocking description, when one could be opened
    int fd_ = -1;           ///< what is written to: own_, or the caller's descriptor
    bool socket_ = false;   ///< send(MSG_DONTWAIT) on the caller's descriptor
    bool guarded_ = false;  ///< neither: only PIPE_BUF bytes at a time, after poll() says there is room
    std::deque<std::string> queue_;
    size_t offset_ = 0;  ///< bytes of queue_.front() already written
    JsonStreamStats stats_;
};

/// What the stream lost, for a line on stderr ("--json-stream: 12 events dropped, 1024 lines not written:
/// the reader did not keep up (raise --json-stream-queue)"); "" when it lost nothing.
std::string describe_stream_losses(const JsonStreamStats& stats);

/// `run --json-stream`: {"event":"run_start","schema","spec"} before the test, then when it ends each
/// {"event":"interval","index","interval"} and {"event":"run","run"}, then {"event":"run_end","status","error"}.
void stream_run_start(JsonLines& out, const TestSpec& spec);
/// {"event":"progress", LiveInterval's fields}: while the test runs, each interval of this end's counts.
void stream_run_progress(JsonLines& out, const LiveInterval& interval);
void stream_run_done(JsonLines& out, const RunResult& run);

/// Writes the events of one sweep to `out` (JsonLines: never blocking; what a slow reader costs is in
/// stream_stats()). The caller writes "start" before run_sweep and "end" after it; the runner's progress
/// calls write the rest.
class SweepStreamWriter final : public SweepObserver {
public:
    explicit SweepStreamWriter(JsonLines& out) : out_(out) {}

    /// {"event":"start","schema","config","cells","output","command"}: before the first change.
    void start(const std::string& config, size_t cells, const std::string& output, const std::string& command);
    /// {"event":"end","output","cells","interrupted","budget_reached"}: after the restore.
    void end(const std::string& output, size_t cells, bool interrupted, bool budget_reached);

    void on_note(const std::string& text) override;
    void on_cell_start(const CellProgress& progress) override;
    /// Writes, for the visit that ended: each "interval" of its new repetition, the "repetition" with its
    /// run, then the "cell" with everything the cell has so far.
    void on_cell_done(const CellProgress& progress, const CellResult& result) override;
    /// {"event":"progress","key","repetition", LiveInterval's fields}: while the repetition runs.
    void on_interval(const std::string& key, size_t repetition, const LiveInterval& interval) override;
    std::optional<JsonStreamStats> stream_stats() const override { return out_.stats(); }

private:
    void write(Json event) { out_.write(std::move(event)); }

    JsonLines& out_;
    std::map<std::string, size_t> runs_seen_;  ///< cell key -> runs already streamed
};

}  // namespace nm
