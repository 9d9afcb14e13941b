#pragma once
// `sweep --json-stream`: the sweep's progress as one JSON object per line, written as it happens, for a
// dashboard or `jq` to follow live. The events and their fields are listed in results/STREAM.md and
// checked by results/stream.schema.json; every line carries "event" and "time" (UTC, ISO 8601).
#include <ostream>
#include <map>
#include <string>

#include "core/base/json_codec.hpp"
#include "matrix/runner.hpp"

namespace nm {

inline constexpr const char* kStreamSchema = "nicmatrix/stream/v1";

/// One JSON object per line on `out`, stamped with "time" and flushed.
class JsonLines {
public:
    explicit JsonLines(std::ostream& out) : out_(out) {}
    void write(Json event);

private:
    std::ostream& out_;
};

/// `run --json-stream`: {"event":"run_start","schema","spec"} before the test, then when it ends each
/// {"event":"interval","index","interval"} and {"event":"run","run"}, then {"event":"run_end","status","error"}.
void stream_run_start(JsonLines& out, const TestSpec& spec);
/// {"event":"progress", LiveInterval's fields}: while the test runs, each interval of this end's counts.
void stream_run_progress(JsonLines& out, const LiveInterval& interval);
void stream_run_done(JsonLines& out, const RunResult& run);

/// Writes the events of one sweep to `out`, each line flushed when written. The caller writes "start"
/// before run_sweep and "end" after it; the runner's progress calls write the rest.
class SweepStreamWriter final : public SweepObserver {
public:
    explicit SweepStreamWriter(std::ostream& out) : out_(out) {}

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

private:
    void write(Json event) { out_.write(std::move(event)); }

    JsonLines out_;
    std::map<std::string, size_t> runs_seen_;   ///< cell key -> runs already streamed
};

}  // namespace nm
