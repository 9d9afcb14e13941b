#pragma once
// The socket knobs of a test (iperf3's -C, -N, -M, --dscp, -Z, --skip-rx-copy, --bind-dev): what the
// test asks for, and what one end's sockets really had, read back from the kernel. Plain values; JSON in
// json_codec_traffic.cpp; the names of DSCP code points in core/traffic/dscp.hpp.
#include <cstdint>
#include <string>

#include "core/base/field_list.hpp"

namespace nm {

/// What a test asks of its data sockets. Defaults leave the kernel's own choice.
struct SocketOptions {
    std::string congestion;     ///< -C TCP_CONGESTION on the sending ends; "" = the namespace's default
    bool nodelay = false;       ///< -N TCP_NODELAY on the sending ends
    uint32_t mss = 0;           ///< -M TCP_MAXSEG on the client before connect (its SYN caps both ways); 0 = kernel
    int dscp = -1;              ///< --dscp 0..63 as IP_TOS / IPV6_TCLASS (dscp << 2) on both ends; -1 = leave
    bool zerocopy = false;      ///< -Z MSG_ZEROCOPY on the TCP senders
    bool skip_rx_copy = false;  ///< --skip-rx-copy: TCP receivers read with MSG_TRUNC (no copy to user space)
    std::string bind_dev;       ///< --bind-dev SO_BINDTODEVICE on the client's data sockets
    uint32_t rx_spin_us = 0;    ///< --rx-spin: stream receivers poll an empty socket this long before sleeping; 0 = sleep at once
};

/// The longest --rx-spin: StreamSet::kPollTime, the longest a receiver sleeps before it looks at its clock.
inline constexpr uint32_t kMaxRxSpinUs = 10'000;

/// MSG_ZEROCOPY on one end's senders: the completions the error queue gave back.
struct ZeroCopyStats {
    bool requested = false;
    uint64_t sends = 0;        ///< send() calls made with MSG_ZEROCOPY
    uint64_t completions = 0;  ///< of them, completed (SO_EE_ORIGIN_ZEROCOPY notifications cover ranges)
    uint64_t copied = 0;       ///< of the completions, those where the kernel copied (SO_EE_CODE_ZEROCOPY_COPIED)
    bool fell_back = false;    ///< the kernel copied, so the sender went on with plain sends
    std::string note;          ///< why it fell back, or ""
};

constexpr auto json_fields(const ZeroCopyStats*) {
    using S = ZeroCopyStats;
    return field_list(field("requested", &S::requested), field("sends", &S::sends), field("completions", &S::completions),
                      field("copied", &S::copied), field("fell_back", &S::fell_back), field("note", &S::note));
}

/// Adds `b`'s counts (two workers of one end); a fall-back or note of either is kept.
inline ZeroCopyStats& operator+=(ZeroCopyStats& a, const ZeroCopyStats& b) {
    a.requested = a.requested || b.requested;
    a.sends += b.sends;
    a.completions += b.completions;
    a.copied += b.copied;
    a.fell_back = a.fell_back || b.fell_back;
    if (a.note.empty()) a.note = b.note;
    return a;
}

/// --rx-spin on one end's stream receivers: how often they found every socket empty and polled instead of
/// sleeping, and how often data came within the spin (the rest of the times they went to sleep, and the
/// sending side's kernel had a sleeper to wake).
struct RxSpinStats {
    uint32_t us = 0;      ///< the spin the receivers applied; 0 = none (they slept at once)
    uint64_t spins = 0;   ///< times a receiver found nothing ready and spun
    uint64_t caught = 0;  ///< of them, spins that data (or an end of stream) ended before `us` ran out
};

constexpr auto json_fields(const RxSpinStats*) {
    using S = RxSpinStats;
    return field_list(field("us", &S::us), field("spins", &S::spins), field("caught", &S::caught));
}

/// Adds `b`'s counts (two workers of one end).
inline RxSpinStats& operator+=(RxSpinStats& a, const RxSpinStats& b) {
    a.us = a.us ? a.us : b.us;
    a.spins += b.spins;
    a.caught += b.caught;
    return a;
}

/// The knobs one end's data socket really had, read back (getsockopt) during the test.
struct SocketKnobs {
    std::string congestion;  ///< TCP_CONGESTION; "" for UDP
    bool nodelay = false;    ///< TCP_NODELAY
    uint32_t mss = 0;        ///< TCP_MAXSEG on the connected socket (the MSS in use); 0 for UDP
    int tos = -1;            ///< IP_TOS (IPv4) or IPV6_TCLASS (IPv6) byte; -1 when not read
    ZeroCopyStats zerocopy;
    bool skip_rx_copy = false;  ///< this end's receivers read with MSG_TRUNC
    std::string bind_dev;       ///< SO_BINDTODEVICE; "" = none
    RxSpinStats rx_spin;        ///< this end's stream receivers' --rx-spin
    /// Bytes per send() of this end's TCP stream senders: -l, or by default the largest whole number of
    /// TCP send units in 128 KiB for the connected MSS (core/workers/tcp_write_size.hpp); 0 when it sent no TCP stream.
    uint32_t write_size = 0;
};

/// The codec adds "dscp" (tos >> 2, null with tos; written, not read).
constexpr auto json_fields_and_more(const SocketKnobs*) {
    using S = SocketKnobs;
    return field_list(field("congestion", &S::congestion), field("nodelay", &S::nodelay), field("mss", &S::mss),
                      field("tos", &S::tos, kFieldNullIfNegative), field("zerocopy", &S::zerocopy), field("skip_rx_copy", &S::skip_rx_copy),
                      field("bind_dev", &S::bind_dev), field("rx_spin", &S::rx_spin), field("write_size", &S::write_size));
}

}  // namespace nm
