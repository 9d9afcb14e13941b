#pragma once
// The socket knobs of a test on real sockets: checking them (ranges, which protocol each is for, the
// kernel's congestion control list), applying each on the ends it concerns, reading back what the kernel
// made of them, and MSG_ZEROCOPY's completion notifications. The values are core/traffic/socket_types.hpp.
//
// Which end applies what: congestion control and TCP_NODELAY on every end that sends (both for RR);
// TCP_MAXSEG on the client before connect (its SYN's MSS option caps the server's segments too); the TOS
// byte on both ends (data and ACKs); SO_BINDTODEVICE on the client; MSG_ZEROCOPY on TCP senders and
// MSG_TRUNC on TCP receivers (done by the workers).
#include <string>
#include <string_view>
#include <vector>

#include "core/traffic/socket_types.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

/// Checks a spec's knobs on their own (no kernel): MSS 88..65495, DSCP 0..63, TCP-only knobs with -u,
/// -Z only for TCP stream tests. Throws nm::Error (Usage) naming the flag.
void validate_socket_options(const TestSpec& spec);

/// The names in /proc/sys/net/ipv4/tcp_available_congestion_control's text. Pure.
std::vector<std::string> parse_congestion_list(std::string_view text);

/// Checks that `name` is a congestion control this namespace's kernel has loaded (in
/// tcp_available_congestion_control): nothing here or later loads a module. Throws nm::Error (Usage)
/// "congestion control (-C) \"x\": not available; the kernel offers: reno cubic (... modprobe tcp_x ...)".
void check_congestion(const std::string& name);

/// Where a socket is, for apply_tcp_options.
struct SocketRole {
    bool client = false;  ///< the client's socket, before connect()
    bool sends = false;   ///< this end sends data on it (RR: always)
};

/// Applies the spec's TCP knobs that concern `role` to `fd`. Throws nm::Error: Usage for a congestion
/// control the kernel refuses (with the available list) or a device that does not exist; Failed otherwise.
void apply_tcp_options(int fd, const SocketOptions& options, SocketRole role);

/// The same for a UDP socket: the TOS byte, and SO_BINDTODEVICE on the client's.
void apply_udp_options(int fd, const SocketOptions& options, bool client);

/// What the kernel says `fd` has: congestion control, TCP_NODELAY, TCP_MAXSEG (TCP only), the TOS byte,
/// the bound device. Best effort: what cannot be read keeps its default.
SocketKnobs read_socket_knobs(int fd, bool tcp);

/// TCP_MAXSEG of a connected TCP socket: the payload bytes of a full segment it sends (options such as
/// timestamps taken off). 0 when it cannot be read.
uint32_t tcp_mss(int fd);

/// Turns on SO_ZEROCOPY; false (with errno) when the kernel refuses it.
bool enable_zerocopy(int fd);

/// Reads every zerocopy notification queued on `fd`'s error queue (non-blocking) into `stats`: the sends
/// each covers, and whether the kernel copied. Returns the number of sends completed by this call.
uint64_t reap_zerocopy(int fd, ZeroCopyStats& stats);

}  // namespace nm
