#pragma once
// What client and server share around an EndEngine: resolving and validating a TestSpec, making the UDP
// sockets, the control loop that runs while data flows, and merging both ends into a RunResult.
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/base/traffic_types.hpp"
#include "core/control_channel.hpp"
#include "core/engine.hpp"
#include "core/net.hpp"

namespace nm {

inline constexpr uint32_t kMaxStreams = 256;
inline constexpr uint32_t kMinUdpPayload = 18;      ///< the engine's header; a 64-byte Ethernet frame
inline constexpr uint32_t kMaxUdpPayload = 65507;   ///< 65535 - 8 (UDP) - 20 (IPv4)
inline constexpr uint32_t kDefaultTcpWrite = 128 * 1024;
inline constexpr uint32_t kDefaultUdpPayload = 1472;
inline constexpr std::chrono::seconds kEndGrace{5};   ///< how long past its duration a run may take to end

/// Checks `spec` and fills the automatic values: streams (1 for TCP and paced UDP, one per core for
/// unlimited UDP), threads (one per core, at most one per stream), write size. Throws nm::Error (Usage)
/// naming the field: payload outside 18..65507, duration <= 0 without a byte count, ...
TestSpec resolve_spec(const TestSpec& spec, unsigned cores);

/// Cores as the engine counts them for its defaults (at least 1).
unsigned engine_cores();

/// The measured timeline of a spec starting `now`.
Timeline make_timeline(const TestSpec& spec, TimePoint now);

/// The part of an end's plan that follows from the (resolved) spec alone: sizes, rates per stream, byte
/// count per stream, stall timeout. `send_direction` labels what this end sends. Sockets come later.
EnginePlan plan_for(const TestSpec& spec, Direction send_direction, std::string iface);

/// Deals streams out to `groups` threads, round robin.
std::vector<std::vector<DataStream>> spread_streams(std::vector<DataStream> streams, uint32_t groups);

/// `count` UDP sockets in one SO_REUSEPORT group bound to `local`'s address, on `preferred_port` when it
/// is free, else on a port the kernel picks; returns the sockets (one group each) and sets `port`.
std::vector<std::vector<DataStream>> make_udp_receivers(SocketAddress local, uint16_t preferred_port, uint32_t count,
                                                        uint32_t window, uint16_t& port);

/// A UDP socket connected to `peer` for stream `id`.
DataStream make_udp_sender(const SocketAddress& peer, uint32_t id, uint32_t window);

/// How an end's control loop ended.
struct LoopOutcome {
    RunStatus status = RunStatus::Ok;
    std::string error;
    std::optional<EndReport> peer_report;   ///< the server's report, when it arrived during the loop
    bool channel_lost = false;
};

/// Runs while data flows: takes the window snapshots, tells the peer when this end's senders are done
/// ("sent"), stops UDP receivers once the peer's are, detects stalls, honours `stop`, and ends by the
/// duration + kEndGrace at the latest. `peer_sends`: the peer has senders this end receives from.
LoopOutcome run_end_loop(ControlChannel& channel, EndEngine& engine, const TestSpec& spec, const Timeline& timeline,
                         bool peer_sends, std::stop_token stop);

/// IP + TCP header bytes of a full TCP segment with timestamps: 20 + 32 over IPv4 (AF_INET), 40 + 32
/// over IPv6 (AF_INET6). The path MTU minus this is the MSS.
uint32_t tcp_ip_header_bytes(int family);

/// Merges the client's and the server's reports into what `run` prints. Pure; unit tested. `family`:
/// the data connections' address family (AF_INET or AF_INET6), for the segment count's header arithmetic.
RunResult combine_reports(const TestSpec& spec, const EndReport& client, const EndReport& server, RunStatus status,
                          const std::string& error, int family = AF_INET);

}  // namespace nm
