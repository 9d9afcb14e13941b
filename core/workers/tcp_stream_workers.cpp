// TCP stream workers: the sender writes plan.write_size bytes at a time on every stream (by default the
// largest whole number of TCP send units under it, core/workers/tcp_write_size.hpp) until its window ends (or its
// byte count is out); the receiver reads every byte until EOF. Both run on the stream-set skeleton
// (non-blocking sockets, level-triggered epoll), except a receiver thread with a single stream, which
// blocks in recv() itself (receive_lone_stream). With -Z the sender sends with MSG_ZEROCOPY and counts
// the kernel's completions; with --skip-rx-copy the receiver reads with MSG_TRUNC.
#include "core/workers/stream_workers.hpp"

#include <linux/tcp.h>  // the uapi tcp_info: glibc's lacks tcpi_bytes_retrans
#include <netinet/in.h>
#include <sys/socket.h>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/host/socket_options.hpp"
#include "core/workers/read_size_policy.hpp"
#include "core/workers/stream_set.hpp"
#include "core/workers/tcp_write_size.hpp"
#include "core/workers/window_meter.hpp"

namespace nm {
namespace {

std::optional<tcp_info> read_tcp_info(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    return info;
}

// A recognisable payload rather than zeros, so a capture of the test shows where it is.
std::vector<char> payload(size_t size) {
    std::vector<char> buf(size);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>('a' + i % 26);
    return buf;
}

// The sender's per-stream state; the StreamSet keeps the rest.
struct SendState {
    size_t write_size = 0;       ///< bytes per send() on this stream
    size_t unsent = 0;           ///< what a short send left of the current write: sent next, so that
                                 ///< every write still ends on a multiple of write_size
    uint64_t left = 0;           ///< byte-count test: bytes still to send
    uint32_t retrans_start = 0;  ///< TCP_INFO at the window's start
    uint64_t retrans_bytes_start = 0;
    uint64_t zc_unreaped = 0;  ///< zerocopy sends since its error queue was last read
    uint64_t zc_sends = 0;     ///< zerocopy sends on this stream
    uint64_t zc_done = 0;      ///< of them, completed
};

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

/// Read a zerocopy sender's error queue after this many sends: the notifications take socket memory
/// (optmem) until read, and the kernel merges consecutive ones, so one read covers many sends.
constexpr uint64_t kZerocopyReapEvery = 32;
/// Completions to see before deciding the kernel copies every send anyway.
constexpr uint64_t kZerocopyJudgeAfter = 64;

// MSG_ZEROCOPY for one sender thread: on while the kernel really avoids the copy, off (with a note) when
// it refuses SO_ZEROCOPY or reports every completion as copied (a local receiver, as veth and loopback
// have: the pages are copied on delivery, and pinning them and reading notifications is then pure cost).
class ZeroCopy {
public:
    ZeroCopy(bool wanted, ZeroCopyStats& stats) : on_(wanted), stats_(stats) { stats_.requested = wanted; }

    void enable(int fd) {
        if (!on_ || enable_zerocopy(fd)) return;
        fall_back(std::string("SO_ZEROCOPY refused: ") + std::strerror(errno));
    }
    int flags() const { return on_ ? MSG_ZEROCOPY : 0; }
    void sent(int fd, SendState& st) {
        if (!on_) return;
        ++stats_.sends;
        ++st.zc_sends;
        if (++st.zc_unreaped < kZerocopyReapEvery) return;
        st.zc_unreaped = 0;
        reap(fd, st);
    }
    void reap(int fd, SendState& st) {
        st.zc_done += reap_zerocopy(fd, stats_);
        if (on_ && stats_.completions >= kZerocopyJudgeAfter && stats_.copied == stats_.completions) {
            fall_back("the kernel copied every one of " + std::to_string(stats_.completions) +
                      " completed sends (SO_EE_CODE_ZEROCOPY_COPIED: a local receiver, as on veth); plain sends from then on");
        }
    }
    // The stream's completions still in flight at the end, waited for a short while so they are counted.
    void finish(int fd, SendState& st) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        for (;;) {
            st.zc_done += reap_zerocopy(fd, stats_);
            if (st.zc_done >= st.zc_sends || std::chrono::steady_clock::now() >= deadline) return;
            pollfd p{fd, 0, 0};  // POLLERR (a notification queued) is reported whatever the events
            ::poll(&p, 1, 10);
        }
    }

private:
    void fall_back(std::string why) {
        on_ = false;
        stats_.fell_back = true;
        if (stats_.note.empty()) stats_.note = std::move(why);
    }
    bool on_;
    ZeroCopyStats& stats_;
};

}  // namespace

void tcp_stream_send(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    const Timeline& tl = job.timeline;
    WorkerOutput& out = job.out;
    WindowMeter meter(tl, out.window);
    const std::vector<char> buf = payload(plan.write_size);
    const bool by_bytes = plan.bytes_per_stream > 0;
    out.streams = stream_results(job.streams, plan.send_direction);
    std::vector<SendState> st(job.streams.size());
    for (size_t i = 0; i < st.size(); ++i) {
        st[i].left = plan.bytes_per_stream;
        st[i].write_size = plan.whole_units ? whole_unit_write_size(tcp_mss(job.streams[i].fd.get()), plan.write_size) : plan.write_size;
    }
    ZeroCopy zc(plan.socket.zerocopy, out.zerocopy);
    if (!job.streams.empty()) {
        out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
        out.knobs->write_size = static_cast<uint32_t>(st.front().write_size);
    }
    for (const auto& s : job.streams) {
        zc.enable(s.fd.get());
        if (plan.rate_per_stream > 0) {
            // The kernel's pacing (fq or TCP internal pacing) holds the rate without a user-space timer.
            const auto rate = static_cast<uint64_t>(plan.rate_per_stream);
            ::setsockopt(s.fd.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate);
        }
    }
    bool in = false;

    // The window's start is where the retransmission counts start from; a timed test ends with its window,
    // a byte-count test when every byte is out.
    const auto on_turn = [&](StreamSet& set, TimePoint now) {
        in = meter.tick(now);
        if (meter.began()) {
            for (const Stream& s : set) {
                if (const auto info = read_tcp_info(s.fd())) {
                    st[s.index()].retrans_start = info->tcpi_total_retrans;
                    st[s.index()].retrans_bytes_start = info->tcpi_bytes_retrans;
                }
            }
        }
        return by_bytes || now < tl.window_end;
    };

    const auto on_ready = [&](Stream& s, TimePoint now) {
        // Woken past the window (the wait ended after it): a timed sender sends nothing more.
        if (!by_bytes && now >= tl.window_end) return Step::done();
        SendState& state = st[s.index()];
        size_t len = state.unsent > 0 ? state.unsent : state.write_size;
        if (by_bytes) len = static_cast<size_t>(std::min<uint64_t>(len, state.left));
        const ssize_t w = ::send(s.fd(), buf.data(), len, MSG_NOSIGNAL | MSG_DONTWAIT | zc.flags());
        if (w < 0 && would_block(errno)) return Step::wait();
        if (w < 0 && errno == ENOBUFS && zc.flags() != 0) {
            // Too many zerocopy notifications unread (optmem): read them, then try again.
            zc.reap(s.fd(), state);
            return Step::again();
        }
        if (w <= 0) {
            if (out.error.empty()) out.error = stream_error(s.id(), "send", w < 0 ? errno : EPIPE);
            return Step::done();
        }
        const auto bytes = static_cast<uint64_t>(w);
        state.unsent = len - static_cast<size_t>(w);
        zc.sent(s.fd(), state);
        job.progress.bytes.fetch_add(bytes, std::memory_order_relaxed);
        if (in || by_bytes) {
            out.streams[s.index()].bytes += bytes;
            ++out.calls;
            meter.count(now, bytes, 0);
        }
        if (by_bytes) {
            state.left -= bytes;
            if (state.left == 0) {
                ::shutdown(s.fd(), SHUT_WR);
                return Step::done();
            }
        }
        return Step::again();
    };

    StreamSet set(std::move(job.streams), {.events = EPOLLOUT, .on_stop = OnStop::End, .on_turn = on_turn, .on_ready = on_ready});
    set.run(job.stop);
    meter.close();
    for (const Stream& s : set) {
        zc.finish(s.fd(), st[s.index()]);
        if (const auto info = read_tcp_info(s.fd())) {
            StreamResult& r = out.streams[s.index()];
            r.retransmits = info->tcpi_total_retrans - std::min(info->tcpi_total_retrans, st[s.index()].retrans_start);
            r.retrans_bytes = info->tcpi_bytes_retrans - std::min<uint64_t>(info->tcpi_bytes_retrans, st[s.index()].retrans_bytes_start);
            r.cwnd = info->tcpi_snd_cwnd;
            r.rtt_us = info->tcpi_rtt;
            r.pmtu = info->tcpi_pmtu;
            r.mss = info->tcpi_snd_mss;
        }
        ::shutdown(s.fd(), SHUT_WR);
    }
}

namespace {

// What both receive loops do with what they read and with a stream they are done with.
struct ReceiverBooks {
    WorkerJob& job;
    WindowMeter& meter;

    /// Counts a read of `bytes` on the stream whose result is `result`; inside the window (`in`) it counts
    /// for the result, the calls and the interval meter too.
    void count(StreamResult& result, uint64_t bytes, bool in, TimePoint now) {
        job.progress.bytes.fetch_add(bytes, std::memory_order_relaxed);
        if (in) {
            result.bytes += bytes;
            ++job.out.calls;
            meter.count(now, bytes, 0);
        }
    }

    /// The stream's round-trip time and path MTU as its socket saw them at the end.
    static void read_path(StreamResult& result, int fd) {
        if (const auto info = read_tcp_info(fd)) {
            result.rtt_us = info->tcpi_rtt;
            result.pmtu = info->tcpi_pmtu;
        }
    }
};

/// What a ReadSizePolicy asks of the sockets once it switches to big reads (update() returned true).
void raise_rcvlowat(int fd) { ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &ReadSizePolicy::kRcvLowat, sizeof ReadSizePolicy::kRcvLowat); }

// A receiver thread with one stream and no --rx-spin reads it without the skeleton: the socket blocks (with
// the skeleton's poll time as SO_RCVTIMEO, so the loop still looks at its stop token that often), and each
// recv() asks MSG_WAITALL for a whole read. The thread then sleeps and wakes inside tcp_recvmsg, copying as
// segments come, and comes back once per read, where the epoll loop made an epoll_wait and about three
// recv() per wake-up (the last one empty). A paced flow reads what is there: its bytes reach the interval
// meter as they come. Measured on the veth lab (MTU 1500, offloads off, 10 alternating rounds): the same
// throughput at 5% less receiver CPU per GB (0.550 against 0.578 s).
void receive_lone_stream(ReceiverBooks& books, int fd, ReadSizePolicy& reads, std::vector<char>& buf, int flags) {
    WorkerJob& job = books.job;
    const bool whole_reads = job.plan.rate_per_stream == 0;
    StreamResult& result = job.out.streams.front();
    for (;;) {
        const TimePoint now = std::chrono::steady_clock::now();
        const bool in = books.meter.tick(now);
        if (reads.update(now)) raise_rcvlowat(fd);
        if (job.stop.stop_requested()) return;
        const ssize_t r = ::recv(fd, buf.data(), reads.read_size(), flags | (whole_reads ? MSG_WAITALL : 0));
        if (r < 0 && would_block(errno)) continue;
        if (r <= 0) {  // EOF: the sender is done; or an error
            if (r < 0 && job.out.error.empty()) job.out.error = stream_error(result.id, "recv", errno);
            return;
        }
        books.count(result, static_cast<uint64_t>(r), in, now);
    }
}

}  // namespace

// Reads every stream to EOF (the sender's end of data; see until_peer_done). Reads copy every byte unless
// --skip-rx-copy asks for MSG_TRUNC (the copy is part of what a receiver costs).
void tcp_stream_receive(WorkerJob& job) {
    const EnginePlan& plan = job.plan;
    WorkerOutput& out = job.out;
    WindowMeter meter(until_peer_done(job.timeline), out.window);
    ReadSizePolicy reads(plan.write_size, plan.iface, plan.rate_per_stream > 0, std::chrono::steady_clock::now());
    std::vector<char> buf(reads.buffer_size());
    out.streams = stream_results(job.streams, opposite(plan.send_direction));
    if (!job.streams.empty()) out.knobs = read_socket_knobs(job.streams.front().fd.get(), true);
    // --skip-rx-copy: the kernel frees the data without copying it out (tcp_recvmsg with MSG_TRUNC).
    const int trunc = plan.socket.skip_rx_copy ? MSG_TRUNC : 0;
    ReceiverBooks books{job, meter};
    if (job.streams.size() == 1 && plan.socket.rx_spin_us == 0 && block_with_poll_time(job.streams.front().fd.get())) {
        const int fd = job.streams.front().fd.get();
        receive_lone_stream(books, fd, reads, buf, trunc);
        meter.close();
        ReceiverBooks::read_path(out.streams.front(), fd);
        job.streams.front().fd.reset();  // closed here, as the stream set closes its sockets
        return;
    }
    const int flags = MSG_DONTWAIT | trunc;
    bool in = false;

    const auto on_turn = [&](StreamSet& set, TimePoint now) {
        in = meter.tick(now);
        if (reads.update(now)) {
            for (const Stream& s : set) raise_rcvlowat(s.fd());
        }
        return true;
    };

    const auto on_ready = [&](Stream& s, TimePoint now) {
        const ssize_t r = ::recv(s.fd(), buf.data(), reads.read_size(), flags);
        if (r < 0 && would_block(errno)) return Step::wait();
        if (r <= 0) {  // EOF: the sender is done; or an error
            if (r < 0 && out.error.empty()) out.error = stream_error(s.id(), "recv", errno);
            return Step::done();
        }
        books.count(out.streams[s.index()], static_cast<uint64_t>(r), in, now);
        return Step::again();
    };

    run_receive_loop(job, meter, OnStop::End, on_turn, on_ready, [&](StreamSet& set) {
        for (const Stream& s : set) ReceiverBooks::read_path(out.streams[s.index()], s.fd());
    });
}

uint64_t tcp_stream_memory(const EnginePlan& plan, bool sender, size_t streams) {
    // The write buffer, or the read buffer; and per stream its result and state.
    const uint64_t buffer = sender ? plan.write_size : ReadSizePolicy::buffer_size_for(plan.write_size);
    return buffer + streams * (sizeof(StreamResult) + sizeof(SendState) + sizeof(Stream));
}

}  // namespace nm
