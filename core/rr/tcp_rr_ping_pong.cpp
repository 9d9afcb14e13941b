// TCP_RR's ping-pong: one flow with one transaction in flight, the usual request/response test (netperf's
// TCP_RR, sockperf's ping-pong). Both ends run a loop of their own here instead of the stream-set
// skeleton: the socket is blocking, with SO_RCVTIMEO/SO_SNDTIMEO of the skeleton's poll time (so the loop
// still looks at its clock and stop token that often while nothing comes), and a transaction is one send()
// and one recv() on each end. The loop reads exactly the bytes of the message it waits for, so no
// division splits a read into messages, the clock is read once per transaction, and progress is a plain
// store. Measured on the veth lab with both ends on one CPU, this loop does about 10% more transactions
// per second than the epoll skeleton did for the same flow (bench/vs_peers, rr_tcp).
//
// What counts is what tcp_rr_send/tcp_rr_receive count (core/rr/rr_workers.cpp): a transaction whose request
// went out inside the initiator's window; at the window's end the initiator waits for its answer, then
// closes its side; the responder answers until the initiator's end of stream.
#include "core/rr/rr_ping_pong.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "core/host/socket_options.hpp"
#include "core/rr/rr_common.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {
namespace {

using Steady = std::chrono::steady_clock;

// The buffer a loop sends a message of `size` bytes from (cycled).
std::vector<char> payload(uint64_t size) { return rr_payload(static_cast<size_t>(std::min<uint64_t>(size, kRrMaxChunk))); }

// One end's loop state. What changes per transaction lives here, on the worker's stack, and reaches
// WorkerOutput when the loop ends (finish()): after a context switch every cache line the loop touches is
// likely cold, and on one CPU those misses are a measurable part of a 14 us round trip.
struct PingPong {
    WorkerJob& job;
    WindowMeter& meter;
    int fd;
    int recv_flags;
    bool stream_counts_sent;  ///< the stream's bytes count what this end sends too (the initiator's do)
    uint64_t bytes = 0;       ///< moved either way, published as the worker's progress
    uint64_t stream_bytes = 0;
    uint64_t calls = 0;  ///< send/recv calls inside the window

    void moved(ssize_t n, bool sent) {
        bytes += static_cast<uint64_t>(n);
        if (!sent || stream_counts_sent) stream_bytes += static_cast<uint64_t>(n);
        job.progress.bytes.store(bytes, std::memory_order_relaxed);
        calls += meter.in();
    }

    void finish() {
        job.out.streams.front().bytes += stream_bytes;
        job.out.calls += calls;
    }

    enum class Io { Done, Stop, Eof, Failed };

    // Sends `n` bytes of `buf` (cycled). A send that waited SO_SNDTIMEO asks `go_on(now)`.
    template <class GoOn>
    Io send_all(const std::vector<char>& buf, uint64_t n, GoOn&& go_on) {
        while (n > 0) {
            const ssize_t w = sys_send(fd, buf.data(), static_cast<size_t>(std::min<uint64_t>(n, buf.size())), MSG_NOSIGNAL);
            if (w < 0) {
                if (!would_block(errno)) return fail("send", errno);
                if (!go_on(Steady::now())) return Io::Stop;
                continue;
            }
            n -= static_cast<uint64_t>(w);
            moved(w, true);
        }
        return Io::Done;
    }

    // Receives exactly `n` bytes. Eof when the peer closed before the first of them.
    template <class GoOn>
    Io recv_all(std::vector<char>& buf, uint64_t n, GoOn&& go_on) {
        const uint64_t want = n;
        while (n > 0) {
            const ssize_t r = sys_recv(fd, buf.data(), static_cast<size_t>(std::min<uint64_t>(n, buf.size())), recv_flags);
            if (r < 0) {
                if (!would_block(errno)) return fail("recv", errno);
                if (!go_on(Steady::now())) return Io::Stop;
                continue;
            }
            if (r == 0) {
                if (n == want) return Io::Eof;
                if (job.out.error.empty()) {
                    job.out.error =
                        "stream " + std::to_string(job.out.streams.front().id) + ": the peer closed the connection in the middle of a message";
                }
                return Io::Failed;
            }
            n -= static_cast<uint64_t>(r);
            moved(r, false);
        }
        return Io::Done;
    }

    Io fail(const char* what, int err) {
        if (job.out.error.empty()) job.out.error = stream_error(job.out.streams.front().id, what, err);
        return Io::Failed;
    }
};

}  // namespace

bool tcp_rr_ping_pong(const WorkerJob& job) {
    return job.plan.rr_burst == 1 && job.streams.size() == 1 && block_with_poll_time(job.streams.front().fd.get());
}

void tcp_rr_ping_pong_send(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    const Timeline tl = job.timeline;  // a copy on this stack (see PingPong)
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const int fd = job.streams.front().fd.get();
    out.streams = stream_results(job.streams, plan.send_direction);
    out.knobs = read_socket_knobs(fd, true);
    const std::vector<char> request = payload(plan.request_size);
    std::vector<char> response(static_cast<size_t>(std::clamp<uint64_t>(plan.response_size, 1, kRrMaxChunk)));
    PingPong io{job, meter, fd, plan.socket.skip_rx_copy ? MSG_TRUNC : 0, true};
    TimePoint give_up = TimePoint::max();
    // While a call waits: false when the test ends now (a stop, or no answer within kRrDrainTime of the
    // window's end).
    const auto go_on = [&](TimePoint now) {
        meter.tick(now);
        if (job.stop.stop_requested()) return false;
        if (now >= tl.window_end && give_up == TimePoint::max()) give_up = now + kRrDrainTime;
        return now < give_up;
    };

    // A transaction's bookkeeping waits until the next request is out: it then runs while that request
    // crosses the network, not between a response and the next request, where it would add to every
    // round trip (the latency is from just before send() to just after the response's last recv()).
    uint64_t transactions = 0;
    TimePoint t = Steady::now();
    meter.tick(t);
    TimePoint tick_at = next_tick(tl, t);
    bool stopped = job.stop.stop_requested();
    std::optional<TimePoint> last_sent;  // the transaction that completed at `t`, not yet counted
    const auto account = [&](TimePoint sent, TimePoint done) {
        if (sent < tl.window_start || sent >= tl.window_end) return;
        ++transactions;
        out.rr.latency.record(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(done - sent).count()));
        meter.count(sent, 0, 1);
    };
    while (t < tl.window_end && !stopped) {
        const TimePoint sent = t;
        PingPong::Io r = io.send_all(request, plan.request_size, go_on);
        if (last_sent) account(*last_sent, sent);
        last_sent.reset();
        if (t >= tick_at) {
            meter.tick(t);
            tick_at = next_tick(tl, t);
            stopped = job.stop.stop_requested();
        }
        if (r == PingPong::Io::Done) r = io.recv_all(response, plan.response_size, go_on);
        if (r == PingPong::Io::Eof && out.error.empty()) {
            out.error = "stream " + std::to_string(out.streams.front().id) + ": the server closed the connection with 1 request(s) unanswered";
        }
        if (r != PingPong::Io::Done) break;
        t = Steady::now();
        last_sent = sent;
    }
    if (last_sent) account(*last_sent, t);
    meter.tick(t);
    ::shutdown(fd, SHUT_WR);
    out.rr.transactions += transactions;
    io.finish();
    meter.close();
}

void tcp_rr_ping_pong_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    WindowMeter meter(until_peer_done(job.timeline), out.window);
    const int fd = job.streams.front().fd.get();
    out.streams = stream_results(job.streams, opposite(plan.send_direction));
    out.knobs = read_socket_knobs(fd, true);
    std::vector<char> request(static_cast<size_t>(std::clamp<uint64_t>(plan.request_size, 1, kRrMaxChunk)));
    const std::vector<char> response = payload(plan.response_size);
    PingPong io{job, meter, fd, plan.socket.skip_rx_copy ? MSG_TRUNC : 0, false};
    const auto go_on = [&](TimePoint now) {
        meter.tick(now);
        return !job.stop.stop_requested();
    };

    // The responder reads no clock for a transaction: it ticks its meter (and looks at its stop token)
    // every kTickEvery requests, and whenever a call waited its poll time.
    uint64_t transactions = 0;
    meter.tick(Steady::now());
    for (uint32_t until_tick = kTickEvery;; --until_tick) {
        if (until_tick == 0) {
            until_tick = kTickEvery;
            if (!go_on(Steady::now())) break;
        }
        PingPong::Io r = io.recv_all(request, plan.request_size, go_on);
        if (r == PingPong::Io::Eof) {  // the client has its answers and closed its side
            ::shutdown(fd, SHUT_WR);
            break;
        }
        if (r != PingPong::Io::Done) break;
        const bool counted = meter.in();
        if (io.send_all(response, plan.response_size, go_on) != PingPong::Io::Done) break;
        transactions += counted;
    }
    out.rr.transactions += transactions;
    io.finish();
    meter.close();
}

}  // namespace nm
