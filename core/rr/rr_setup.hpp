#pragma once
// What a request/response test needs besides its workers: the checks of its part of a TestSpec (called by
// resolve_spec, so client and server check a spec the same way) and the server's listeners for TCP_CRR.
#include <vector>

#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"
#include "core/workers/engine_plan.hpp"

namespace nm {

inline constexpr uint32_t kMaxRrBurst = 128;             ///< requests in flight per flow
inline constexpr uint32_t kMaxTcpRrMessage = 16u << 20;  ///< bytes of a TCP request or response
inline constexpr uint32_t kMaxUdpRrMessage = 65507;      ///< one UDP datagram (IPv4)

/// Checks a request/response spec and fills its defaults (one flow); a stream spec is left alone.
/// Throws nm::Error (Usage) naming the option: -R or --bidir, -n, -b, --pps, --gso, --gro, a payload mix,
/// --crr with -u, sizes outside 1..16 MiB (UDP 1..65507), a burst outside 1..128 (1 for --crr).
void resolve_rr(TestSpec& spec);

/// TCP_CRR's listeners: `count` non-blocking sockets of one SO_REUSEPORT group on `local`'s address and a
/// port the kernel picks (set in `port`), one group each (one per responder thread). Throws nm::Error.
std::vector<std::vector<DataStream>> make_crr_listeners(SocketAddress local, uint32_t count, uint16_t& port);

}  // namespace nm
