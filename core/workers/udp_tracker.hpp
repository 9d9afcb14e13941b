#pragma once
// UDP datagram header and per-stream delivery accounting (duplicates, reordering, RFC 3550 jitter).
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nm {

/// The first 18 bytes of every engine datagram (the smallest payload, a 64-byte Ethernet frame): sequence
/// number (48 bits), send time in ns since the sender's start (48 bits: 78 hours), stream id, and the
/// test's cookie. The stream id's top bit marks datagrams sent inside the sender's measured window; only
/// those are counted, so sent and received refer to the same datagrams no matter how the two ends'
/// windows are offset. A receiver counts only datagrams that carry its test's cookie (and come from its
/// peer's address), so datagrams from anyone else cannot fill in losses or fake jitter. Little-endian.
struct UdpHeader {
    static constexpr size_t kSize = 18;
    static constexpr uint16_t kInWindow = 0x8000;
    static constexpr uint64_t kMask48 = (uint64_t{1} << 48) - 1;
    uint64_t seq = 0;     ///< only the low 48 bits travel
    int64_t send_ns = 0;  ///< 0 .. 2^48-1: time since the sender's start
    uint16_t stream = 0;  ///< without the window bit
    bool in_window = false;
    uint32_t cookie = 0;  ///< the test's (the server's "ready" gives it)

    void write(unsigned char* p) const {
        put(p, seq & kMask48, 6);
        put(p + 6, static_cast<uint64_t>(send_ns) & kMask48, 6);
        put(p + 12, static_cast<uint16_t>(stream | (in_window ? kInWindow : 0)), 2);
        put(p + 14, cookie, 4);
    }
    static UdpHeader read(const unsigned char* p) {
        UdpHeader h;
        h.seq = get(p, 6);
        h.send_ns = static_cast<int64_t>(get(p + 6, 6));
        const auto s = static_cast<uint16_t>(get(p + 12, 2));
        h.stream = static_cast<uint16_t>(s & ~kInWindow);
        h.in_window = (s & kInWindow) != 0;
        h.cookie = static_cast<uint32_t>(get(p + 14, 4));
        return h;
    }

private:
    static void put(unsigned char* p, uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
    }
    static uint64_t get(const unsigned char* p, int bytes) {
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
        return v;
    }
};

/// Delivery of one stream at the receiver. Duplicates are recognised within the last kWindow sequence
/// numbers (older stragglers count as reordered); jitter is RFC 3550's J += (|D| - J) / 16 on transit time,
/// which needs no synchronised clocks.
class UdpSequenceTracker {
public:
    static constexpr uint64_t kWindow = 1 << 16;

    UdpSequenceTracker() : seen_(kWindow / 64, 0) {}

    /// One datagram; times in ns (send time from the header, arrival from the receiver's clock).
    void on_datagram(uint64_t seq, int64_t send_ns, int64_t arrival_ns);

    uint64_t received() const { return received_; }  ///< unique datagrams
    uint64_t duplicates() const { return duplicates_; }
    uint64_t reordered() const { return reordered_; }
    double jitter_ms() const { return jitter_ns_ / 1e6; }

private:
    bool test_and_set(uint64_t seq);
    void clear(uint64_t seq) { seen_[(seq / 64) % seen_.size()] &= ~(uint64_t{1} << (seq % 64)); }

    std::vector<uint64_t> seen_;
    uint64_t next_ = 0;  ///< one past the highest sequence number seen
    bool any_ = false;
    uint64_t received_ = 0, duplicates_ = 0, reordered_ = 0;
    double jitter_ns_ = 0;
    int64_t last_transit_ = 0;
};

}  // namespace nm
