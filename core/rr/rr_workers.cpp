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
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/base/error.hpp"
#include "core/rr/rr_common.hpp"
#include "core/host/socket_options.hpp"
#include "core/workers/stream_set.hpp"
#include "core/rr/tcp_rr_ping_pong.hpp"
#include "core/rr/udp_rr_ping_pong.hpp"
#include "core/workers/window_meter.hpp"
#include "core/engine/worker_kinds.hpp"

namespace nm {
namespace {

using Steady = std::chrono::steady_clock;

/// The smallest receive buffer: a burst of small answers in one call.
constexpr size_t kMinRecvBuffer = 64 * 1024;
/// Datagrams per recvmmsg/sendmmsg on the UDP responder.
constexpr size_t kUdpBatch = 32;

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

// UDP's single-flow wait (see the file comment): true when `streams` is one socket, now blocking with
// timeouts of the skeleton's poll time. Sockets of a larger set stay non-blocking.
bool wait_in_recv(const std::vector<DataStream>& streams) {
    return streams.size() == 1 && block_with_poll_time(streams.front().fd.get());
}

// ---------------------------------------------------------------------------------------------------
// TCP_RR: each flow is one of the test's data connections.

struct TcpFlow {
    explicit TcpFlow(size_t burst) : flight(burst) {}
    FlightRing flight;
    uint64_t to_send = 0;     ///< bytes queued for the socket (requests or answers)
    uint64_t partial = 0;     ///< bytes of the message being received
    bool started = false;
    bool closing = false;     ///< initiator: the window is over, no new requests
};

}  // namespace

void tcp_rr_send(WorkerJob& job) {
    if (tcp_rr_ping_pong(job)) return tcp_rr_ping_pong_send(job);
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const uint64_t req = plan.request_size, resp = plan.response_size;
    const size_t burst = plan.rr_burst;
    const std::vector<char> sendbuf = rr_payload(std::min<uint64_t>(req * burst, kRrMaxChunk));
    std::vector<char> recvbuf(std::clamp<uint64_t>(resp * burst, kMinRecvBuffer, kRrMaxChunk));
    const int recv_flags = MSG_DONTWAIT | (plan.socket.skip_rx_copy ? MSG_TRUNC : 0);
    out.streams = stream_results(job.streams, plan.send_direction);
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
    std::vector<TcpFlow> flows(job.streams.size(), TcpFlow(burst));
    StreamSet* set = nullptr;
    bool window_over = false;
    TimePoint give_up = TimePoint::max();

    const auto issue = [&](TcpFlow& f, TimePoint t, uint64_t k) {
        for (uint64_t i = 0; i < k; ++i) f.flight.push({t, in_window(tl, t)});
        f.to_send += k * req;
    };
    // Writes what is queued; false after an error (recorded).
    const auto flush = [&](Stream& s, TcpFlow& f) {
        while (f.to_send > 0) {
            int err = 0;
            const ssize_t w = write_some(s.fd(), sendbuf, f.to_send, err);
            if (w < 0) {
                if (out.error.empty()) out.error = stream_error(s.id(), "send", err);
                return false;
            }
            if (w == 0) break;
            f.to_send -= static_cast<uint64_t>(w);
            out.streams[s.index()].bytes += static_cast<uint64_t>(w);
            job.progress.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter.in()) ++out.calls;
        }
        return true;
    };
    const auto close_flow = [&](Stream& s) {
        ::shutdown(s.fd(), SHUT_WR);
        set->finish(s);
    };

    const auto on_turn = [&](StreamSet& ss, TimePoint now) {
        meter.tick(now);
        if (!window_over && now >= tl.window_end) {
            window_over = true;
            give_up = now + kRrDrainTime;
            for (Stream& s : ss) {
                if (s.finished()) continue;
                TcpFlow& f = flows[s.index()];
                f.closing = true;
                if (f.flight.empty()) close_flow(s);
            }
        }
        return now < give_up;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        TcpFlow& f = flows[s.index()];
        if (!f.started) {
            f.started = true;
            const TimePoint t = Steady::now();
            if (!f.closing && t < tl.window_end) issue(f, t, burst);
        }
        if (f.to_send > 0 && !flush(s, f)) return Step::done();
        const ssize_t r = ::recv(s.fd(), recvbuf.data(), recvbuf.size(), recv_flags);
        if (r < 0) {
            if (would_block(errno)) {
                set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
                return Step::wait();
            }
            if (out.error.empty()) out.error = stream_error(s.id(), "recv", errno);
            return Step::done();
        }
        if (r == 0) {
            if (!(f.closing && f.flight.empty()) && out.error.empty()) {
                out.error = "stream " + std::to_string(s.id()) + ": the server closed the connection with " +
                            std::to_string(f.flight.size()) + " request(s) unanswered";
            }
            return Step::done();
        }
        const TimePoint t = Steady::now();
        const auto got = static_cast<uint64_t>(r);
        out.streams[s.index()].bytes += got;
        job.progress.bytes.fetch_add(got, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        f.partial += got;
        uint64_t answered = f.partial / resp;
        f.partial %= resp;
        if (answered > f.flight.size()) {
            if (out.error.empty()) out.error = "stream " + std::to_string(s.id()) + ": more response bytes than requests";
            return Step::done();
        }
        for (uint64_t k = 0; k < answered; ++k) complete(out, meter, f.flight.pop(), t);
        if (t >= tl.window_end) f.closing = true;   // on_turn may not have seen the end yet
        if (!f.closing) {
            issue(f, t, answered);
        } else if (f.flight.empty()) {
            ::shutdown(s.fd(), SHUT_WR);
            return Step::done();
        }
        if (f.to_send > 0 && !flush(s, f)) return Step::done();
        set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        // A full buffer may have left more behind; otherwise the next answer is not here yet.
        return static_cast<size_t>(r) == recvbuf.size() ? Step::again() : Step::wait();
    };

    StreamSet ss(std::move(job.streams), {.events = EPOLLOUT, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set = &ss;
    ss.run(job.stop);
    meter.close();
}

void tcp_rr_receive(WorkerJob& job) {
    if (tcp_rr_ping_pong(job)) return tcp_rr_ping_pong_receive(job);
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    const Timeline tl = until_peer_done(job.timeline);
    WindowMeter meter(tl, out.window);
    const uint64_t req = plan.request_size, resp = plan.response_size;
    const size_t burst = plan.rr_burst;
    const std::vector<char> sendbuf = rr_payload(std::min<uint64_t>(resp * burst, kRrMaxChunk));
    std::vector<char> recvbuf(std::clamp<uint64_t>(req * burst, kMinRecvBuffer, kRrMaxChunk));
    const int recv_flags = MSG_DONTWAIT | (plan.socket.skip_rx_copy ? MSG_TRUNC : 0);
    out.streams = stream_results(job.streams, opposite(plan.send_direction));
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
    std::vector<TcpFlow> flows(job.streams.size(), TcpFlow(1));
    StreamSet* set = nullptr;

    const auto flush = [&](Stream& s, TcpFlow& f) {
        while (f.to_send > 0) {
            int err = 0;
            const ssize_t w = write_some(s.fd(), sendbuf, f.to_send, err);
            if (w < 0) {
                if (out.error.empty()) out.error = stream_error(s.id(), "send", err);
                return false;
            }
            if (w == 0) break;
            f.to_send -= static_cast<uint64_t>(w);
            job.progress.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter.in()) ++out.calls;
        }
        return true;
    };

    const auto on_turn = [&](StreamSet&, TimePoint now) {
        meter.tick(now);
        return true;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        TcpFlow& f = flows[s.index()];
        if (f.to_send > 0 && !flush(s, f)) return Step::done();
        const ssize_t r = ::recv(s.fd(), recvbuf.data(), recvbuf.size(), recv_flags);
        if (r < 0) {
            if (would_block(errno)) {
                set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
                return Step::wait();
            }
            if (out.error.empty()) out.error = stream_error(s.id(), "recv", errno);
            return Step::done();
        }
        if (r == 0) {   // the client has its answers and closed its side
            ::shutdown(s.fd(), SHUT_WR);
            return Step::done();
        }
        const auto got = static_cast<uint64_t>(r);
        out.streams[s.index()].bytes += got;
        job.progress.bytes.fetch_add(got, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        f.partial += got;
        const uint64_t requests = f.partial / req;
        f.partial %= req;
        f.to_send += requests * resp;
        if (meter.in()) out.rr.transactions += requests;
        if (f.to_send > 0 && !flush(s, f)) return Step::done();
        set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return static_cast<size_t>(r) == recvbuf.size() ? Step::again() : Step::wait();
    };

    StreamSet ss(std::move(job.streams), {.events = EPOLLIN, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set = &ss;
    ss.run(job.stop);
    meter.close();
}

// ---------------------------------------------------------------------------------------------------
// UDP_RR: each flow is a connected socket of the client; the server's sockets are one SO_REUSEPORT group.

namespace {

struct UdpSlot {
    uint64_t seq = 0;
    InFlight f;
    bool active = false;
};

struct UdpFlow {
    explicit UdpFlow(size_t burst) : slots(burst) {}
    std::vector<UdpSlot> slots;
    size_t active = 0;
    uint64_t next_seq = 0;
    UdpLossTimeout timeout;
    bool started = false;
    bool closing = false;
};

}  // namespace

void udp_rr_send(WorkerJob& job) {
    if (udp_rr_ping_pong(job)) return udp_rr_ping_pong_send(job);
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const size_t burst = plan.rr_burst;
    const size_t nseq = seq_bytes(plan.request_size, plan.response_size);
    const uint64_t mask = seq_mask(nseq);
    std::vector<char> sendbuf = rr_payload(plan.request_size);
    std::vector<char> recvbuf(std::max<size_t>(plan.response_size, 1) + 1);   // one more: a longer datagram shows
    const bool blocking = wait_in_recv(job.streams);
    const int recv_flags = blocking ? 0 : MSG_DONTWAIT;
    out.streams = stream_results(job.streams, plan.send_direction);
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), false);
    std::vector<UdpFlow> flows(job.streams.size(), UdpFlow(burst));
    StreamSet* set = nullptr;
    bool window_over = false;
    TimePoint give_up = TimePoint::max();

    // Sends a request in a free slot. A datagram the kernel refuses (a full buffer) is left to time out.
    const auto send_request = [&](Stream& s, UdpFlow& f, TimePoint t) {
        if (t >= tl.window_end) f.closing = true;   // on_turn may not have seen the end yet
        if (f.closing) return;
        auto slot = std::find_if(f.slots.begin(), f.slots.end(), [](const UdpSlot& u) { return !u.active; });
        if (slot == f.slots.end()) return;
        slot->seq = f.next_seq++ & mask;
        slot->f = {t, in_window(tl, t)};
        slot->active = true;
        ++f.active;
        put_seq(sendbuf.data(), slot->seq, std::min<size_t>(nseq, sendbuf.size()));
        ssize_t w = ::send(s.fd(), sendbuf.data(), plan.request_size, MSG_DONTWAIT);
        // ECONNREFUSED reports an ICMP error left by an earlier datagram; this one was not sent yet.
        if (w < 0 && errno == ECONNREFUSED) w = ::send(s.fd(), sendbuf.data(), plan.request_size, MSG_DONTWAIT);
        if (w > 0) {
            out.streams[s.index()].bytes += static_cast<uint64_t>(w);
            ++out.streams[s.index()].packets;
            job.progress.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter.in()) ++out.calls;
        }
    };
    const auto free_slot = [](UdpFlow& f, UdpSlot& slot) {
        slot.active = false;
        --f.active;
    };

    const auto on_turn = [&](StreamSet& ss, TimePoint now) {
        meter.tick(now);
        if (!window_over && now >= tl.window_end) {
            window_over = true;
            give_up = now + kUdpMaxTimeout + kRrDrainTime;
            for (auto& f : flows) f.closing = true;
        }
        for (Stream& s : ss) {
            if (s.finished()) continue;
            UdpFlow& f = flows[s.index()];
            const auto limit = f.timeout.value();
            for (auto& slot : f.slots) {
                if (!slot.active || now - slot.f.sent < limit) continue;
                if (slot.f.counted) ++out.rr.lost;
                free_slot(f, slot);
                send_request(s, f, Steady::now());
            }
            if (f.closing && (f.active == 0 || !f.started)) ss.finish(s);
        }
        return now < give_up;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        UdpFlow& f = flows[s.index()];
        if (!f.started) {
            f.started = true;
            const TimePoint t = Steady::now();
            for (size_t k = 0; k < burst; ++k) send_request(s, f, t);
            set->watch(s, EPOLLIN);   // from here on the flow only waits for answers
            return Step::wait();
        }
        const ssize_t r = ::recv(s.fd(), recvbuf.data(), recvbuf.size(), recv_flags);
        if (r < 0) {
            if (would_block(errno)) return Step::wait();
            // An ICMP error for an earlier request (it is lost); a blocking flow looks at its timeouts first.
            if (errno == ECONNREFUSED) return blocking ? Step::wait() : Step::again();
            if (out.error.empty()) out.error = stream_error(s.id(), "recv", errno);
            return Step::done();
        }
        const TimePoint t = Steady::now();
        job.progress.bytes.fetch_add(static_cast<uint64_t>(r), std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        if (static_cast<size_t>(r) < nseq) return Step::again();   // not one of ours
        const uint64_t seq = get_seq(recvbuf.data(), nseq);
        auto slot = std::find_if(f.slots.begin(), f.slots.end(), [&](const UdpSlot& u) { return u.active && u.seq == seq; });
        if (slot == f.slots.end()) {
            ++out.rr.late;
            return Step::again();
        }
        // The next request goes out first; this transaction's bookkeeping then overlaps its trip rather
        // than lengthening the next round trip.
        const InFlight answered = slot->f;
        free_slot(f, *slot);
        send_request(s, f, t);
        out.streams[s.index()].bytes += static_cast<uint64_t>(r);
        ++out.streams[s.index()].packets;
        f.timeout.sample(ns_between(answered.sent, t));
        complete(out, meter, answered, t);
        if (f.closing && f.active == 0) return Step::done();
        // With one request in flight its answer cannot be queued yet; with more, read on (a blocking flow
        // waits for the next right here).
        return blocking || burst > 1 ? Step::again() : Step::wait();
    };

    StreamSet ss(std::move(job.streams), {.events = EPOLLOUT, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set = &ss;
    ss.run(job.stop);
    meter.close();
}

// Answers every datagram from the client's address with response_size bytes that begin with the request's
// sequence bytes. recvmmsg/sendmmsg batches; a datagram the socket cannot take is the client's loss.
void udp_rr_receive(WorkerJob& job) {
    if (udp_rr_ping_pong(job)) return udp_rr_ping_pong_receive(job);
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    const Timeline tl = until_peer_done(job.timeline);
    WindowMeter meter(tl, out.window);
    const int fd = job.streams.at(0).fd.get();
    out.knobs = read_socket_knobs(fd, false);
    // One socket per responder thread: it waits in recvmmsg for the first datagram, then takes what else
    // is queued (MSG_WAITFORONE).
    const bool blocking = wait_in_recv(job.streams);
    const int recv_flags = blocking ? MSG_WAITFORONE : MSG_DONTWAIT;
    const size_t nseq = seq_bytes(plan.request_size, plan.response_size);
    const size_t in_size = std::max<size_t>(plan.request_size, 1);
    const size_t out_size = plan.response_size;
    const HostKey client = host_key(plan.peer.get());
    std::vector<char> inbuf(in_size * kUdpBatch);
    std::vector<char> outbuf;
    for (size_t k = 0; k < kUdpBatch; ++k) {
        const auto p = rr_payload(out_size);
        outbuf.insert(outbuf.end(), p.begin(), p.begin() + static_cast<ptrdiff_t>(out_size));
    }
    std::vector<sockaddr_storage> names(kUdpBatch);
    std::vector<iovec> in_iov(kUdpBatch), out_iov(kUdpBatch);
    std::vector<mmsghdr> in_msgs(kUdpBatch), out_msgs(kUdpBatch);
    for (size_t k = 0; k < kUdpBatch; ++k) {
        in_iov[k] = {inbuf.data() + k * in_size, in_size};
        in_msgs[k] = {};
        in_msgs[k].msg_hdr.msg_iov = &in_iov[k];
        in_msgs[k].msg_hdr.msg_iovlen = 1;
        in_msgs[k].msg_hdr.msg_name = &names[k];
    }

    const auto on_turn = [&](StreamSet&, TimePoint now) {
        meter.tick(now);
        return true;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        for (auto& m : in_msgs) m.msg_hdr.msg_namelen = sizeof(sockaddr_storage);
        const int n = ::recvmmsg(s.fd(), in_msgs.data(), static_cast<unsigned>(kUdpBatch), recv_flags, nullptr);
        if (n <= 0) {
            if (n < 0 && !would_block(errno) && errno != ECONNREFUSED) {
                if (out.error.empty()) out.error = std::string("recvmmsg: ") + std::strerror(errno);
                return Step::done();
            }
            return Step::wait();
        }
        size_t answers = 0;
        uint64_t got = 0;
        for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
            const auto* from = reinterpret_cast<const sockaddr*>(&names[k]);
            got += in_msgs[k].msg_len;
            if (!(host_key(from) == client)) continue;   // only the test's client is answered
            char* o = outbuf.data() + answers * out_size;
            std::memcpy(o, inbuf.data() + k * in_size, std::min<size_t>(nseq, in_msgs[k].msg_len));
            out_iov[answers] = {o, out_size};
            out_msgs[answers] = {};
            out_msgs[answers].msg_hdr.msg_iov = &out_iov[answers];
            out_msgs[answers].msg_hdr.msg_iovlen = 1;
            out_msgs[answers].msg_hdr.msg_name = &names[k];
            out_msgs[answers].msg_hdr.msg_namelen = in_msgs[k].msg_hdr.msg_namelen;
            ++answers;
        }
        job.progress.bytes.fetch_add(got, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        if (answers == 1) {
            // One answer (the single-flow case): sendmsg costs less than a batch of one.
            if (::sendmsg(s.fd(), &out_msgs[0].msg_hdr, MSG_DONTWAIT) >= 0) {
                if (meter.in()) {
                    ++out.rr.transactions;
                    ++out.calls;
                }
                job.progress.bytes.fetch_add(out_size, std::memory_order_relaxed);
            }
        } else if (answers > 0) {
            const int sent = ::sendmmsg(s.fd(), out_msgs.data(), static_cast<unsigned>(answers), MSG_DONTWAIT);
            if (sent > 0) {
                if (meter.in()) {
                    out.rr.transactions += static_cast<uint64_t>(sent);
                    ++out.calls;
                }
                job.progress.bytes.fetch_add(static_cast<uint64_t>(sent) * out_size, std::memory_order_relaxed);
            }
        }
        return blocking || static_cast<size_t>(n) == kUdpBatch ? Step::again() : Step::wait();
    };

    StreamSet set(std::move(job.streams), {.events = EPOLLIN, .on_stop = OnStop::Drain, .on_turn = on_turn, .on_ready = on_ready});
    set.run(job.stop);
    meter.close();
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
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const uint64_t req = plan.request_size, resp = plan.response_size;
    const std::vector<char> sendbuf = rr_payload(std::min<uint64_t>(req, kRrMaxChunk));
    std::vector<char> recvbuf(std::clamp<uint64_t>(resp, kMinRecvBuffer, kRrMaxChunk));
    const int recv_flags = MSG_DONTWAIT | (plan.socket.skip_rx_copy ? MSG_TRUNC : 0);
    const SocketAddress to = plan.connect_to;
    std::optional<SocketAddress> from;
    if (!plan.bind.empty()) from = resolve_address(plan.bind, 0);
    out.streams = stream_results(job.streams, plan.send_direction);
    std::vector<CrrFlow> flows(job.streams.size());
    StreamSet* set = nullptr;
    bool window_over = false;
    TimePoint give_up = TimePoint::max();

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
        set->reconnect(s, std::move(fd), EPOLLOUT);
    };
    const auto flush = [&](Stream& s, CrrFlow& f) {
        while (f.to_send > 0) {
            int err = 0;
            const ssize_t w = write_some(s.fd(), sendbuf, f.to_send, err);
            if (w < 0) {
                if (out.error.empty()) out.error = stream_error(s.id(), "send", err);
                return false;
            }
            if (w == 0) break;
            f.to_send -= static_cast<uint64_t>(w);
            out.streams[s.index()].bytes += static_cast<uint64_t>(w);
            job.progress.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter.in()) ++out.calls;
        }
        return true;
    };

    const auto on_turn = [&](StreamSet& ss, TimePoint now) {
        meter.tick(now);
        if (!window_over && now >= tl.window_end) {
            window_over = true;
            give_up = now + kRrDrainTime;
            for (Stream& s : ss) {
                flows[s.index()].closing = true;
                if (!s.finished() && flows[s.index()].state == CrrState::Idle) ss.finish(s);
            }
        }
        return now < give_up;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        CrrFlow& f = flows[s.index()];
        switch (f.state) {
            case CrrState::Idle:
                if (f.closing || Steady::now() >= tl.window_end) return Step::done();
                connect_next(s, f);
                return Step::wait();
            case CrrState::Connecting: {
                int err = 0;
                socklen_t len = sizeof err;
                ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
                if (err != 0) {
                    if (out.error.empty()) out.error = stream_error(s.id(), "connect (CRR)", err);
                    return Step::done();
                }
                if (!out.knobs) out.knobs = read_socket_knobs(s.fd(), true);
                f.state = CrrState::Waiting;
                if (!flush(s, f)) return Step::done();
                set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
                return Step::wait();
            }
            case CrrState::Waiting: break;
        }
        if (f.to_send > 0 && !flush(s, f)) return Step::done();
        const ssize_t r = ::recv(s.fd(), recvbuf.data(), recvbuf.size(), recv_flags);
        if (r < 0) {
            if (would_block(errno)) {
                set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
                return Step::wait();
            }
            if (out.error.empty()) out.error = stream_error(s.id(), "recv (CRR)", errno);
            return Step::done();
        }
        if (r == 0) {
            if (out.error.empty()) out.error = "stream " + std::to_string(s.id()) + ": the server closed the connection before its answer";
            return Step::done();
        }
        const auto got = static_cast<uint64_t>(r);
        out.streams[s.index()].bytes += got;
        job.progress.bytes.fetch_add(got, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        f.got += got;
        if (f.got < resp) return Step::wait();
        const TimePoint t = Steady::now();
        complete(out, meter, f.f, t);
        f.state = CrrState::Idle;
        if (f.closing || t >= tl.window_end) return Step::done();
        connect_next(s, f);
        return Step::wait();
    };

    // Placeholders: unconnected sockets, which epoll reports at once (EPOLLHUP), so each flow starts.
    StreamSet ss(std::move(job.streams), {.events = EPOLLOUT, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set = &ss;
    ss.run(job.stop);
    meter.close();
}

void tcp_crr_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    const Timeline tl = until_peer_done(job.timeline);
    WindowMeter meter(tl, out.window);
    const uint64_t req = plan.request_size, resp = plan.response_size;
    const std::vector<char> sendbuf = rr_payload(std::min<uint64_t>(resp, kRrMaxChunk));
    std::vector<char> recvbuf(std::clamp<uint64_t>(req, kMinRecvBuffer, kRrMaxChunk));
    const int recv_flags = MSG_DONTWAIT | (plan.socket.skip_rx_copy ? MSG_TRUNC : 0);
    const HostKey client = host_key(plan.peer.get());
    const size_t listeners = job.streams.size();
    std::vector<TcpFlow> conns(listeners, TcpFlow(1));
    StreamSet* set = nullptr;

    // A connection that breaks is the client's to report; here it is just closed.
    const auto flush = [&](Stream& s, TcpFlow& f) {
        while (f.to_send > 0) {
            int err = 0;
            const ssize_t w = write_some(s.fd(), sendbuf, f.to_send, err);
            if (w < 0) return false;
            if (w == 0) break;
            f.to_send -= static_cast<uint64_t>(w);
            job.progress.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter.in()) ++out.calls;
        }
        return true;
    };

    const auto on_turn = [&](StreamSet&, TimePoint now) {
        meter.tick(now);
        return true;
    };

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
            if (!(host_key(reinterpret_cast<const sockaddr*>(&from)) == client)) return Step::again();   // not the test's client
            apply_tcp_options(fd.get(), plan.socket, {.client = false, .sends = true});
            Stream& c = set->add(DataStream{std::move(fd), s.id()}, EPOLLIN);
            if (conns.size() <= c.index()) conns.resize(c.index() + 1, TcpFlow(1));
            conns[c.index()] = TcpFlow(1);
            return Step::again();
        }
        TcpFlow& f = conns[s.index()];
        const auto close = [&] {
            set->release(s);
            return Step::done();
        };
        if (f.to_send > 0 && !flush(s, f)) return close();
        const ssize_t r = ::recv(s.fd(), recvbuf.data(), recvbuf.size(), recv_flags);
        if (r < 0 && would_block(errno)) {
            set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
            return Step::wait();
        }
        if (r <= 0) return close();   // the client closed (a reset, by SO_LINGER 0) once it had its answer
        f.partial += static_cast<uint64_t>(r);
        job.progress.bytes.fetch_add(static_cast<uint64_t>(r), std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        const uint64_t requests = f.partial / req;
        f.partial %= req;
        if (requests > 0) {
            f.to_send += requests * resp;
            if (meter.in()) out.rr.transactions += requests;
            if (!out.knobs) out.knobs = read_socket_knobs(s.fd(), true);
        }
        if (f.to_send > 0 && !flush(s, f)) return close();
        set->watch(s, f.to_send > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return Step::wait();
    };

    StreamSet ss(std::move(job.streams), {.events = EPOLLIN, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set = &ss;
    ss.run(job.stop);
    meter.close();
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
