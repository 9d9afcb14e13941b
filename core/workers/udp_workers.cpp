// UDP stream workers. The sender: connected sockets, batches of sendmmsg (or UDP_SEGMENT super-datagrams),
// one UdpHeader per datagram, an optional token bucket per stream. The receiver: one socket of a
// SO_REUSEPORT group, recvmmsg batches, per-stream loss accounting by sequence number. Both run on the
// stream-set skeleton.
#include "core/workers/stream_workers.hpp"

#include <linux/udp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/base/clock.hpp"
#include "core/host/socket_options.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/token_bucket.hpp"
#include "core/workers/udp_tracker.hpp"
#include "core/workers/window_meter.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

namespace nm {
namespace {

/// Messages per sendmmsg/recvmmsg call: enough to spread the system call's cost over many datagrams (the
/// kernel would take up to UIO_MAXIOV, 1024).
constexpr size_t kMaxMessagesPerCall = 64;
/// A send batch carries at most 1 MiB, so one call stays short (the loop looks at its clock between calls)
/// and the batch buffer small; only payloads above 16 KiB get fewer than kMaxMessagesPerCall messages.
constexpr size_t kSendBatchBytes = 1u << 20;
/// A GSO super-datagram must fit one IP packet (64 KiB with headers): 65000 bytes of payload at most...
constexpr size_t kGsoMaxBytes = 65000;
/// ...and the kernel takes at most UDP_MAX_SEGMENTS (64) segments in one.
constexpr size_t kGsoMaxSegments = 64;
/// With GSO each message is already up to 64 KiB: 8 of them make a batch.
constexpr size_t kGsoMessagesPerCall = 8;
/// A paced stream may send this much of its rate at once, so a late wake-up is made up (at least a batch).
constexpr double kBucketBurstS = 0.005;
/// A UDP_GRO receive buffer holds one coalesced super-datagram: at most 64 KiB.
constexpr size_t kGroBufferBytes = 65536;
/// The receive batch may hold kMaxMessagesPerCall datagrams of the largest size (64 x 64 KiB).
constexpr size_t kRecvBatchBytes = 4u << 20;

/// A stream stops at this many ECONNREFUSED: the receiver's port is closed (each one an ICMP port
/// unreachable, which the peer's kernel rate-limits to about one a second after a burst). Once may be a
/// peer that was not listening yet; again means nobody is, and the sender must not flood an address that
/// does not want it.
constexpr int kMaxRefused = 3;

int64_t steady_ns(TimePoint t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

// The sender's per-stream state; the StreamSet keeps the rest.
struct SendState {
    uint64_t seq = 0;
    uint64_t left = 0;  ///< byte-count test: datagrams left
    std::optional<TokenBucket> bucket;
    int refused = 0;  ///< ECONNREFUSED so far
};

// The batch shapes, in one place: the workers allocate by them and udp_stream_memory() adds them up.
struct SendShape {
    size_t segs;  ///< datagrams per message (GSO: one message carries `segs` datagrams)
    size_t msg_bytes;
    size_t batch;  ///< messages per sendmmsg
};
SendShape send_shape(const EnginePlan& plan) {
    const size_t payload = std::max<size_t>(plan.write_size, 1);
    const size_t segs = plan.udp_gso ? std::clamp<size_t>(kGsoMaxBytes / payload, 1, kGsoMaxSegments) : 1;
    return {segs, payload * segs, plan.udp_gso ? kGsoMessagesPerCall : std::clamp<size_t>(kSendBatchBytes / payload, 1, kMaxMessagesPerCall)};
}

struct ReceiveShape {
    size_t bufsize;  ///< one datagram, or one GRO super-datagram
    size_t batch;    ///< messages per recvmmsg
};
ReceiveShape receive_shape(const EnginePlan& plan) {
    const size_t bufsize = plan.udp_gro ? kGroBufferBytes : std::max<size_t>(plan.write_size, UdpHeader::kSize);
    return {bufsize, std::clamp<size_t>(kRecvBatchBytes / bufsize, 1, kMaxMessagesPerCall)};
}

// The UDP_GRO control message's segment size: each datagram in a coalesced buffer is this long (the last
// may be shorter). 0 when the buffer holds one datagram.
size_t gro_segment_size(msghdr& mh) {
    size_t seg = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int gso = 0;
            std::memcpy(&gso, CMSG_DATA(c), sizeof gso);
            if (gso > 0) seg = static_cast<size_t>(gso);
        }
    }
    return seg;
}

// The batch of one sendmmsg or recvmmsg, allocated once: `count` messages of `bytes` each in one buffer,
// each message with an iovec of its own.
struct MessageBatch {
    MessageBatch(size_t count, size_t message_bytes) : bytes(message_bytes), buf(count * message_bytes, 0), iov(count), msgs(count) {
        for (size_t b = 0; b < count; ++b) {
            iov[b] = {buf.data() + b * bytes, bytes};
            msgs[b] = {};
            msgs[b].msg_hdr.msg_iov = &iov[b];
            msgs[b].msg_hdr.msg_iovlen = 1;
        }
    }
    unsigned char* message(size_t k) { return buf.data() + k * bytes; }

    size_t bytes;  ///< one message's buffer
    std::vector<unsigned char> buf;
    std::vector<iovec> iov;
    std::vector<mmsghdr> msgs;
};

// ---------------------------------------------------------------------------------------------------
// The sender's steps.

// The sender's batch: the messages of one sendmmsg and how they are filled, one UdpHeader per datagram.
class SendBatch {
public:
    explicit SendBatch(const EnginePlan& plan)
        : shape_(send_shape(plan)),
          payload_(plan.write_size),
          pattern_(plan.payload_pattern.data()),
          pattern_size_(plan.payload_pattern.size()),
          mixed_(pattern_size_ > 0),
          cookie_(plan.udp_cookie),
          batch_(shape_.batch, shape_.msg_bytes) {}

    /// Datagrams one call sends at the most.
    uint64_t capacity() const { return shape_.batch * shape_.segs; }

    /// Headers for `want` datagrams from sequence number `seq` in as many messages as they need; returns
    /// the messages. With a payload mix each message is one datagram whose size follows the pattern by
    /// sequence number.
    size_t fill(uint64_t seq, uint64_t want, int64_t ts, uint16_t stream, bool in) {
        size_t nmsg = 0;
        uint64_t d = 0;
        while (d < want) {
            const size_t in_msg = static_cast<size_t>(std::min<uint64_t>(shape_.segs, want - d));
            for (size_t k = 0; k < in_msg; ++k) {
                UdpHeader h{seq + d + k, ts, stream, in, cookie_};
                h.write(batch_.message(nmsg) + k * payload_);
            }
            batch_.iov[nmsg].iov_len = mixed_ ? pattern_[(seq + d) % pattern_size_] : in_msg * payload_;
            d += in_msg;
            ++nmsg;
        }
        return nmsg;
    }

    /// The first `nmsg` messages on `fd` (sendmmsg, non-blocking): the messages sent, or -1 (errno).
    int send(int fd, size_t nmsg) { return ::sendmmsg(fd, batch_.msgs.data(), static_cast<unsigned>(nmsg), MSG_DONTWAIT); }

    struct Sent {
        uint64_t datagrams = 0;
        uint64_t bytes = 0;
    };
    /// What the first `m` messages of the last send() carried.
    Sent sent(int m) const {
        Sent out;
        for (int k = 0; k < m; ++k) {
            const size_t len = batch_.iov[static_cast<size_t>(k)].iov_len;
            out.datagrams += mixed_ ? 1 : len / payload_;
            out.bytes += len;
        }
        return out;
    }

private:
    SendShape shape_;  // with GSO one message carries `segs` datagrams of `payload_` bytes
    size_t payload_;
    const uint32_t* pattern_;  // the plan's payload pattern (a payload mix), by sequence number
    size_t pattern_size_;
    bool mixed_;  // a payload mix: each message is one datagram whose size follows the pattern
    uint32_t cookie_;
    MessageBatch batch_;
};

// Each stream's state before the first send: its datagrams to go (a byte count), its token bucket (a
// rate), UDP_SEGMENT on its socket (GSO). False when a socket refuses GSO (the error is in `out`).
bool prepare_send_streams(const WorkerJob& job, const SteadyClock& clock, std::vector<SendState>& st, WorkerOutput& out) {
    const EnginePlan& plan = job.plan;
    const size_t batch = send_shape(plan).batch;  // a bucket holds at least a call's messages
    for (size_t i = 0; i < job.streams.size(); ++i) {
        out.streams[i].loss = LossStats{};
        st[i].left = plan.bytes_per_stream > 0 ? std::max<uint64_t>(1, plan.bytes_per_stream / plan.write_size) : 0;
        if (plan.rate_per_stream > 0) {
            st[i].bucket.emplace(clock, plan.rate_per_stream, std::max(static_cast<double>(batch), plan.rate_per_stream * kBucketBurstS));
        }
        if (plan.udp_gso) {
            const int gso = static_cast<int>(plan.write_size);
            if (::setsockopt(job.streams[i].fd.get(), SOL_UDP, UDP_SEGMENT, &gso, sizeof gso) != 0) {
                out.error = stream_error(job.streams[i].id, "set UDP_SEGMENT (GSO)", errno);
                return false;
            }
        }
    }
    return true;
}

// A sendmmsg that sent nothing (errno `err`): what the stream does next.
Step after_send_failed(int err, SendState& state, uint32_t stream, WorkerOutput& out) {
    // A full socket buffer (EAGAIN) or device queue (ENOBUFS): wait for room. An ICMP port unreachable
    // left by a peer that was not listening yet (ECONNREFUSED): try again.
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) return Step::wait();
    if (err == ECONNREFUSED && ++state.refused >= kMaxRefused) {
        if (out.error.empty()) {
            out.error = "stream " + std::to_string(stream) + ": the receiver's port is closed (ECONNREFUSED " + std::to_string(kMaxRefused) +
                        " times); stopped sending";
        }
        return Step::done();
    }
    if (err == EINTR || err == ECONNREFUSED) return Step::again();
    if (out.error.empty()) out.error = stream_error(stream, "sendmmsg", err);
    return Step::done();
}

// ---------------------------------------------------------------------------------------------------
// The receiver's steps.

// The receiver's batch: the messages of one recvmmsg, each with room for its sender's address and (with
// UDP_GRO) the control message that gives its segment size.
struct ReceiveBatch {
    static constexpr size_t kCtl = CMSG_SPACE(sizeof(int));

    ReceiveBatch(const ReceiveShape& shape, bool udp_gro)
        : count(shape.batch), gro(udp_gro), batch(shape.batch, shape.bufsize), ctl(gro ? kCtl * shape.batch : 0), names(shape.batch) {
        for (size_t b = 0; b < count; ++b) {
            msghdr& h = batch.msgs[b].msg_hdr;
            h.msg_name = &names[b];
            h.msg_namelen = sizeof(sockaddr_storage);
            if (gro) {
                h.msg_control = ctl.data() + b * kCtl;
                h.msg_controllen = kCtl;
            }
        }
    }

    size_t count;
    bool gro;
    MessageBatch batch;
    std::vector<unsigned char> ctl;
    std::vector<sockaddr_storage> names;  ///< who sent each: only the test's peer counts
};

// What the receiver counts per stream id: every receiver socket may see every stream.
struct ReceivedStreams {
    explicit ReceivedStreams(uint32_t streams) : trackers(streams), per(streams) {}
    std::vector<UdpSequenceTracker> trackers;
    std::vector<StreamResult> per;
};

// One StreamResult with its loss figures for each stream id this receiver saw, into `out`.
void add_received_streams(const ReceivedStreams& got, Direction direction, std::vector<StreamResult>& out) {
    for (uint32_t id = 0; id < got.trackers.size(); ++id) {
        const UdpSequenceTracker& t = got.trackers[id];
        if (got.per[id].packets == 0 && t.duplicates() == 0) continue;
        StreamResult r = got.per[id];
        r.id = id;
        r.direction = direction;
        LossStats loss;
        loss.received = t.received();
        loss.duplicates = t.duplicates();
        loss.reordered = t.reordered();
        loss.jitter_ms = t.jitter_ms();
        r.loss = loss;
        out.push_back(r);
    }
}

}  // namespace

void udp_stream_send(WorkerJob& job) {
    SteadyClock clock;  // the send time in each header, and the token buckets'
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const bool by_bytes = plan.bytes_per_stream > 0;
    SendBatch batch(plan);
    out.streams = stream_results(job.streams, plan.send_direction);
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), false);
    std::vector<SendState> st(job.streams.size());
    if (!prepare_send_streams(job, clock, st, out)) return;

    const auto on_turn = [&](StreamSet&, TimePoint now) {
        meter.tick(now);
        return by_bytes || now < tl.window_end;
    };

    // One sendmmsg. The send time in each header is read here, not at the loop turn: the receiver's jitter
    // is computed from it.
    const auto on_ready = [&](Stream& s, TimePoint) {
        SendState& state = st[s.index()];
        const auto now = clock.now();
        const bool in = meter.tick(now);
        if (!by_bytes && now >= tl.window_end) return Step::done();
        uint64_t want = batch.capacity();
        if (by_bytes) want = std::min(want, state.left);
        if (state.bucket) {
            want = state.bucket->take(want);
            if (want == 0) return Step::later(state.bucket->next_available());
        }
        const int64_t ts = steady_ns(now) - steady_ns(tl.start);  // since the start: fits the header's 48 bits
        const size_t nmsg = batch.fill(state.seq, want, ts, static_cast<uint16_t>(s.id()), in);
        const int m = batch.send(s.fd(), nmsg);
        if (m < 0) return after_send_failed(errno, state, s.id(), out);  // nothing went out
        const SendBatch::Sent sent = batch.sent(m);
        state.seq += sent.datagrams;
        job.progress.bytes.fetch_add(sent.bytes, std::memory_order_relaxed);
        if (in || by_bytes) {
            StreamResult& r = out.streams[s.index()];
            r.packets += sent.datagrams;
            r.bytes += sent.bytes;
            r.loss->sent += sent.datagrams;
            ++out.calls;
            meter.count(now, sent.bytes, sent.datagrams);
        }
        if (by_bytes) {
            state.left -= std::min(state.left, sent.datagrams);
            if (state.left == 0) return Step::done();
        }
        return Step::again();
    };

    StreamSet set(std::move(job.streams), {.events = EPOLLOUT, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set.run(job.stop);
    meter.close();
}

// With UDP_GRO a buffer holds several datagrams of gso_size bytes (the control message says), each counted.
// Only datagrams the sender sent inside its window count, from the peer's address with the test's cookie;
// the window here only bounds this thread's CPU figures. Receivers drain what is queued when stopped (the
// peer's senders are done by then), for at most StreamSet::kDrainTime.
void udp_stream_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    WindowMeter meter(until_peer_done(job.timeline), out.window);
    const int fd = job.streams.at(0).fd.get();  // one socket per receiver thread
    out.knobs = read_socket_knobs(fd, false);
    if (plan.udp_gro) {
        const int one = 1;
        if (::setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) {
            out.error = std::string("set UDP_GRO: ") + std::strerror(errno);
            return;
        }
    }
    ReceiveBatch rb(receive_shape(plan), plan.udp_gro);
    std::vector<mmsghdr>& msgs = rb.batch.msgs;
    const bool check_peer = plan.udp_peer.len > 0;
    ReceivedStreams got(plan.stream_count);
    std::vector<UdpSequenceTracker>& trackers = got.trackers;
    std::vector<StreamResult>& per = got.per;

    const auto on_turn = [&](StreamSet&, TimePoint now) {
        meter.tick(now);
        return true;
    };

    // One recvmmsg; the arrival time is read here (jitter is computed from it).
    const auto on_ready = [&](Stream& s, TimePoint) {
        const auto now = std::chrono::steady_clock::now();
        meter.tick(now);
        const int n = ::recvmmsg(s.fd(), msgs.data(), static_cast<unsigned>(rb.count), MSG_DONTWAIT, nullptr);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNREFUSED) {
                out.error = std::string("recvmmsg: ") + std::strerror(errno);
                return Step::done();
            }
            return Step::wait();
        }
        const int64_t arrival = steady_ns(now);
        uint64_t got_bytes = 0, got_packets = 0, total = 0;
        for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
            auto& mh = msgs[k];
            const size_t len = mh.msg_len;
            total += len;
            // Datagrams from anyone but the peer, or without the test's cookie, could fill in losses or fake
            // jitter: they are not counted.
            const bool from_peer = !check_peer || same_host(rb.names[k], plan.udp_peer);
            mh.msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            size_t seg = len;
            if (rb.gro) {
                if (const size_t gso = gro_segment_size(mh.msg_hdr); gso > 0) seg = gso;
                mh.msg_hdr.msg_controllen = ReceiveBatch::kCtl;
            }
            const unsigned char* base = rb.batch.message(k);
            for (size_t off = 0; off < len; off += seg) {
                const size_t dlen = std::min(seg, len - off);
                if (dlen < UdpHeader::kSize) continue;
                const UdpHeader h = UdpHeader::read(base + off);
                if (!from_peer || h.cookie != plan.udp_cookie || !h.in_window || h.stream >= trackers.size()) continue;
                trackers[h.stream].on_datagram(h.seq, h.send_ns, arrival);
                per[h.stream].bytes += dlen;
                ++per[h.stream].packets;
                got_bytes += dlen;
                ++got_packets;
            }
        }
        job.progress.bytes.fetch_add(total, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        if (got_packets > 0) meter.count(std::max(now, meter.timeline().window_start), got_bytes, got_packets);
        return Step::again();
    };

    run_receive_loop(job, meter, OnStop::Drain, on_turn, on_ready);
    add_received_streams(got, opposite(plan.send_direction), out.streams);
}

uint64_t udp_stream_memory(const EnginePlan& plan, bool sender, size_t streams) {
    const uint64_t per_stream = sizeof(StreamResult) + sizeof(SendState) + sizeof(Stream);
    if (sender) {
        const SendShape shape = send_shape(plan);
        return shape.msg_bytes * shape.batch + shape.batch * (sizeof(iovec) + sizeof(mmsghdr)) + streams * per_stream;
    }
    const ReceiveShape shape = receive_shape(plan);
    const uint64_t batch =
        shape.bufsize * shape.batch + shape.batch * (sizeof(iovec) + sizeof(mmsghdr) + sizeof(sockaddr_storage) + CMSG_SPACE(sizeof(int)));
    // Every receiver socket may see every stream id: a tracker and a result for each.
    return batch + uint64_t{plan.stream_count} * (sizeof(UdpSequenceTracker) + UdpSequenceTracker::kWindow / 8 + sizeof(StreamResult)) +
           streams * per_stream;
}

}  // namespace nm
