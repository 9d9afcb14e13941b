#include "matrix/sweep_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
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

Json where(const CellProgress& p) { return Json{{"number", p.number}, {"total", p.total}, {"key", p.cell ? p.cell->key : ""}, {"round", p.round}}; }

}  // namespace

JsonLines::JsonLines(int fd, size_t queue_lines) : fd_(fd) {
    stats_.queue_lines = std::max<size_t>(queue_lines, 1);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        guarded_ = true;
        return;
    }
    if (S_ISSOCK(st.st_mode)) {
        socket_ = true;
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        // O_NONBLOCK on the descriptor itself would change it for every process sharing it (the shell's
        // terminal, the reader's pipe): a description of our own carries the flag instead.
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        own_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
        if (own_) {
            fd_ = own_.get();
        } else if (errno == ENXIO) {
            stats_.output_closed = true;  // a pipe with no reader left
        } else {
            guarded_ = true;
        }
    }
    // A regular file (or anything else) is written plainly: a write there does not wait for a reader.
}

void JsonLines::close_locked() {
    stats_.output_closed = true;
    stats_.unwritten_lines += queue_.size();
    queue_.clear();
    offset_ = 0;
}

void JsonLines::flush_locked() {
    while (!queue_.empty() && !stats_.output_closed) {
        const std::string& line = queue_.front();
        size_t want = line.size() - offset_;
        if (guarded_) {
            pollfd p{fd_, POLLOUT, 0};
            if (::poll(&p, 1, 0) <= 0 || (p.revents & (POLLERR | POLLHUP)) != 0) {
                if (p.revents & (POLLERR | POLLHUP)) close_locked();
                return;
            }
            want = std::min<size_t>(want, PIPE_BUF);
        }
        const ssize_t n = socket_ ? ::send(fd_, line.data() + offset_, want, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(fd_, line.data() + offset_, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            close_locked();  // EPIPE (SIGPIPE is ignored), EBADF, EIO: the reader is gone
            return;
        }
        offset_ += static_cast<size_t>(n);
        if (offset_ == line.size()) {
            queue_.pop_front();
            offset_ = 0;
            ++stats_.written_lines;
        }
    }
}

void JsonLines::write(Json event) {
    event["time"] = utc_now();
    std::string line = event.dump(-1, ' ', false, Json::error_handler_t::replace);
    line += '\n';
    std::lock_guard lock(mutex_);
    flush_locked();  // room first: the reader may have caught up
    if (stats_.output_closed || queue_.size() >= stats_.queue_lines) {
        ++stats_.dropped_events;
        return;
    }
    queue_.push_back(std::move(line));
    flush_locked();
}

void JsonLines::drain(std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            flush_locked();
            if (queue_.empty() || stats_.output_closed) return;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0 || stop.stop_requested()) return;
        // Short waits: a stop is seen within one of them.
        pollfd p{fd_, POLLOUT, 0};
        (void)::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50)));
    }
}

JsonStreamStats JsonLines::stats() const {
    std::lock_guard lock(mutex_);
    JsonStreamStats s = stats_;
    s.unwritten_lines += queue_.size();
    return s;
}

std::string describe_stream_losses(const JsonStreamStats& s) {
    if (s.dropped_events == 0 && s.unwritten_lines == 0 && !s.output_closed) return "";
    std::string text =
        "--json-stream: " + std::to_string(s.dropped_events) + " events dropped, " + std::to_string(s.unwritten_lines) + " lines not written: ";
    text += s.output_closed ? "the reader closed the stream" : "the reader did not keep up (raise --json-stream-queue)";
    return text;
}

void stream_run_start(JsonLines& out, const TestSpec& spec) { out.write(Json{{"event", "run_start"}, {"schema", kStreamSchema}, {"spec", spec}}); }

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
