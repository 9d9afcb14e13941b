// UDP_RR's ping-pong: one flow with one transaction in flight, the usual UDP request/response test
// (netperf's UDP_RR, sockperf's ping-pong). As TCP_RR's (core/rr/tcp_rr_ping_pong.cpp), both ends run a loop
// of their own on a blocking socket with SO_RCVTIMEO of the skeleton's poll time: the socket is in no
// epoll set, so a datagram's arrival wakes the one recv() waiting for it and nothing else, and a
// transaction is one send and one receive on each end.
//
// What counts is what udp_rr_send/udp_rr_receive count (core/rr/rr_workers.cpp): a transaction whose request
// went out inside the initiator's window; an answer that does not come within the loss timeout
// (UdpLossTimeout) makes the request lost, and the initiator goes on with a new one; an answer with
// another sequence number (a lost request's, come late) is counted late. At the window's end the
// initiator waits for its last answer (or its timeout) and stops; the responder answers the client's
// address only, until it is stopped, then answers what is still queued.
#include "core/rr/rr_ping_pong.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/host/socket_options.hpp"
#include "core/rr/rr_common.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {

using Steady = std::chrono::steady_clock;

bool udp_rr_ping_pong(const WorkerJob& job) {
    return job.plan.rr_burst == 1 && job.plan.stream_count == 1 && job.streams.size() == 1 && block_with_poll_time(job.streams.front().fd.get());
}

void udp_rr_ping_pong_send(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    const Timeline tl = job.timeline;  // a copy on this stack, as the TCP loop's
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const int fd = job.streams.front().fd.get();
    out.streams = stream_results(job.streams, plan.send_direction);
    out.knobs = read_socket_knobs(fd, false);
    const size_t nseq = seq_bytes(plan.request_size, plan.response_size);
    const uint64_t mask = seq_mask(nseq);
    std::vector<char> request = rr_payload(plan.request_size);
    std::vector<char> answer(std::max<size_t>(plan.response_size, 1) + 1);  // one more: a longer datagram shows
    UdpLossTimeout timeout;
    // Written out when the loop ends (see the TCP loop's PingPong).
    uint64_t moved = 0, stream_bytes = 0, packets = 0, calls = 0;
    const auto count = [&](ssize_t n) {
        moved += static_cast<uint64_t>(n);
        job.progress.bytes.store(moved, std::memory_order_relaxed);
        calls += meter.in();
    };
    // Past the window, the last answer is waited for no longer than udp_rr_send waits for its last ones.
    const TimePoint give_up = tl.window_end == TimePoint::max() ? TimePoint::max() : tl.window_end + kUdpMaxTimeout + kRrDrainTime;

    uint64_t next_seq = 0;
    TimePoint t = Steady::now();
    meter.tick(t);
    TimePoint tick_at = next_tick(tl, t);
    bool stopped = job.stop.stop_requested();
    std::optional<InFlight> answered;  // the transaction answered at `t`, booked once the next request is out
    TimePoint answered_at;
    const auto book = [&] {
        timeout.sample(ns_between(answered->sent, answered_at));
        complete(out, meter, *answered, answered_at);
        answered.reset();
    };
    while (t < tl.window_end && !stopped) {
        const uint64_t seq = next_seq++ & mask;
        put_seq(request.data(), seq, std::min(nseq, request.size()));
        const InFlight f{t, in_window(tl, t)};
        ssize_t w = sys_send(fd, request.data(), plan.request_size, MSG_DONTWAIT);
        // ECONNREFUSED reports an ICMP error left by an earlier datagram; this one was not sent yet.
        if (w < 0 && errno == ECONNREFUSED) w = sys_send(fd, request.data(), plan.request_size, MSG_DONTWAIT);
        if (w > 0) {  // a datagram the kernel refuses (a full buffer) is left to time out
            stream_bytes += static_cast<uint64_t>(w);
            ++packets;
            count(w);
        }
        if (answered) book();
        if (t >= tick_at) {
            meter.tick(t);
            tick_at = next_tick(tl, t);
            stopped = job.stop.stop_requested();
        }
        const auto limit = timeout.value();
        for (;;) {
            const ssize_t r = sys_recv(fd, answer.data(), answer.size(), 0);
            if (r < 0) {
                const int err = errno;
                if (!would_block(err) && err != ECONNREFUSED) {  // ECONNREFUSED: an ICMP error for an earlier request
                    if (out.error.empty()) out.error = stream_error(out.streams.front().id, "recv", err);
                    stopped = true;
                    break;
                }
                t = Steady::now();
                meter.tick(t);
                if (job.stop.stop_requested()) {
                    stopped = true;
                    break;
                }
                if (t - f.sent >= limit || t >= give_up) {
                    out.rr.lost += f.counted;
                    break;
                }
                continue;
            }
            count(r);
            if (static_cast<size_t>(r) < nseq) continue;  // not one of ours
            if (get_seq(answer.data(), nseq) != seq) {
                ++out.rr.late;
                continue;
            }
            t = Steady::now();
            stream_bytes += static_cast<uint64_t>(r);
            ++packets;
            answered = f;
            answered_at = t;
            break;
        }
    }
    if (answered) book();
    meter.tick(Steady::now());
    out.streams.front().bytes += stream_bytes;
    out.streams.front().packets += packets;
    out.calls += calls;
    meter.close();
}

void udp_rr_ping_pong_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    WindowMeter meter(until_peer_done(job.timeline), out.window);
    const int fd = job.streams.front().fd.get();
    out.knobs = read_socket_knobs(fd, false);
    const size_t nseq = seq_bytes(plan.request_size, plan.response_size);
    const HostKey client = host_key(plan.peer.get());
    std::vector<char> request(std::max<size_t>(plan.request_size, 1));
    std::vector<char> answer = rr_payload(plan.response_size);
    sockaddr_storage from{};
    auto* const from_sa = reinterpret_cast<sockaddr*>(&from);
    uint64_t moved = 0, transactions = 0, calls = 0;
    // Stopped (the client's requests are over): what is still queued is answered, for at most the
    // skeleton's drain time, without waiting for more.
    bool draining = false;
    TimePoint drain_end = TimePoint::max();
    const auto go_on = [&](TimePoint now) {
        meter.tick(now);
        if (!draining && job.stop.stop_requested()) {
            draining = true;
            drain_end = now + StreamSet::kDrainTime;
        }
        return now < drain_end;
    };

    // As the TCP responder: no clock per transaction; a tick every kTickEvery requests and on every wait
    // that ran out.
    meter.tick(Steady::now());
    for (uint32_t until_tick = kTickEvery;; --until_tick) {
        if (until_tick == 0) {
            until_tick = kTickEvery;
            if (!go_on(Steady::now())) break;
        }
        // recvfrom/sendto rather than recvmsg/sendmsg: no message header and iovec to copy in per call.
        socklen_t from_len = sizeof from;
        const ssize_t r = sys_recvfrom(fd, request.data(), request.size(), draining ? MSG_DONTWAIT : 0, from_sa, &from_len);
        if (r < 0) {
            const int err = errno;
            if (!would_block(err) && err != ECONNREFUSED) {
                if (out.error.empty()) out.error = std::string("recvfrom: ") + std::strerror(err);
                break;
            }
            if (draining && err != ECONNREFUSED) break;  // nothing left queued
            if (!go_on(Steady::now())) break;
            continue;
        }
        moved += static_cast<uint64_t>(r);
        calls += meter.in();
        if (!(host_key(from_sa) == client)) continue;  // only the test's client is answered
        std::memcpy(answer.data(), request.data(), std::min<size_t>(nseq, static_cast<size_t>(r)));
        // An answer the socket cannot take is the client's loss.
        if (sys_sendto(fd, answer.data(), plan.response_size, MSG_DONTWAIT, from_sa, from_len) >= 0) {
            if (meter.in()) {
                ++transactions;
                ++calls;
            }
            moved += plan.response_size;
        }
        job.progress.bytes.store(moved, std::memory_order_relaxed);
    }
    out.rr.transactions += transactions;
    out.calls += calls;
    meter.close();
}

}  // namespace nm
