#pragma once
// The socket knobs of a test (iperf3's -C, -N, -M, --dscp, -Z, --skip-rx-copy, --bind-dev): what the
// test asks for, and what one end's sockets really had, read back from the kernel. Plain values; JSON in
// json_codec_traffic.cpp; the names of DSCP code points in core/base/dscp.hpp.
#include <cstdint>
#include <string>

namespace nm {

/// What a test asks of its data sockets. Defaults leave the kernel's own choice.
struct SocketOptions {
    std::string congestion;      ///< -C TCP_CONGESTION on the sending ends; "" = the namespace's default
    bool nodelay = false;        ///< -N TCP_NODELAY on the sending ends
    uint32_t mss = 0;            ///< -M TCP_MAXSEG on the client before connect (its SYN caps both ways); 0 = kernel
    int dscp = -1;               ///< --dscp 0..63 as IP_TOS / IPV6_TCLASS (dscp << 2) on both ends; -1 = leave
    bool zerocopy = false;       ///< -Z MSG_ZEROCOPY on the TCP senders
    bool skip_rx_copy = false;   ///< --skip-rx-copy: TCP receivers read with MSG_TRUNC (no copy to user space)
    std::string bind_dev;        ///< --bind-dev SO_BINDTODEVICE on the client's data sockets
};

/// MSG_ZEROCOPY on one end's senders: the completions the error queue gave back.
struct ZeroCopyStats {
    bool requested = false;
    uint64_t sends = 0;          ///< send() calls made with MSG_ZEROCOPY
    uint64_t completions = 0;    ///< of them, completed (SO_EE_ORIGIN_ZEROCOPY notifications cover ranges)
    uint64_t copied = 0;         ///< of the completions, those where the kernel copied (SO_EE_CODE_ZEROCOPY_COPIED)
    bool fell_back = false;      ///< the kernel copied, so the sender went on with plain sends
    std::string note;            ///< why it fell back, or "" 
};

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

/// The knobs one end's data socket really had, read back (getsockopt) during the test.
struct SocketKnobs {
    std::string congestion;      ///< TCP_CONGESTION; "" for UDP
    bool nodelay = false;        ///< TCP_NODELAY
    uint32_t mss = 0;            ///< TCP_MAXSEG on the connected socket (the MSS in use); 0 for UDP
    int tos = -1;                ///< IP_TOS (IPv4) or IPV6_TCLASS (IPv6) byte; -1 when not read
    ZeroCopyStats zerocopy;
    bool skip_rx_copy = false;   ///< this end's receivers read with MSG_TRUNC
    std::string bind_dev;        ///< SO_BINDTODEVICE; "" = none
};

}  // namespace nm
