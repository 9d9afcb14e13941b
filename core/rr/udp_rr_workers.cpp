// UDP_RR's workers (the file comment of core/rr/rr_workers.cpp says what every request/response worker
// counts, and how UDP_RR times out a request without retransmitting it).
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/base/error.hpp"
#include "core/host/socket_options.hpp"
#include "core/rr/rr_common.hpp"
#include "core/rr/rr_ping_pong.hpp"
#include "core/rr/rr_workers.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {
namespace {

using Steady = std::chrono::steady_clock;

// UDP's single-flow wait (see core/rr/rr_workers.cpp's file comment): true when `streams` is one socket, now blocking with
// timeouts of the skeleton's poll time. Sockets of a larger set stay non-blocking.
bool wait_in_recv(const std::vector<DataStream>& streams) { return streams.size() == 1 && block_with_poll_time(streams.front().fd.get()); }

// How UDP_RR's initiator sends a request: in a free slot of its flow, numbered by the flow's next sequence
// number (in the request's first bytes), counted on its stream.
class UdpRequester {
public:
    UdpRequester(const WorkerJob& job, WindowMeter& meter)
        : plan_(job.plan),
          tl_(job.timeline),
          out_(job.out),
          progress_(job.progress),
          meter_(meter),
          nseq_(seq_bytes(plan_.request_size, plan_.response_size)),
          mask_(seq_mask(nseq_)),
          sendbuf_(rr_payload(plan_.request_size)) {}

    /// The bytes of a message that carry its sequence number.
    size_t seq_size() const { return nseq_; }

    /// Sends a request in a free slot of `f` at `t`. A datagram the kernel refuses (a full buffer) is left
    /// to time out.
    void send(Stream& s, UdpFlow& f, TimePoint t) {
        if (t >= tl_.window_end) f.closing = true;  // on_turn may not have seen the end yet
        if (f.closing) return;
        auto slot = std::find_if(f.slots.begin(), f.slots.end(), [](const UdpSlot& u) { return !u.active; });
        if (slot == f.slots.end()) return;
        slot->seq = f.next_seq++ & mask_;
        slot->f = {t, in_window(tl_, t)};
        slot->active = true;
        ++f.active;
        put_seq(sendbuf_.data(), slot->seq, std::min<size_t>(nseq_, sendbuf_.size()));
        ssize_t w = ::send(s.fd(), sendbuf_.data(), plan_.request_size, MSG_DONTWAIT);
        // ECONNREFUSED reports an ICMP error left by an earlier datagram; this one was not sent yet.
        if (w < 0 && errno == ECONNREFUSED) w = ::send(s.fd(), sendbuf_.data(), plan_.request_size, MSG_DONTWAIT);
        if (w > 0) {
            out_.streams[s.index()].bytes += static_cast<uint64_t>(w);
            ++out_.streams[s.index()].packets;
            progress_.bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
            if (meter_.in()) ++out_.calls;
        }
    }

    /// Gives up on the requests of `f` whose answers are later than its timeout at `now` (lost when they
    /// count), each replaced by a new request.
    void expire(Stream& s, UdpFlow& f, TimePoint now) {
        const auto limit = f.timeout.value();
        for (auto& slot : f.slots) {
            if (!slot.active || now - slot.f.sent < limit) continue;
            if (slot.f.counted) ++out_.rr.lost;
            free_slot(f, slot);
            send(s, f, Steady::now());
        }
    }

    static void free_slot(UdpFlow& f, UdpSlot& slot) {
        slot.active = false;
        --f.active;
    }

private:
    const EnginePlan& plan_;
    const Timeline& tl_;
    WorkerOutput& out_;
    WorkerProgress& progress_;
    WindowMeter& meter_;
    const size_t nseq_;
    const uint64_t mask_;
    std::vector<char> sendbuf_;
};

}  // namespace

// UDP_RR: each flow is a connected socket of the client; the server's sockets are one SO_REUSEPORT group.

void udp_rr_send(WorkerJob& job) {
    if (udp_rr_ping_pong(job)) return udp_rr_ping_pong_send(job);
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const size_t burst = plan.rr_burst;
    UdpRequester requests(job, meter);
    const size_t nseq = requests.seq_size();
    std::vector<char> recvbuf(std::max<size_t>(plan.response_size, 1) + 1);  // one more: a longer datagram shows
    const bool blocking = wait_in_recv(job.streams);
    const int recv_flags = blocking ? 0 : MSG_DONTWAIT;
    out.streams = stream_results(job.streams, plan.send_direction);
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), false);
    std::vector<UdpFlow> flows(job.streams.size(), UdpFlow(burst));
    StreamSet* set = nullptr;
    bool window_over = false;
    TimePoint give_up = TimePoint::max();

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
            requests.expire(s, f, now);
            if (f.closing && (f.active == 0 || !f.started)) ss.finish(s);
        }
        return now < give_up;
    };

    const auto on_ready = [&](Stream& s, TimePoint) {
        UdpFlow& f = flows[s.index()];
        if (!f.started) {
            f.started = true;
            const TimePoint t = Steady::now();
            for (size_t k = 0; k < burst; ++k) requests.send(s, f, t);
            set->watch(s, EPOLLIN);  // from here on the flow only waits for answers
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
        if (static_cast<size_t>(r) < nseq) return Step::again();  // not one of ours
        const uint64_t seq = get_seq(recvbuf.data(), nseq);
        auto slot = std::find_if(f.slots.begin(), f.slots.end(), [&](const UdpSlot& u) { return u.active && u.seq == seq; });
        if (slot == f.slots.end()) {
            ++out.rr.late;
            return Step::again();
        }
        // The next request goes out first; this transaction's bookkeeping then overlaps its trip rather
        // than lengthening the next round trip.
        const InFlight answered = slot->f;
        UdpRequester::free_slot(f, *slot);
        requests.send(s, f, t);
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
    WindowMeter meter(until_peer_done(job.timeline), out.window);
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
            if (!(host_key(from) == client)) continue;  // only the test's client is answered
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

}  // namespace nm
