// Request/response workers, as netperf's TCP_RR/UDP_RR/TCP_CRR and neper's tcp_rr/udp_rr/tcp_crr: each
// flow keeps plan.rr_burst requests of plan.request_size bytes in flight, each answered by
// plan.response_size bytes. The initiator (the client, "send") times every transaction from the moment its
// request goes out (CRR: from connect()) to the last byte of its response; the responder (the server,
// "receive") answers. All run on the stream-set skeleton.
//
// What counts: a transaction whose request went out inside the initiator's window. At the window's end a
// flow stops issuing requests and waits for the answers to those still in flight (TCP closes its side
// once they are in), so both ends count the same transactions (with --omit 0; a warm-up is not seen the
// same by the responder, whose clock started a control message earlier). Per-interval counts go by the
// request's time, so the intervals add up to the total.
//
// TCP_RR and UDP_RR with one flow and one transaction in flight (the usual RR test) run a ping-pong loop
// of their own on a blocking socket (core/rr/tcp_rr_ping_pong.cpp, core/rr/udp_rr_ping_pong.cpp). Otherwise a
// UDP_RR worker with a single socket (a flow with --rr-burst above 1; a responder thread's socket in a
// test of several flows) waits in recv() itself rather than in epoll_wait() and then recv(): its socket is
// made blocking with SO_RCVTIMEO/SO_SNDTIMEO of the skeleton's poll time, so it still looks at its clock
// and stop token that often, and a transaction costs one system call less on each end. With several flows
// on one thread (or TCP with --rr-burst above 1) each waits in the set's epoll as usual.
//
// UDP keeps no retransmissions: a request whose answer does not come within an RFC 6298 style timeout
// (smoothed latency + 4 deviations, at least 200 ms, at most 2 s, 1 s before the first answer) is counted
// lost and the flow goes on with a new request; an answer that comes after that is counted late and
// dropped. Requests and answers are matched by a sequence number in their first bytes (up to 8; with
// 1-byte messages it is the low byte, and at most 128 requests are in flight, so it stays unique).
#include "core/rr/rr_workers.hpp"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/base/error.hpp"
#include "core/host/socket_options.hpp"
#include "core/rr/rr_common.hpp"
#include "core/rr/rr_ping_pong.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {
namespace {

using Steady = std::chrono::steady_clock;

/// The smallest receive buffer: a burst of small answers in one call.
constexpr size_t kMinRecvBuffer = size_t{64} * 1024;

// Requests in flight on one flow, oldest first: a fixed ring of rr_burst entries.
class FlightRing {
public:
    explicit FlightRing(size_t capacity) : slots_(capacity) {}
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    void push(InFlight f) {
        slots_[(head_ + size_) % slots_.size()] = f;
        ++size_;
    }
    InFlight pop() {
        const InFlight f = slots_[head_];
        head_ = (head_ + 1) % slots_.size();
        --size_;
        return f;
    }

private:
    std::vector<InFlight> slots_;
    size_t head_ = 0;
    size_t size_ = 0;
};

// Writes up to `pending` bytes of `buf` (cycled): the bytes written, 0 when it would block (or a blocking
// socket's SO_SNDTIMEO passed), -1 on an error (in `err`).
ssize_t write_some(int fd, const std::vector<char>& buf, uint64_t pending, int& err) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(pending, buf.size()));
    const ssize_t w = ::send(fd, buf.data(), n, MSG_NOSIGNAL);
    if (w < 0) {
        err = errno;
        return would_block(err) ? 0 : -1;
    }
    return w;
}

// ---------------------------------------------------------------------------------------------------
// TCP_RR: each flow is one of the test's data connections.

struct TcpFlow {
    explicit TcpFlow(size_t burst) : flight(burst) {}
    FlightRing flight;
    uint64_t to_send = 0;  ///< bytes queued for the socket (requests or answers)
    uint64_t partial = 0;  ///< bytes of the message being received
    bool started = false;
    bool closing = false;  ///< initiator: the window is over, no new requests
};

// What every TCP request/response worker holds: its timeline and window meter, the payload it writes
// (cycled) and the buffer it reads into, and the set its streams run in. The initiators and the responders
// build on it.
class TcpRrEnd {
public:
    /// `tl`: the meter's timeline; `writes`, `reads`: the bytes one flow has outstanding at most each way
    /// (the buffers are sized by them, within bounds).
    TcpRrEnd(WorkerJob& job, const Timeline& tl, uint64_t writes, uint64_t reads)
        : out(job.out),
          timeline(tl),
          meter(timeline, job.out.window),
          job_(job),
          sendbuf_(rr_payload(std::min<uint64_t>(writes, kRrMaxChunk))),
          recvbuf_(std::clamp<uint64_t>(reads, kMinRecvBuffer, kRrMaxChunk)),
          recv_flags_(MSG_DONTWAIT | (job.plan.socket.skip_rx_copy ? MSG_TRUNC : 0)) {}

    /// Reads what has come on `s` into the buffer: recv()'s result (errno on -1).
    ssize_t receive(Stream& s) { return ::recv(s.fd(), recvbuf_.data(), recvbuf_.size(), recv_flags_); }
    /// True when a read of `r` bytes filled the buffer (more may be waiting).
    bool filled(ssize_t r) const { return static_cast<size_t>(r) == recvbuf_.size(); }

    /// Waits for more on `s`, and for room to write when `to_send` bytes are still queued.
    Step wait(Stream& s, uint64_t to_send) {
        set->watch(s, to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return Step::wait();
    }

    WorkerOutput& out;
    const Timeline timeline;
    WindowMeter meter;
    StreamSet* set = nullptr;  ///< the running set (for the callbacks)

protected:
    /// Writes up to `to_send` bytes on `s`, counting it down and passing each write's bytes to
    /// `written`; false on an error (its errno in `err`). A full buffer ends it early.
    template <class Written>
    bool write_queued(Stream& s, uint64_t& to_send, int& err, Written written) {
        while (to_send > 0) {
            const ssize_t w = write_some(s.fd(), sendbuf_, to_send, err);
            if (w < 0) return false;
            if (w == 0) break;
            written(static_cast<uint64_t>(w));
            to_send -= static_cast<uint64_t>(w);
        }
        return true;
    }

    /// `bytes` moved: the progress counter, and one more call when inside the window.
    void moved(uint64_t bytes) {
        job_.progress.bytes.fetch_add(bytes, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
    }

    /// Runs every stream, each first waiting for `events`, until all are done or `on_turn` says no.
    void run_set(uint32_t events, std::function<bool(StreamSet&, TimePoint)> on_turn, std::function<Step(Stream&, TimePoint)> on_ready) {
        StreamSet ss(std::move(job_.streams),
                     {.events = events, .on_stop = OnStop::End, .on_turn = std::move(on_turn), .on_ready = std::move(on_ready)});
        set = &ss;
        ss.run(job_.stop);
        meter.close();
    }

private:
    WorkerJob& job_;
    const std::vector<char> sendbuf_;
    std::vector<char> recvbuf_;
    const int recv_flags_;
};

// What the TCP initiators share (TCP_RR on the test's connections, TCP_CRR on a connection per
// transaction): writing what a flow has queued, reading its answers, and the window's end, after which no
// flow issues a request and the set gives up kRrDrainTime later.
class TcpInitiator : public TcpRrEnd {
public:
    /// read()'s results besides a count of bytes.
    static constexpr ssize_t kNothingYet = -1;  ///< the socket would block: wait for the answer
    static constexpr ssize_t kFailed = -2;      ///< an error, recorded in the output

    /// `requests`, `answers`: the bytes of the requests and of the answers one flow has outstanding at most.
    TcpInitiator(WorkerJob& job, uint64_t requests, uint64_t answers) : TcpRrEnd(job, job.timeline, requests, answers) {
        out.streams = stream_results(job.streams, job.plan.send_direction);
    }

    /// Writes what is queued on `s`, counting `to_send` down; false after an error (recorded).
    bool flush(Stream& s, uint64_t& to_send) {
        int err = 0;
        if (write_queued(s, to_send, err, [&](uint64_t w) { count(s, w); })) return true;
        if (out.error.empty()) out.error = stream_error(s.id(), "send", err);
        return false;
    }

    /// Reads what has come on `s` and counts it: the bytes read, 0 when the server closed the connection,
    /// kNothingYet or kFailed (recorded, as the failure of `call`). `at` (when given) is set to the time
    /// the bytes came, read before they are counted.
    ssize_t read(Stream& s, const char* call, TimePoint* at = nullptr) {
        const ssize_t r = receive(s);
        if (at != nullptr) *at = Steady::now();
        if (r < 0) {
            if (would_block(errno)) return kNothingYet;
            if (out.error.empty()) out.error = stream_error(s.id(), call, errno);
            return kFailed;
        }
        if (r > 0) count(s, static_cast<uint64_t>(r));
        return r;
    }

    /// Ticks the meter; true once, on the first turn at or past the window's end.
    bool window_ended(TimePoint now) {
        meter.tick(now);
        if (window_over_ || now < timeline.window_end) return false;
        window_over_ = true;
        give_up_ = now + kRrDrainTime;
        return true;
    }
    /// False once the flows still waiting for answers at the window's end have had kRrDrainTime.
    bool keep_going(TimePoint now) const { return now < give_up_; }

    /// Runs every stream (each first waiting to write) until all are done or keep_going() says no.
    void run(std::function<bool(StreamSet&, TimePoint)> on_turn, std::function<Step(Stream&, TimePoint)> on_ready) {
        run_set(EPOLLOUT, std::move(on_turn), std::move(on_ready));
    }

private:
    // Bytes moved on `s`: its total, the progress counter, and one more call when inside the window.
    void count(Stream& s, uint64_t bytes) {
        out.streams[s.index()].bytes += bytes;
        moved(bytes);
    }

    bool window_over_ = false;
    TimePoint give_up_ = TimePoint::max();
};

// What the TCP responders share (TCP_RR's on the test's connections, TCP_CRR's on a connection per
// transaction): the meter on the peer's timeline (until_peer_done), counting a flow's requests and writing
// their answers.
class TcpResponder : public TcpRrEnd {
public:
    /// `requests`, `answers`: the bytes of the requests and of the answers one flow has outstanding at most.
    TcpResponder(WorkerJob& job, uint64_t requests, uint64_t answers)
        : TcpRrEnd(job, until_peer_done(job.timeline), answers, requests), req_(job.plan.request_size), resp_(job.plan.response_size) {}

    /// Writes the answers queued on `f`; false when the connection broke (the stream's error when
    /// `report`: a CRR connection that breaks is the client's to report).
    bool flush(Stream& s, TcpFlow& f, bool report) {
        int err = 0;
        if (write_queued(s, f.to_send, err, [&](uint64_t w) { moved(w); })) return true;
        if (report && out.error.empty()) out.error = stream_error(s.id(), "send", err);
        return false;
    }

    /// `got` bytes of requests read on `f`: counted, and an answer queued for each request they complete
    /// (a transaction, inside the window). Returns the requests completed.
    uint64_t take_requests(TcpFlow& f, uint64_t got) {
        moved(got);
        f.partial += got;
        const uint64_t requests = f.partial / req_;
        f.partial %= req_;
        f.to_send += requests * resp_;
        if (meter.in()) out.rr.transactions += requests;
        return requests;
    }

    /// Runs every stream (each first waiting for a request) until all are done.
    void run(std::function<Step(Stream&, TimePoint)> on_ready) {
        run_set(
            EPOLLIN,
            [this](StreamSet&, TimePoint now) {
                meter.tick(now);
                return true;
            },
            std::move(on_ready));
    }

private:
    const uint64_t req_, resp_;
};

}  // namespace

void tcp_rr_send(WorkerJob& job) {
    if (tcp_rr_ping_pong(job)) return tcp_rr_ping_pong_send(job);
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    const uint64_t req = plan.request_size, resp = plan.response_size;
    const size_t burst = plan.rr_burst;
    TcpInitiator io(job, req * burst, resp * burst);
    WorkerOutput& out = io.out;
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
    std::vector<TcpFlow> flows(job.streams.size(), TcpFlow(burst));

    const auto issue = [&](TcpFlow& f, TimePoint t, uint64_t k) {
        for (uint64_t i = 0; i < k; ++i) f.flight.push({t, in_window(tl, t)});
        f.to_send += k * req;
    };
    const auto close_flow = [&](Stream& s) {
        ::shutdown(s.fd(), SHUT_WR);
        io.set->finish(s);
    };

    const auto on_turn = [&](StreamSet& ss, TimePoint now) {
        if (io.window_ended(now)) {
            for (Stream& s : ss) {
                if (s.finished()) continue;
                TcpFlow& f = flows[s.index()];
                f.closing = true;
                if (f.flight.empty()) close_flow(s);
            }
        }
        return io.keep_going(now);
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        TcpFlow& f = flows[s.index()];
        if (!f.started) {
            f.started = true;
            const TimePoint t = Steady::now();
            if (!f.closing && t < tl.window_end) issue(f, t, burst);
        }
        if (f.to_send > 0 && !io.flush(s, f.to_send)) return Step::done();
        TimePoint t;
        const ssize_t r = io.read(s, "recv", &t);
        if (r == TcpInitiator::kNothingYet) return io.wait(s, f.to_send);
        if (r == TcpInitiator::kFailed) return Step::done();
        if (r == 0) {
            if (!(f.closing && f.flight.empty()) && out.error.empty()) {
                out.error = "stream " + std::to_string(s.id()) + ": the server closed the connection with " + std::to_string(f.flight.size()) +
                            " request(s) unanswered";
            }
            return Step::done();
        }
        f.partial += static_cast<uint64_t>(r);
        uint64_t answered = f.partial / resp;
        f.partial %= resp;
        if (answered > f.flight.size()) {
            if (out.error.empty()) out.error = "stream " + std::to_string(s.id()) + ": more response bytes than requests";
            return Step::done();
        }
        for (uint64_t k = 0; k < answered; ++k) complete(out, io.meter, f.flight.pop(), t);
        if (t >= tl.window_end) f.closing = true;  // on_turn may not have seen the end yet
        if (!f.closing) {
            issue(f, t, answered);
        } else if (f.flight.empty()) {
            ::shutdown(s.fd(), SHUT_WR);
            return Step::done();
        }
        if (f.to_send > 0 && !io.flush(s, f.to_send)) return Step::done();
        // A full buffer may have left more behind; otherwise the next answer is not here yet.
        io.set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return io.filled(r) ? Step::again() : Step::wait();
    };

    io.run(on_turn, on_ready);
}

void tcp_rr_receive(WorkerJob& job) {
    if (tcp_rr_ping_pong(job)) return tcp_rr_ping_pong_receive(job);
    const EnginePlan& plan = job.plan;
    const uint64_t burst = plan.rr_burst;
    TcpResponder io(job, plan.request_size * burst, plan.response_size * burst);
    WorkerOutput& out = io.out;
    out.streams = stream_results(job.streams, opposite(plan.send_direction));
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
    std::vector<TcpFlow> flows(job.streams.size(), TcpFlow(1));

    const auto on_ready = [&](Stream& s, TimePoint) {
        TcpFlow& f = flows[s.index()];
        if (f.to_send > 0 && !io.flush(s, f, true)) return Step::done();
        const ssize_t r = io.receive(s);
        if (r < 0) {
            if (would_block(errno)) return io.wait(s, f.to_send);
            if (out.error.empty()) out.error = stream_error(s.id(), "recv", errno);
            return Step::done();
        }
        if (r == 0) {  // the client has its answers and closed its side
            ::shutdown(s.fd(), SHUT_WR);
            return Step::done();
        }
        out.streams[s.index()].bytes += static_cast<uint64_t>(r);
        io.take_requests(f, static_cast<uint64_t>(r));
        if (f.to_send > 0 && !io.flush(s, f, true)) return Step::done();
        io.set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return io.filled(r) ? Step::again() : Step::wait();
    };

    io.run(on_ready);
}

// ---------------------------------------------------------------------------------------------------
// TCP_CRR: a new connection per transaction. The initiator's streams start as unconnected placeholders
// (epoll reports them at once) and are swapped for a connection per transaction; the responder's streams
// are listeners, and each connection they accept joins the set until the client closes it.

namespace {

enum class CrrState { Idle, Connecting, Waiting };

struct CrrFlow {
    CrrState state = CrrState::Idle;
    InFlight f;
    uint64_t to_send = 0;
    uint64_t got = 0;
    bool closing = false;
};

}  // namespace

void tcp_crr_send(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    const uint64_t req = plan.request_size, resp = plan.response_size;
    TcpInitiator io(job, req, resp);
    WorkerOutput& out = io.out;
    const SocketAddress to = plan.connect_to;
    std::optional<SocketAddress> from;
    if (!plan.bind.empty()) from = resolve_address(plan.bind, 0);
    std::vector<CrrFlow> flows(job.streams.size());

    // A new connection for the flow's next transaction; its clock starts before socket(). Closed with
    // SO_LINGER 0 (a reset) once answered: neither end keeps a TIME_WAIT per transaction.
    const auto connect_next = [&](Stream& s, CrrFlow& f) {
        f.f = {Steady::now(), false};
        f.f.counted = in_window(tl, f.f.sent);
        UniqueFd fd(::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd) throw system_error("socket (CRR)", errno);
        apply_tcp_options(fd.get(), plan.socket, {.client = true, .sends = true});
        const linger lg{1, 0};
        ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        if (from) {
            // Bind the address only; the port comes with connect(), so the 4-tuple can share it.
            const int one = 1;
            ::setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
            if (::bind(fd.get(), from->get(), from->len) != 0) throw system_error("bind to " + plan.bind, errno);
        }
        if (::connect(fd.get(), to.get(), to.len) != 0 && errno != EINPROGRESS) {
            throw system_error("stream " + std::to_string(s.id()) + ": connect (CRR)", errno);
        }
        f.state = CrrState::Connecting;
        f.to_send = req;
        f.got = 0;
        io.set->reconnect(s, std::move(fd), EPOLLOUT);
    };
    // The flow's connection is up (or failed): send the request.
    const auto connected = [&](Stream& s, CrrFlow& f) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            if (out.error.empty()) out.error = stream_error(s.id(), "connect (CRR)", err);
            return Step::done();
        }
        if (!out.knobs) out.knobs = read_socket_knobs(s.fd(), true);
        f.state = CrrState::Waiting;
        if (!io.flush(s, f.to_send)) return Step::done();
        return io.wait(s, f.to_send);
    };

    const auto on_turn = [&](StreamSet& ss, TimePoint now) {
        if (io.window_ended(now)) {
            for (Stream& s : ss) {
                flows[s.index()].closing = true;
                if (!s.finished() && flows[s.index()].state == CrrState::Idle) ss.finish(s);
            }
        }
        return io.keep_going(now);
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        CrrFlow& f = flows[s.index()];
        switch (f.state) {
            case CrrState::Idle:
                if (f.closing || Steady::now() >= tl.window_end) return Step::done();
                connect_next(s, f);
                return Step::wait();
            case CrrState::Connecting: return connected(s, f);
            case CrrState::Waiting: break;
        }
        if (f.to_send > 0 && !io.flush(s, f.to_send)) return Step::done();
        const ssize_t r = io.read(s, "recv (CRR)");
        if (r == TcpInitiator::kNothingYet) return io.wait(s, f.to_send);
        if (r == TcpInitiator::kFailed) return Step::done();
        if (r == 0) {
            if (out.error.empty()) out.error = "stream " + std::to_string(s.id()) + ": the server closed the connection before its answer";
            return Step::done();
        }
        f.got += static_cast<uint64_t>(r);
        if (f.got < resp) return Step::wait();
        const TimePoint t = Steady::now();
        complete(out, io.meter, f.f, t);
        f.state = CrrState::Idle;
        if (f.closing || t >= tl.window_end) return Step::done();
        connect_next(s, f);
        return Step::wait();
    };

    // Placeholders: unconnected sockets, which epoll reports at once (EPOLLHUP), so each flow starts.
    io.run(on_turn, on_ready);
}

void tcp_crr_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    TcpResponder io(job, plan.request_size, plan.response_size);
    WorkerOutput& out = io.out;
    const HostKey client = host_key(plan.peer.get());
    const size_t listeners = job.streams.size();
    std::vector<TcpFlow> conns(listeners, TcpFlow(1));

    const auto on_ready = [&](Stream& s, TimePoint) {
        if (s.index() < listeners) {
            sockaddr_storage from{};
            socklen_t len = sizeof from;
            UniqueFd fd(::accept4(s.fd(), reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
            if (!fd) {
                if (would_block(errno) || errno == ECONNABORTED) return Step::wait();
                if (out.error.empty()) out.error = std::string("accept (CRR): ") + std::strerror(errno);
                return Step::done();
            }
            if (!(host_key(reinterpret_cast<const sockaddr*>(&from)) == client)) return Step::again();  // not the test's client
            apply_tcp_options(fd.get(), plan.socket, {.client = false, .sends = true});
            Stream& c = io.set->add(DataStream{std::move(fd), s.id()}, EPOLLIN);
            if (conns.size() <= c.index()) conns.resize(c.index() + 1, TcpFlow(1));
            conns[c.index()] = TcpFlow(1);
            return Step::again();
        }
        TcpFlow& f = conns[s.index()];
        const auto close = [&] {
            io.set->release(s);
            return Step::done();
        };
        if (f.to_send > 0 && !io.flush(s, f, false)) return close();
        const ssize_t r = io.receive(s);
        if (r < 0 && would_block(errno)) return io.wait(s, f.to_send);
        if (r <= 0) return close();  // the client closed (a reset, by SO_LINGER 0) once it had its answer
        if (io.take_requests(f, static_cast<uint64_t>(r)) > 0 && !out.knobs) out.knobs = read_socket_knobs(s.fd(), true);
        if (f.to_send > 0 && !io.flush(s, f, false)) return close();
        return io.wait(s, f.to_send);
    };

    io.run(on_ready);
}

uint64_t rr_memory(const EnginePlan& plan, bool sender, size_t streams) {
    // Both ends hold one send and one receive buffer per thread, sized as the workers size them (a
    // UDP responder its batch of datagrams), and per flow its state, its in-flight ring and its result.
    const uint64_t out_bytes = sender ? plan.request_size : plan.response_size;
    const uint64_t in_bytes = sender ? plan.response_size : plan.request_size;
    const uint64_t burst = std::max<uint32_t>(plan.rr_burst, 1);
    uint64_t buffers = std::min<uint64_t>(out_bytes * burst, kRrMaxChunk) + std::clamp<uint64_t>(in_bytes * burst, kMinRecvBuffer, kRrMaxChunk);
    if (plan.protocol == Protocol::Udp) buffers += kUdpBatch * std::max<uint64_t>(in_bytes, out_bytes);
    const uint64_t per_flow = sizeof(StreamResult) + sizeof(TcpFlow) + sizeof(UdpFlow) + sizeof(CrrFlow) + burst * sizeof(InFlight);
    return buffers + streams * per_flow;
}

}  // namespace nm
