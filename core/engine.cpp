#include "core/engine.hpp"

#include <linux/udp.h>
#include <netinet/in.h>
#include <linux/tcp.h>   // the uapi tcp_info: glibc's lacks tcpi_bytes_retrans
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "core/base/error.hpp"
#include "core/token_bucket.hpp"
#include "core/udp_tracker.hpp"

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

/// Published by a worker for the session's stall check and done test; each on its own cache line.
struct alignas(64) WorkerProgress {
    std::atomic<uint64_t> bytes{0};
    std::atomic<bool> done{false};
};

/// What a worker measured, read only after join().
struct WorkerOutput {
    std::vector<StreamResult> streams;
    ThreadCpu cpu;                     ///< over the window
    bool window_seen = false;
    uint64_t calls = 0;                ///< send/recv calls in the window
    std::vector<uint64_t> interval_bytes;
    std::vector<uint64_t> interval_packets;
    std::string error;
};

void napi_rates(NapiStats& napi, double duration_s) {
    const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    napi.interrupts_per_s = ratio(static_cast<double>(napi.interrupts), duration_s);
    napi.interrupts_per_packet = ratio(static_cast<double>(napi.interrupts), static_cast<double>(napi.packets));
    napi.processed_per_s = ratio(static_cast<double>(napi.processed), duration_s);
    napi.processed_per_interrupt = ratio(static_cast<double>(napi.processed), static_cast<double>(napi.interrupts));
}

ThreadCpu thread_cpu_now() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    const auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

namespace {

int64_t steady_ns(TimePoint t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

/// A worker's view of the window: thread CPU at its start and end, and per-interval counts.
class WindowMeter {
public:
    WindowMeter(const Timeline& tl, WorkerOutput& out) : tl_(tl), out_(out) {}

    /// Advances the window state; true while inside the window. `began()` is true once right after start.
    bool tick(TimePoint now) {
        began_ = false;
        if (state_ == State::Before && now >= tl_.window_start) {
            cpu_start_ = thread_cpu_now();
            state_ = State::In;
            out_.window_seen = true;
            began_ = true;
        }
        if (state_ == State::In && now >= tl_.window_end) close();
        return state_ == State::In;
    }
    bool began() const { return began_; }
    bool in() const { return state_ == State::In; }

    void count(TimePoint now, uint64_t bytes, uint64_t packets) {
        if (tl_.interval.count() <= 0) return;
        const auto k = static_cast<size_t>((now - tl_.window_start) / tl_.interval);
        if (k >= out_.interval_bytes.size()) {
            out_.interval_bytes.resize(k + 1, 0);
            out_.interval_packets.resize(k + 1, 0);
        }
        out_.interval_bytes[k] += bytes;
        out_.interval_packets[k] += packets;
    }

    void close() {
        if (state_ != State::In) return;
        const ThreadCpu end = thread_cpu_now();
        out_.cpu.user_s = end.user_s - cpu_start_.user_s;
        out_.cpu.sys_s = end.sys_s - cpu_start_.sys_s;
        state_ = State::After;
    }

private:
    enum class State { Before, In, After };
    const Timeline& tl_;
    WorkerOutput& out_;
    State state_ = State::Before;
    ThreadCpu cpu_start_;
    bool began_ = false;
};

std::optional<tcp_info> read_tcp_info(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    return info;
}

std::string stream_error(uint32_t id, const char* what, int err) {
    return "stream " + std::to_string(id) + ": " + what + ": " + std::strerror(err);
}

class Epoll {
public:
    Epoll() : fd_(::epoll_create1(EPOLL_CLOEXEC)) {
        if (!fd_) throw system_error("epoll_create1", errno);
    }
    void add(int fd, uint32_t events, uint64_t data) {
        epoll_event ev{};
        ev.events = events;
        ev.data.u64 = data;
        if (::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) throw system_error("epoll_ctl", errno);
    }
    void remove(int fd) { ::epoll_ctl(fd_.get(), EPOLL_CTL_DEL, fd, nullptr); }
    int wait(epoll_event* events, int max, int timeout_ms) { return ::epoll_wait(fd_.get(), events, max, timeout_ms); }

private:
    UniqueFd fd_;
};

constexpr int kPollMs = 10;
constexpr int kMaxRefused = 3;   // a UDP stream stops at this many ECONNREFUSED
constexpr uint32_t kTcpReadSize = 128 * 1024;     // iperf3's read size: window updates stay frequent
constexpr uint32_t kTcpBigReadSize = 1 << 20;     // with GRO-sized chunks: fewer calls per byte
constexpr int kTcpRcvLowat = 256 * 1024;       // wake the reader per 256 KiB, not per GSO packet   // how often a waiting worker looks at the clock and its stop token

// The buffer shapes of the workers, in one place: the workers allocate by them and worker_memory_bytes()
// (the server's memory budget) adds them up.
size_t tcp_receive_buffer(const EnginePlan& plan) { return std::max<uint32_t>(plan.write_size, kTcpBigReadSize); }

struct UdpSendShape {
    size_t segs;        // datagrams per message (GSO: one message carries `segs` datagrams, at most 64 KiB in all)
    size_t msg_bytes;
    size_t batch;       // messages per sendmmsg
};
UdpSendShape udp_send_shape(const EnginePlan& plan) {
    const size_t payload = std::max<size_t>(plan.write_size, 1);
    const size_t segs = plan.udp_gso ? std::clamp<size_t>(65000 / payload, 1, 64) : 1;
    return {segs, payload * segs, plan.udp_gso ? 8 : std::clamp<size_t>((1u << 20) / payload, 1, 64)};
}

struct UdpReceiveShape {
    size_t bufsize;     // one datagram, or one GRO super-datagram
    size_t batch;       // messages per recvmmsg
};
UdpReceiveShape udp_receive_shape(const EnginePlan& plan) {
    const size_t bufsize = plan.udp_gro ? 65536 : std::max<size_t>(plan.write_size, UdpHeader::kSize);
    return {bufsize, std::clamp<size_t>((4u << 20) / bufsize, 1, 64)};
}

// TCP sender: non-blocking sockets, level-triggered EPOLLOUT, writes of plan.write_size until EAGAIN.
void tcp_sender(std::vector<DataStream> streams, const EnginePlan& plan, const Timeline& tl, WorkerProgress& progress,
                std::stop_token stop, WorkerOutput& out) {
    WindowMeter meter(tl, out);
    Epoll ep;
    std::vector<char> buf(plan.write_size);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>('a' + i % 26);
    struct State {
        uint64_t left = 0;
        bool open = true;
        uint32_t retrans_start = 0;
        uint64_t retrans_bytes_start = 0;
    };
    std::vector<State> st(streams.size());
    out.streams.resize(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
        out.streams[i].id = streams[i].id;
        out.streams[i].direction = plan.send_direction;
        st[i].left = plan.bytes_per_stream;
        if (plan.rate_per_stream > 0) {
            // The kernel's pacing (fq or TCP internal pacing) holds the rate without a user-space timer.
            const auto rate = static_cast<uint64_t>(plan.rate_per_stream);
            ::setsockopt(streams[i].fd.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate);
        }
        ep.add(streams[i].fd.get(), EPOLLOUT, i);
    }
    size_t open = streams.size();
    std::vector<epoll_event> events(std::max<size_t>(streams.size(), 1));
    const bool by_bytes = plan.bytes_per_stream > 0;
    while (open > 0 && !stop.stop_requested()) {
        auto now = std::chrono::steady_clock::now();
        const bool in = meter.tick(now);
        if (meter.began()) {
            for (size_t i = 0; i < streams.size(); ++i) {
                if (const auto info = read_tcp_info(streams[i].fd.get())) {
                    st[i].retrans_start = info->tcpi_total_retrans;
                    st[i].retrans_bytes_start = info->tcpi_bytes_retrans;
                }
            }
        }
        if (!by_bytes && now >= tl.window_end) break;
        const int n = ep.wait(events.data(), static_cast<int>(events.size()), kPollMs);
        if (n < 0 && errno != EINTR) {
            out.error = std::string("epoll_wait: ") + std::strerror(errno);
            break;
        }
        for (int e = 0; e < n; ++e) {
            const size_t i = events[static_cast<size_t>(e)].data.u64;
            if (!st[i].open) continue;
            for (int burst = 0; burst < 8; ++burst) {
                size_t len = buf.size();
                if (by_bytes) len = static_cast<size_t>(std::min<uint64_t>(len, st[i].left));
                const ssize_t w = ::send(streams[i].fd.get(), buf.data(), len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                    const auto bytes = static_cast<uint64_t>(w);
                    progress.bytes.fetch_add(bytes, std::memory_order_relaxed);
                    if (in || by_bytes) {
                        out.streams[i].bytes += bytes;
                        ++out.calls;
                        meter.count(now, bytes, 0);
                    }
                    if (by_bytes) {
                        st[i].left -= bytes;
                        if (st[i].left == 0) {
                            st[i].open = false;
                            --open;
                            ep.remove(streams[i].fd.get());
                            ::shutdown(streams[i].fd.get(), SHUT_WR);
                            break;
                        }
                    }
                    continue;
                }
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
                if (out.error.empty()) out.error = stream_error(streams[i].id, "send", w < 0 ? errno : EPIPE);
                st[i].open = false;
                --open;
                ep.remove(streams[i].fd.get());
                break;
            }
        }
    }
    meter.close();
    for (size_t i = 0; i < streams.size(); ++i) {
        if (const auto info = read_tcp_info(streams[i].fd.get())) {
            out.streams[i].retransmits = info->tcpi_total_retrans - std::min(info->tcpi_total_retrans, st[i].retrans_start);
            out.streams[i].retrans_bytes = info->tcpi_bytes_retrans - std::min<uint64_t>(info->tcpi_bytes_retrans, st[i].retrans_bytes_start);
            out.streams[i].cwnd = info->tcpi_snd_cwnd;
            out.streams[i].rtt_us = info->tcpi_rtt;
            out.streams[i].pmtu = info->tcpi_pmtu;
        }
        ::shutdown(streams[i].fd.get(), SHUT_WR);
    }
    progress.done.store(true);
}

// A receiver counts until the sender's data ends, not until its own clock says so: the sender started one
// control message later and sends until its window ends, and those bytes are part of the test (iperf3's
// receiver does the same). The end's window then ends when its receivers are done.
Timeline until_peer_done(Timeline tl) {
    tl.window_end = TimePoint::max();
    return tl;
}

// TCP receiver: reads every byte (no MSG_TRUNC: the copy is part of what a receiver costs) until EOF.
void tcp_receiver(std::vector<DataStream> streams, const EnginePlan& plan, const Timeline& timeline, WorkerProgress& progress,
                  std::stop_token stop, WorkerOutput& out) {
    const Timeline tl = until_peer_done(timeline);
    WindowMeter meter(tl, out);
    Epoll ep;
    std::vector<char> buf(tcp_receive_buffer(plan));
    size_t read_size = std::max<size_t>(plan.write_size, kTcpReadSize);
    out.streams.resize(streams.size());
    std::vector<bool> open(streams.size(), true);
    for (size_t i = 0; i < streams.size(); ++i) {
        out.streams[i].id = streams[i].id;
        out.streams[i].direction = plan.send_direction == Direction::Forward ? Direction::Reverse : Direction::Forward;
        ep.add(streams[i].fd.get(), EPOLLIN, i);
    }
    // Each wake-up of a sleeping reader is paid by the CPU that runs the receive softirq (on veth, the
    // sender's). When GRO already hands over big chunks, waking per 256 KiB (SO_RCVLOWAT) and reading 1 MiB
    // at a time saves that; without GRO (segments one by one) a late or long read delays the window updates
    // and slows the flow instead (bench/vs_iperf3 showed both). So probe first: readiness events that bring
    // aggregated packets (the interface's rx packets average >= 16 KiB: TSO/GRO) switch to big reads. Paced
    // tests, and interfaces we cannot read, read as data comes.
    const auto rx_counters = [&plan]() -> std::optional<LinkCounters> {
        try {
            const auto devs = parse_proc_net_dev(read_proc_file("/proc/thread-self/net/dev"));
            if (const auto it = devs.find(plan.iface); it != devs.end()) return it->second;
        } catch (const Error&) {
        }
        return std::nullopt;
    };
    const auto probe_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    bool probing = plan.rate_per_stream <= 0 && !plan.iface.empty();
    const auto probe_start = probing ? rx_counters() : std::nullopt;
    probing = probing && probe_start.has_value();
    size_t left = streams.size();
    std::vector<epoll_event> events(std::max<size_t>(streams.size(), 1));
    while (left > 0 && !stop.stop_requested()) {
        const auto now = std::chrono::steady_clock::now();
        const bool in = meter.tick(now);
        if (probing && now >= probe_end) {
            probing = false;
            const auto now_counters = rx_counters();
            const uint64_t packets = now_counters ? now_counters->rx_packets - probe_start->rx_packets : 0;
            const uint64_t bytes = now_counters ? now_counters->rx_bytes - probe_start->rx_bytes : 0;
            if (packets > 0 && bytes / packets >= 16 * 1024) {
                for (const auto& s : streams) ::setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVLOWAT, &kTcpRcvLowat, sizeof kTcpRcvLowat);
                read_size = buf.size();
            }
        }
        const int n = ep.wait(events.data(), static_cast<int>(events.size()), kPollMs);
        if (n < 0 && errno != EINTR) {
            out.error = std::string("epoll_wait: ") + std::strerror(errno);
            break;
        }
        for (int e = 0; e < n; ++e) {
            const size_t i = events[static_cast<size_t>(e)].data.u64;
            if (!open[i]) continue;
            for (int burst = 0; burst < 8; ++burst) {
                const ssize_t r = ::recv(streams[i].fd.get(), buf.data(), read_size, MSG_DONTWAIT);
                if (r > 0) {
                    const auto bytes = static_cast<uint64_t>(r);
                    progress.bytes.fetch_add(bytes, std::memory_order_relaxed);
                    if (in) {
                        out.streams[i].bytes += bytes;
                        ++out.calls;
                        meter.count(now, bytes, 0);
                    }
                    continue;
                }
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
                if (r < 0 && out.error.empty()) out.error = stream_error(streams[i].id, "recv", errno);
                open[i] = false;
                --left;
                ep.remove(streams[i].fd.get());
                break;
            }
        }
    }
    meter.close();
    for (size_t i = 0; i < streams.size(); ++i) {
        if (const auto info = read_tcp_info(streams[i].fd.get())) {
            out.streams[i].rtt_us = info->tcpi_rtt;
            out.streams[i].pmtu = info->tcpi_pmtu;
        }
    }
    progress.done.store(true);
}

// UDP sender: connected sockets, batches of sendmmsg (or UDP_SEGMENT super-datagrams), one header per
// datagram, an optional token bucket per stream.
void udp_sender(std::vector<DataStream> streams, const EnginePlan& plan, const Timeline& tl, WorkerProgress& progress,
                std::stop_token stop, WorkerOutput& out) {
    WindowMeter meter(tl, out);
    SteadyClock clock;
    const size_t payload = plan.write_size;
    const std::vector<uint32_t>& pattern = plan.payload_pattern;
    const bool mixed = !pattern.empty();
    const UdpSendShape shape = udp_send_shape(plan);
    const size_t segs = shape.segs, msg_bytes = shape.msg_bytes, batch = shape.batch;
    std::vector<unsigned char> buf(msg_bytes * batch, 0);
    std::vector<iovec> iov(batch);
    std::vector<mmsghdr> msgs(batch);
    for (size_t b = 0; b < batch; ++b) {
        iov[b] = {buf.data() + b * msg_bytes, msg_bytes};
        msgs[b] = {};
        msgs[b].msg_hdr.msg_iov = &iov[b];
        msgs[b].msg_hdr.msg_iovlen = 1;
    }
    struct State {
        uint64_t seq = 0;
        uint64_t left = 0;     // datagrams left in a byte-count test
        bool open = true;
        int refused = 0;       // ECONNREFUSED so far
        std::optional<TokenBucket> bucket;
    };
    std::vector<State> st(streams.size());
    out.streams.resize(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
        out.streams[i].id = streams[i].id;
        out.streams[i].direction = plan.send_direction;
        out.streams[i].loss = LossStats{};
        st[i].left = plan.bytes_per_stream > 0 ? std::max<uint64_t>(1, plan.bytes_per_stream / payload) : 0;
        if (plan.rate_per_stream > 0) {
            // Burst: one batch or 5 ms of datagrams, whichever is more, so a late wake-up is made up.
            st[i].bucket.emplace(clock, plan.rate_per_stream, std::max(static_cast<double>(batch), plan.rate_per_stream * 0.005));
        }
        if (plan.udp_gso) {
            const int gso = static_cast<int>(payload);
            if (::setsockopt(streams[i].fd.get(), SOL_UDP, UDP_SEGMENT, &gso, sizeof gso) != 0) {
                out.error = stream_error(streams[i].id, "set UDP_SEGMENT (GSO)", errno);
                progress.done.store(true);
                return;
            }
        }
    }
    const bool by_bytes = plan.bytes_per_stream > 0;
    size_t open = streams.size();
    while (open > 0 && !stop.stop_requested()) {
        TimePoint wake = TimePoint::max();
        bool sent_any = false;
        for (size_t i = 0; i < streams.size(); ++i) {
            if (!st[i].open) continue;
            const auto now = clock.now();
            const bool in = meter.tick(now);
            if (!by_bytes && now >= tl.window_end) {
                st[i].open = false;
                --open;
                continue;
            }
            uint64_t want = batch * segs;
            if (by_bytes) want = std::min(want, st[i].left);
            if (st[i].bucket) {
                want = st[i].bucket->take(want);
                if (want == 0) {
                    wake = std::min(wake, st[i].bucket->next_available());
                    continue;
                }
            }
            // Fill headers for `want` datagrams in as many messages as they need. With a payload mix each
            // message is one datagram whose size follows the pattern by sequence number.
            const int64_t ts = steady_ns(now) - steady_ns(tl.start);   // since the start: fits the header's 48 bits
            size_t nmsg = 0;
            uint64_t d = 0;
            while (d < want) {
                const size_t in_msg = static_cast<size_t>(std::min<uint64_t>(segs, want - d));
                for (size_t s = 0; s < in_msg; ++s) {
                    UdpHeader h{st[i].seq + d + s, ts, static_cast<uint16_t>(streams[i].id), in, plan.udp_cookie};
                    h.write(buf.data() + nmsg * msg_bytes + s * payload);
                }
                iov[nmsg].iov_len = mixed ? pattern[(st[i].seq + d) % pattern.size()] : in_msg * payload;
                d += in_msg;
                ++nmsg;
            }
            const int m = ::sendmmsg(streams[i].fd.get(), msgs.data(), static_cast<unsigned>(nmsg), MSG_DONTWAIT);
            if (m < 0) {
                const int err = errno;
                // The receiver's port is closed (an ICMP port unreachable each time, rate-limited by the
                // peer's kernel): once may be a peer that was not listening yet, again means nobody is,
                // and the stream stops rather than flood an address that does not want it.
                if (err == ECONNREFUSED && ++st[i].refused >= kMaxRefused) {
                    if (out.error.empty()) {
                        out.error = "stream " + std::to_string(streams[i].id) + ": the receiver's port is closed (ECONNREFUSED " +
                                    std::to_string(kMaxRefused) + " times); stopped sending";
                    }
                    st[i].open = false;
                    --open;
                    continue;
                }
                if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS || err == EINTR || err == ECONNREFUSED) {
                    // A full socket buffer or an ICMP port unreachable left by a peer that was not listening
                    // yet; nothing was sent, try again.
                    if (err == EAGAIN || err == ENOBUFS) {
                        pollfd p{streams[i].fd.get(), POLLOUT, 0};
                        ::poll(&p, 1, 1);
                    }
                    continue;
                }
                if (out.error.empty()) out.error = stream_error(streams[i].id, "sendmmsg", err);
                st[i].open = false;
                --open;
                continue;
            }
            uint64_t sent = 0, sent_bytes = 0;
            for (int k = 0; k < m; ++k) {
                const size_t len = iov[static_cast<size_t>(k)].iov_len;
                sent += mixed ? 1 : len / payload;
                sent_bytes += len;
            }
            st[i].seq += sent;
            sent_any = sent > 0;
            progress.bytes.fetch_add(sent_bytes, std::memory_order_relaxed);
            if (in || by_bytes) {
                out.streams[i].packets += sent;
                out.streams[i].bytes += sent_bytes;
                out.streams[i].loss->sent += sent;
                ++out.calls;
                meter.count(now, sent_bytes, sent);
            }
            if (by_bytes) {
                st[i].left -= std::min(st[i].left, sent);
                if (st[i].left == 0) {
                    st[i].open = false;
                    --open;
                }
            }
        }
        if (!sent_any && wake != TimePoint::max()) {
            const auto limit = clock.now() + std::chrono::milliseconds(kPollMs);
            clock.sleep_until(std::min(wake, limit));
        }
    }
    meter.close();
    progress.done.store(true);
}

// UDP receiver: one socket of a SO_REUSEPORT group, recvmmsg batches; with UDP_GRO a buffer holds several
// datagrams of gso_size bytes (the cmsg says), each counted. Only datagrams the sender sent inside its
// window count; the window here only bounds this thread's CPU figures.
void udp_receiver(std::vector<DataStream> streams, const EnginePlan& plan, const Timeline& timeline, WorkerProgress& progress,
                  std::stop_token stop, WorkerOutput& out) {
    const Timeline tl = until_peer_done(timeline);   // until the peer's senders are done and the queue drained
    WindowMeter meter(tl, out);
    const int fd = streams.at(0).fd.get();
    const UdpReceiveShape shape = udp_receive_shape(plan);
    const size_t bufsize = shape.bufsize, batch = shape.batch;
    if (plan.udp_gro) {
        const int one = 1;
        if (::setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) {
            out.error = std::string("set UDP_GRO: ") + std::strerror(errno);
            progress.done.store(true);
            return;
        }
    }
    std::vector<unsigned char> buf(bufsize * batch);
    constexpr size_t kCtl = CMSG_SPACE(sizeof(int));
    std::vector<unsigned char> ctl(plan.udp_gro ? kCtl * batch : 0);
    std::vector<iovec> iov(batch);
    std::vector<mmsghdr> msgs(batch);
    std::vector<sockaddr_storage> names(batch);   // who sent each: only the test's peer is counted
    const bool check_peer = plan.udp_peer.len > 0;
    const auto reset = [&](size_t b) {
        iov[b] = {buf.data() + b * bufsize, bufsize};
        msgs[b] = {};
        msgs[b].msg_hdr.msg_iov = &iov[b];
        msgs[b].msg_hdr.msg_iovlen = 1;
        msgs[b].msg_hdr.msg_name = &names[b];
        msgs[b].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
        if (plan.udp_gro) {
            msgs[b].msg_hdr.msg_control = ctl.data() + b * kCtl;
            msgs[b].msg_hdr.msg_controllen = kCtl;
        }
    };
    for (size_t b = 0; b < batch; ++b) reset(b);
    std::vector<UdpSequenceTracker> trackers(plan.stream_count);
    std::vector<StreamResult> per(plan.stream_count);
    bool draining = false;
    TimePoint drain_end{};
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        if (!draining && stop.stop_requested()) {   // take what is queued, then end: a flood must not keep it here
            draining = true;
            drain_end = now + EndEngine::kDrainTime;
        }
        if (draining && now >= drain_end) break;
        meter.tick(now);
        const int n = ::recvmmsg(fd, msgs.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNREFUSED) {
                out.error = std::string("recvmmsg: ") + std::strerror(errno);
                break;
            }
            if (draining) break;
            pollfd p{fd, POLLIN, 0};
            ::poll(&p, 1, kPollMs);
            continue;
        }
        const int64_t arrival = steady_ns(now);
        uint64_t got_bytes = 0, got_packets = 0, total = 0;
        for (int k = 0; k < n; ++k) {
            auto& mh = msgs[static_cast<size_t>(k)];
            const size_t len = mh.msg_len;
            total += len;
            const bool from_peer = !check_peer || same_host(names[static_cast<size_t>(k)], plan.udp_peer);
            mh.msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            size_t seg = len;
            if (plan.udp_gro) {
                for (cmsghdr* c = CMSG_FIRSTHDR(&mh.msg_hdr); c != nullptr; c = CMSG_NXTHDR(&mh.msg_hdr, c)) {
                    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                        int gso = 0;
                        std::memcpy(&gso, CMSG_DATA(c), sizeof gso);
                        if (gso > 0) seg = static_cast<size_t>(gso);
                    }
                }
                mh.msg_hdr.msg_controllen = kCtl;
            }
            const unsigned char* base = buf.data() + static_cast<size_t>(k) * bufsize;
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
        progress.bytes.fetch_add(total, std::memory_order_relaxed);
        if (meter.in()) ++out.calls;
        if (got_packets > 0) meter.count(std::max(now, tl.window_start), got_bytes, got_packets);
    }
    meter.close();
    for (uint32_t id = 0; id < trackers.size(); ++id) {
        if (per[id].packets == 0 && trackers[id].duplicates() == 0) continue;
        StreamResult r = per[id];
        r.id = id;
        r.direction = plan.send_direction == Direction::Forward ? Direction::Reverse : Direction::Forward;
        LossStats loss;
        loss.received = trackers[id].received();
        loss.duplicates = trackers[id].duplicates();
        loss.reordered = trackers[id].reordered();
        loss.jitter_ms = trackers[id].jitter_ms();
        r.loss = loss;
        out.streams.push_back(r);
    }
    progress.done.store(true);
}

using WorkerFn = void (*)(std::vector<DataStream>, const EnginePlan&, const Timeline&, WorkerProgress&, std::stop_token,
                          WorkerOutput&);

std::vector<StreamResult> merge_streams(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double duration_s) {
    std::map<uint32_t, StreamResult> by_id;
    for (const auto& o : outs) {
        for (const auto& s : o->streams) {
            auto [it, fresh] = by_id.try_emplace(s.id, s);
            if (fresh) continue;
            // A UDP stream seen by two receiver sockets (reuseport rehash): add up what each saw.
            auto& m = it->second;
            m.bytes += s.bytes;
            m.packets += s.packets;
            if (m.loss && s.loss) {
                m.loss->received += s.loss->received;
                m.loss->duplicates += s.loss->duplicates;
                m.loss->reordered += s.loss->reordered;
                m.loss->sent += s.loss->sent;
                m.loss->jitter_ms = std::max(m.loss->jitter_ms, s.loss->jitter_ms);
            }
        }
    }
    std::vector<StreamResult> v;
    for (auto& [id, s] : by_id) {
        s.throughput_bps = duration_s > 0 ? static_cast<double>(s.bytes) * 8 / duration_s : 0;
        v.push_back(s);
    }
    return v;
}

std::vector<IntervalSample> merge_intervals(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s,
                                            double duration_s) {
    std::vector<IntervalSample> v;
    if (interval_s <= 0) return v;
    for (const auto& o : outs) {
        for (size_t k = 0; k < o->interval_bytes.size(); ++k) {
            if (k >= v.size()) v.resize(k + 1);
            v[k].bytes += o->interval_bytes[k];
            v[k].packets += o->interval_packets[k];
        }
    }
    for (size_t k = 0; k < v.size(); ++k) {
        v[k].start_s = static_cast<double>(k) * interval_s;
        v[k].end_s = std::min(static_cast<double>(k + 1) * interval_s, std::max(duration_s, v[k].start_s));
        const double span = v[k].end_s - v[k].start_s;
        v[k].throughput_bps = span > 0 ? static_cast<double>(v[k].bytes) * 8 / span : 0;
        v[k].packets_per_s = span > 0 ? static_cast<double>(v[k].packets) / span : 0;
    }
    return v;
}

}  // namespace

uint64_t worker_memory_bytes(const EnginePlan& plan, bool sender, size_t streams) {
    const uint64_t per_stream = sizeof(StreamResult) + 64;   // the result and the worker's state of a stream
    uint64_t bytes = streams * per_stream;
    if (plan.protocol == Protocol::Tcp) {
        bytes += sender ? plan.write_size : tcp_receive_buffer(plan);
    } else if (sender) {
        const auto shape = udp_send_shape(plan);
        bytes += shape.msg_bytes * shape.batch + shape.batch * (sizeof(iovec) + sizeof(mmsghdr));
    } else {
        const auto shape = udp_receive_shape(plan);
        bytes += shape.bufsize * shape.batch + shape.batch * (sizeof(iovec) + sizeof(mmsghdr) + CMSG_SPACE(sizeof(int)));
        // Every receiver socket may see every stream id: one tracker and result per id.
        bytes += uint64_t{plan.stream_count} * (sizeof(UdpSequenceTracker) + UdpSequenceTracker::kWindow / 8 + sizeof(StreamResult));
    }
    return bytes;
}

EndEngine::EndEngine(EnginePlan plan) : plan_(std::move(plan)) {}

EndEngine::~EndEngine() {
    send_stop_.request_stop();
    recv_stop_.request_stop();
}

void EndEngine::start(const Timeline& timeline) {
    timeline_ = timeline;
    for (const auto* groups : {&plan_.send_groups, &plan_.recv_groups}) {
        for (const auto& g : *groups) {
            for (const auto& st : g) sockets_.emplace_back(::fcntl(st.fd.get(), F_DUPFD_CLOEXEC, 0));
        }
    }
    const bool tcp = plan_.protocol == Protocol::Tcp;
    const auto launch = [&](std::vector<std::vector<DataStream>>& groups, WorkerFn fn, std::stop_source& stop,
                            std::vector<std::unique_ptr<WorkerProgress>>& progress,
                            std::vector<std::unique_ptr<WorkerOutput>>& outs) {
        for (auto& g : groups) {
            progress.push_back(std::make_unique<WorkerProgress>());
            outs.push_back(std::make_unique<WorkerOutput>());
            threads_.emplace_back([fn, streams = std::move(g), this, p = progress.back().get(), o = outs.back().get(),
                                   token = stop.get_token()]() mutable {
                try {
                    fn(std::move(streams), plan_, timeline_, *p, token, *o);
                } catch (const std::exception& e) {
                    o->error = e.what();
                    p->done.store(true);
                }
            });
        }
    };
    launch(plan_.send_groups, tcp ? tcp_sender : udp_sender, send_stop_, send_progress_, send_out_);
    launch(plan_.recv_groups, tcp ? tcp_receiver : udp_receiver, recv_stop_, recv_progress_, recv_out_);
    last_progress_at_ = timeline.start;
    started_ = true;
}

bool EndEngine::senders_done() const {
    return std::all_of(send_progress_.begin(), send_progress_.end(), [](const auto& p) { return p->done.load(); });
}

bool EndEngine::receivers_done() const {
    return std::all_of(recv_progress_.begin(), recv_progress_.end(), [](const auto& p) { return p->done.load(); });
}

void EndEngine::poll(TimePoint now) {
    if (!snap_start_ && now >= timeline_.window_start) {
        snap_start_ = take_proc_snapshot(plan_.iface);
        t_start_ = now;
    }
    // An end that only receives measures until its receivers are done (the peer's data has ended); an end
    // that sends measures its own window.
    const bool window_over = has_senders() && now >= timeline_.window_end;
    if (snap_start_ && !snap_end_ && (window_over || all_done())) {
        snap_end_ = take_proc_snapshot(plan_.iface);
        t_end_ = now;
    }
}

bool EndEngine::stalled(TimePoint now) {
    uint64_t total = 0;
    for (const auto& p : send_progress_) total += p->bytes.load(std::memory_order_relaxed);
    for (const auto& p : recv_progress_) total += p->bytes.load(std::memory_order_relaxed);
    if (total != last_progress_) {
        last_progress_ = total;
        last_progress_at_ = now;
        return false;
    }
    if (now >= timeline_.window_end || all_done()) return false;
    return now - last_progress_at_ > plan_.stall_timeout;
}

EndReport EndEngine::finish(RunStatus status, const std::string& error) {
    send_stop_.request_stop();
    recv_stop_.request_stop();
    // Every worker looks at its stop token at least every poll; one that does not end in time is stuck in
    // a socket, and shutting its sockets down (through the second handles) gets it out.
    const auto limit = std::chrono::steady_clock::now() + kFinishTime;
    while (!all_done() && std::chrono::steady_clock::now() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!all_done()) {
        for (const auto& s : sockets_) ::shutdown(s.get(), SHUT_RDWR);
    }
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    const auto now = std::chrono::steady_clock::now();
    if (snap_start_ && !snap_end_) {
        snap_end_ = take_proc_snapshot(plan_.iface);
        t_end_ = now;
    }
    EndReport r;
    r.status = status;
    r.error = error;
    auto& m = r.measurement;
    m.iface = plan_.iface;
    const double duration = snap_start_ ? std::chrono::duration<double>(t_end_ - t_start_).count() : 0.0;
    m.duration_s = duration;
    if (snap_start_ && snap_end_) {
        m.system = system_cpu_between(snap_start_->cpu, snap_end_->cpu);
        const auto d = [](uint64_t a, uint64_t b) { return b >= a ? b - a : 0; };
        m.napi.processed = d(snap_start_->softnet.processed, snap_end_->softnet.processed);
        m.napi.dropped = d(snap_start_->softnet.dropped, snap_end_->softnet.dropped);
        m.napi.time_squeeze = d(snap_start_->softnet.time_squeeze, snap_end_->softnet.time_squeeze);
        m.napi.interrupts = d(snap_start_->softnet.interrupts, snap_end_->softnet.interrupts);
        m.counters_before = snap_start_->counters;
        m.counters_after = snap_end_->counters;
        m.napi.packets = d(m.counters_before.rx_packets, m.counters_after.rx_packets) +
                         d(m.counters_before.tx_packets, m.counters_after.tx_packets);
        napi_rates(m.napi, duration);
    }
    for (const auto* outs : {&send_out_, &recv_out_}) {
        for (const auto& o : *outs) {
            m.cpu.user_s += o->cpu.user_s;
            m.cpu.sys_s += o->cpu.sys_s;
            if (r.error.empty() && !o->error.empty()) r.error = o->error;
        }
    }
    m.cpu.util_pct = duration > 0 ? 100.0 * (m.cpu.user_s + m.cpu.sys_s) / duration : 0;
    const double interval_s = std::chrono::duration<double>(timeline_.interval).count();
    r.sent = merge_streams(send_out_, duration);
    r.received = merge_streams(recv_out_, duration);
    for (const auto& s : r.sent) {
        r.sent_bytes += s.bytes;
        r.sent_packets += s.packets;
    }
    for (const auto& s : r.received) {
        r.received_bytes += s.bytes;
        r.received_packets += s.packets;
    }
    for (const auto& o : send_out_) r.send_calls += o->calls;
    for (const auto& o : recv_out_) r.recv_calls += o->calls;
    m.io_calls = r.send_calls + r.recv_calls;
    r.sent_intervals = merge_intervals(send_out_, interval_s, duration);
    r.received_intervals = merge_intervals(recv_out_, interval_s, duration);
    return r;
}

}  // namespace nm
