#include "matrix/sweep_stream.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace nm {
namespace {

std::string utc_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms));
    return out;
}

Json where(const CellProgress& p) {
    return Json{{"number", p.number}, {"total", p.total}, {"key", p.cell ? p.cell->key : ""}, {"round", p.round}};
}

}  // namespace

void JsonLines::write(Json event) {
    event["time"] = utc_now();
    // One line each, flushed: a reader of the pipe sees the event when it happens, not when a buffer fills.
    out_ << event.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n' << std::flush;
}

void stream_run_start(JsonLines& out, const TestSpec& spec) {
    out.write(Json{{"event", "run_start"}, {"schema", kStreamSchema}, {"spec", spec}});
}

void stream_run_progress(JsonLines& out, const LiveInterval& interval) {
    Json e = interval;
    e["event"] = "progress";
    out.write(std::move(e));
}

void stream_run_done(JsonLines& out, const RunResult& run) {
    // The engine hands over the intervals with the result, when the run ends.
    for (size_t k = 0; k < run.intervals.size(); ++k) out.write(Json{{"event", "interval"}, {"index", k}, {"interval", run.intervals[k]}});
    out.write(Json{{"event", "run"}, {"run", run}});
    out.write(Json{{"event", "run_end"}, {"status", run.status}, {"error", run.error}});
}

void SweepStreamWriter::start(const std::string& config, size_t cells, const std::string& output, const std::string& command) {
    write(Json{{"event", "start"}, {"schema", kStreamSchema}, {"config", config}, {"cells", cells}, {"output", output}, {"command", command}});
}

void SweepStreamWriter::end(const std::string& output, size_t cells, bool interrupted, bool budget_reached) {
    write(Json{{"event", "end"}, {"output", output}, {"cells", cells}, {"interrupted", interrupted}, {"budget_reached", budget_reached}});
}

void SweepStreamWriter::on_note(const std::string& text) { write(Json{{"event", "note"}, {"text", text}}); }

void SweepStreamWriter::on_interval(const std::string& key, size_t repetition, const LiveInterval& interval) {
    Json e = interval;
    e["event"] = "progress";
    e["key"] = key;
    e["repetition"] = repetition;
    write(std::move(e));
}

void SweepStreamWriter::on_cell_start(const CellProgress& p) {
    Json e = where(p);
    e["event"] = "cell_start";
    e["repetition"] = p.repetition;
    e["settings"] = Json{{"local", describe_settings(p.local)}, {"remote", describe_settings(p.remote)}};
    if (!p.dut.empty()) e["settings"]["dut"] = describe_settings(p.dut);
    write(std::move(e));
}

void SweepStreamWriter::on_cell_done(const CellProgress& p, const CellResult& r) {
    const std::string key = p.cell ? p.cell->key : r.spec.key;
    size_t& seen = runs_seen_[key];
    // The engine hands over a run's intervals when the run ends: they are streamed then, each naming the
    // repetition it belongs to, before the repetition itself.
    for (size_t i = seen; i < r.runs.size(); ++i) {
        const RunResult& run = r.runs[i];
        for (size_t k = 0; k < run.intervals.size(); ++k) {
            write(Json{{"event", "interval"}, {"key", key}, {"repetition", i + 1}, {"index", k}, {"interval", run.intervals[k]}});
        }
        write(Json{{"event", "repetition"}, {"key", key}, {"repetition", i + 1}, {"run", run}});
    }
    seen = r.runs.size();
    Json e = where(p);
    e["event"] = "cell";
    e["status"] = r.status;
    e["final"] = p.final;
    e["repetitions"] = r.runs.size();
    e["elapsed_s"] = p.elapsed_s;
    e["eta_s"] = p.eta_s;
    e["result"] = r;
    write(std::move(e));
}

}  // namespace nm
