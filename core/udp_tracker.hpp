#pragma once
// UDP datagram header and per-stream delivery accounting (duplicates, reordering, RFC 3550 jitter).
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nm {

/// The first 18 bytes of every engine datagram (the smallest payload, a 64-byte Ethernet frame):
/// sequence number, send time in ns, stream id. The stream id's top bit marks datagrams sent inside the
/// sender's measured window; only those are counted, so sent and received refer to the same datagrams no
/// matter how the two ends' windows are offset. Little-endian on the wire.
struct UdpHeader {
    static constexpr size_t kSize = 18;
    static constexpr uint16_t kInWindow = 0x8000;
    uint64_t seq = 0;
    int64_t send_ns = 0;
    uint16_t stream = 0;   ///< without the window bit
    bool in_window = false;

    void write(unsigned char* p) const {
        const uint16_t s = static_cast<uint16_t>(stream | (in_window ? kInWindow : 0));
        std::memcpy(p, &seq, 8);
        std::memcpy(p + 8, &send_ns, 8);
        std::memcpy(p + 16, &s, 2);
    }
    static UdpHeader read(const unsigned char* p) {
        UdpHeader h;
        uint16_t s = 0;
        std::memcpy(&h.seq, p, 8);
        std::memcpy(&h.send_ns, p + 8, 8);
        std::memcpy(&s, p + 16, 2);
        h.stream = static_cast<uint16_t>(s & ~kInWindow);
        h.in_window = (s & kInWindow) != 0;
        return h;
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

    uint64_t received() const { return received_; }   ///< unique datagrams
    uint64_t duplicates() const { return duplicates_; }
    uint64_t reordered() const { return reordered_; }
    double jitter_ms() const { return jitter_ns_ / 1e6; }

private:
    bool test_and_set(uint64_t seq);
    void clear(uint64_t seq) { seen_[(seq / 64) % seen_.size()] &= ~(uint64_t{1} << (seq % 64)); }

    std::vector<uint64_t> seen_;
    uint64_t next_ = 0;        ///< one past the highest sequence number seen
    bool any_ = false;
    uint64_t received_ = 0, duplicates_ = 0, reordered_ = 0;
    double jitter_ns_ = 0;
    int64_t last_transit_ = 0;
};

}  // namespace nm
