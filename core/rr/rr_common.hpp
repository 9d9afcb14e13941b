#pragma once
// What the request/response workers share (core/rr/rr_workers.cpp and the ping-pong loops): the window test
// and the bookkeeping of a completed transaction, the key that compares a source address with the
// client's, and for UDP the sequence number a request and its answer carry and the timeout after which an
// answer is given up as lost (see core/rr/rr_workers.cpp's file comment).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/workers/window_meter.hpp"
#include "core/workers/worker.hpp"

namespace nm {

inline uint64_t ns_between(TimePoint a, TimePoint b) {
    return b > a ? static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count()) : 0;
}

inline bool in_window(const Timeline& tl, TimePoint t) { return t >= tl.window_start && t < tl.window_end; }

/// A request in flight: when it went out, and whether it counts (it went out inside the window).
struct InFlight {
    TimePoint sent;
    bool counted = false;
};

/// What every initiator records for a transaction that completed at `done`.
inline void complete(WorkerOutput& out, WindowMeter& meter, const InFlight& f, TimePoint done) {
    if (!f.counted) return;
    ++out.rr.transactions;
    out.rr.latency.record(ns_between(f.sent, done));
    meter.count(f.sent, 0, 1);
}

/// The 16 bytes of an address as IPv6 (IPv4 as v4-mapped), to compare a datagram's or connection's source
/// with the client's control address whatever the socket family.
struct HostKey {
    unsigned char b[16] = {};
    bool valid = false;
    friend bool operator==(const HostKey&, const HostKey&) = default;
};

inline HostKey host_key(const sockaddr* sa) {
    HostKey k;
    if (sa->sa_family == AF_INET) {
        k.b[10] = k.b[11] = 0xff;
        std::memcpy(k.b + 12, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
        k.valid = true;
    } else if (sa->sa_family == AF_INET6) {
        std::memcpy(k.b, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
        k.valid = true;
    }
    return k;
}

/// UDP's timeout before an answer is given up as lost.
inline constexpr std::chrono::milliseconds kUdpMinTimeout{200};
inline constexpr std::chrono::milliseconds kUdpMaxTimeout{2000};
inline constexpr std::chrono::milliseconds kUdpFirstTimeout{1000};

/// Bytes of a UDP message that carry its sequence number (little-endian, truncated to the message).
inline size_t seq_bytes(uint32_t request_size, uint32_t response_size) { return std::min<size_t>({request_size, response_size, sizeof(uint64_t)}); }

inline void put_seq(char* p, uint64_t seq, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>((seq >> (8 * i)) & 0xff);
}

inline uint64_t get_seq(const char* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return v;
}

/// The sequence numbers `n` sequence bytes can tell apart: all of them, or the low 8n bits.
inline uint64_t seq_mask(size_t n) { return n >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * n)) - 1; }

/// RFC 6298's estimator on the transactions' latency, bounded for a benchmark: an answer later than
/// value() after its request is lost.
struct UdpLossTimeout {
    double srtt_ns = 0;
    double rttvar_ns = 0;
    bool sampled = false;

    void sample(uint64_t ns) {
        const double r = static_cast<double>(ns);
        if (!sampled) {
            srtt_ns = r;
            rttvar_ns = r / 2;
            sampled = true;
            return;
        }
        rttvar_ns = 0.75 * rttvar_ns + 0.25 * std::fabs(srtt_ns - r);
        srtt_ns = 0.875 * srtt_ns + 0.125 * r;
    }
    std::chrono::nanoseconds value() const {
        if (!sampled) return kUdpFirstTimeout;
        const auto t = std::chrono::nanoseconds(static_cast<int64_t>(srtt_ns + 4 * rttvar_ns));
        return std::clamp<std::chrono::nanoseconds>(t, kUdpMinTimeout, kUdpMaxTimeout);
    }
};

/// Datagrams per recvmmsg/sendmmsg on the UDP responder.
inline constexpr size_t kUdpBatch = 32;

/// UDP_RR's state of one flow (core/rr/udp_rr_workers.cpp; rr_memory sizes it): a slot per request in
/// flight, matched to its answer by sequence number.
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

// The ping-pong loops (one flow, one transaction in flight: core/rr/tcp_rr_ping_pong.cpp,
// core/rr/udp_rr_ping_pong.cpp).

/// The initiator ticks its window meter (which notes the CPU it runs on) and looks at its stop token this
/// often, and at the window's start and end exactly; the responder every kTickEvery requests.
inline constexpr std::chrono::milliseconds kTickPeriod{1};
inline constexpr uint32_t kTickEvery = 32;

inline TimePoint next_tick(const Timeline& tl, TimePoint now) {
    TimePoint at = now + kTickPeriod;
    if (now < tl.window_start) return std::min(at, tl.window_start);
    if (now < tl.window_end) return std::min(at, tl.window_end);
    return at;
}

// recv() and send() in a process with threads are cancellation points: glibc brackets each system call
// with two atomic updates of the thread's cancellation state. nicmatrix never cancels a thread, and a
// ping-pong makes two of these calls per transaction on each end, so it calls the system calls directly.
inline ssize_t sys_send(int fd, const void* buf, size_t n, int flags) { return ::syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0); }
inline ssize_t sys_recv(int fd, void* buf, size_t n, int flags) { return ::syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr); }
inline ssize_t sys_sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t len) {
    return ::syscall(SYS_sendto, fd, buf, n, flags, to, len);
}
inline ssize_t sys_recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from, socklen_t* len) {
    return ::syscall(SYS_recvfrom, fd, buf, n, flags, from, len);
}

}  // namespace nm
