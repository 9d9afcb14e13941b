#pragma once
// What client and server share around an EndEngine: resolving and validating a TestSpec, making the UDP
// sockets, the control loop that runs while data flows, and merging both ends into a RunResult.
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/control/control_channel.hpp"
#include "core/engine/engine.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

inline constexpr uint32_t kMinUdpPayload = 18;     ///< the engine's header; a 64-byte Ethernet frame
inline constexpr uint32_t kMaxUdpPayload = 65507;  ///< 65535 - 8 (UDP) - 20 (IPv4)
/// The most a TCP sender writes at a time without -l (it writes whole send units up to this).
inline constexpr uint32_t kDefaultTcpWrite = 128 * 1024;
inline constexpr uint32_t kDefaultUdpPayload = 1472;
inline constexpr std::chrono::seconds kEndGrace{5};  ///< how long past its duration a run may take to end

inline constexpr double kMaxDurationS = 86400;                    ///< -t
inline constexpr double kMaxOmitS = 3600;                         ///< --omit
inline constexpr double kMaxStallTimeoutS = 3600;                 ///< --stall-timeout (a server may allow less)
inline constexpr double kMaxRateBps = 1e13;                       ///< -b: 10 Tbit/s
inline constexpr double kMaxRatePps = 1e10;                       ///< --pps
inline constexpr uint64_t kMaxBytes = 1'000'000'000'000'000'000;  ///< -n: 10^18 bytes
inline constexpr uint32_t kMaxTcpWrite = 64u << 20;               ///< -l for TCP
inline constexpr uint32_t kMinWindow = 2048;                      ///< -w
inline constexpr uint32_t kMaxWindow = 1u << 30;
/// -w times the sockets of one end (a TCP stream's socket, or a UDP stream's): what the buffers of one
/// test may ask of the kernel at most.
inline constexpr uint64_t kMaxWindowTotal = uint64_t{1} << 30;

/// The path a test's datagrams take: its MTU (IP_MTU of a connected socket) and the IP + UDP header bytes
/// of each datagram (28 for IPv4, 48 for IPv6).
struct UdpPath {
    uint32_t mtu = 0;
    uint32_t header_bytes = 28;
    std::string peer;  ///< for the message: "198.18.0.2"
};

/// The path of a connected socket `fd` (IP_MTU / IPV6_MTU); nullopt when the kernel does not say.
std::optional<UdpPath> udp_path_of(int fd);

/// Checks `spec` and fills the automatic values: streams (1 for TCP and paced UDP, one per core for
/// unlimited UDP), threads (one per core, at most one per stream), write size. Every number is bounded
/// (the k* constants above) before anything converts it, so no later cast can overflow. With `path`, a
/// GSO test whose datagrams do not fit one packet of the path is refused (the kernel would refuse every
/// send with EINVAL). Throws nm::Error (Usage) naming the field: payload outside 18..65507, duration <= 0
/// without a byte count, ...
TestSpec resolve_spec(const TestSpec& in, unsigned cores, const std::optional<UdpPath>& path = std::nullopt);

/// Cores as the engine counts them for its defaults (at least 1).
unsigned engine_cores();

/// The measured timeline of a spec starting `now`.
Timeline make_timeline(const TestSpec& spec, TimePoint now);

/// The part of an end's plan that follows from the (resolved) spec alone: sizes, rates per stream, byte
/// count per stream, stall timeout. `send_direction` labels what this end sends. Sockets come later.
EnginePlan plan_for(const TestSpec& spec, Direction send_direction, std::string iface);

/// Deals streams out to `groups` threads, round robin.
std::vector<std::vector<DataStream>> spread_streams(std::vector<DataStream> streams, uint32_t groups);

/// Who chose a test's socket buffer size (-w): this end's user, or the remote client. A remote client's
/// choice gets the plain SO_RCVBUF/SO_SNDBUF (capped by net.core.rmem_max/wmem_max), never the FORCE ones.
enum class WindowSource { Local, Remote };

/// `count` UDP sockets in one SO_REUSEPORT group bound to `local`'s address, on `preferred_port` when it
/// is free, else on a port the kernel picks; returns the sockets (one group each) and sets `port`.
std::vector<std::vector<DataStream>> make_udp_receivers(SocketAddress local, uint16_t preferred_port, uint32_t count, uint32_t window,
                                                        WindowSource source, uint16_t& port);

/// A UDP socket bound to `local`'s address (any port) and connected to `peer`, for stream `id`.
DataStream make_udp_sender(const SocketAddress& peer, const SocketAddress& local, uint32_t id, uint32_t window, WindowSource source);

/// How an end's control loop ended.
struct LoopOutcome {
    RunStatus status = RunStatus::Ok;
    std::string error;
    std::optional<EndReport> peer_report;  ///< the server's report, when it arrived during the loop
    bool channel_lost = false;
};

/// A hard end the server puts on a test (a byte count still running at serve --max-duration).
struct LoopLimit {
    TimePoint at = TimePoint::max();
    std::string why;  ///< the error text: which limit, and the flag that raises it
};

/// Runs while data flows: takes the window snapshots, tells the peer when this end's senders are done
/// ("sent"), stops UDP receivers once the peer's are, detects stalls, honours `stop`, and ends by the
/// duration + kEndGrace at the latest, or at `limit` (status Limited; the peer gets a "limit" error).
/// `peer_sends`: the peer has senders this end receives from.
LoopOutcome run_end_loop(ControlChannel& channel, EndEngine& engine, const TestSpec& spec, const Timeline& timeline, bool peer_sends,
                         std::stop_token stop, const LoopLimit& limit = {});

/// The most interval samples one list of a report carries. A longer test's samples are merged with their
/// neighbours, two, four, ... at a time (the interval doubles each time) until they fit, so a result stays
/// a bounded size whatever the test length.
inline constexpr size_t kMaxIntervalSamples = 3600;

/// Samples merged `factor` at a time: bytes and packets add up, the span is the merged samples', the
/// rates are over that span. Pure.
std::vector<IntervalSample> merge_interval_samples(const std::vector<IntervalSample>& samples, size_t factor);

/// Caps each interval list of `report` at kMaxIntervalSamples with merge_interval_samples().
void cap_intervals(EndReport& report);

/// A report travels as JSON text cut into parts of at most this many characters, one message each, so
/// every message stays within kMaxControlMessage (the text is ASCII; escaping at most doubles it).
inline constexpr size_t kReportPartChars = size_t{24} * 1024;
/// The most parts a report may come in (6 MiB of JSON; a capped report of 256 streams each way needs ~60).
inline constexpr size_t kMaxReportParts = 256;

/// Sends `report` as "result" {parts, data} and then "result_part" {part, data} messages.
void send_report(ControlChannel& channel, const EndReport& report, Deadline deadline);

/// The report whose "result" message is `first`, reading its remaining parts by `deadline`. Throws
/// nm::Error (Failed) on a missing, out-of-order or malformed part.
EndReport receive_report(ControlChannel& channel, const Json& first, Deadline deadline);

/// TCP: fills r.packets, packets_source and segments_per_packet from the receiving interface's rx_packets
/// over the window (bidir: both ends' interfaces), or estimates the packets from bytes / MSS, named so,
/// when no counters were read. UDP: the engine's datagrams (source "datagrams"). Needs r.streams, bytes,
/// tcp_retrans_bytes and receiver filled in; `pmtu` is the fallback for an MSS no stream reported, less
/// tcp_ip_header_bytes(family). Pure.
void count_packets(RunResult& r, const TestSpec& spec, const EndMeasurement& client, const EndMeasurement& server, uint32_t pmtu,
                   int family = AF_INET);

/// A request/response run's figures from both ends' counts: the client's transactions, latencies and
/// intervals, the server's count beside them, each end's engine CPU per transaction; the rate is over
/// the spec's duration (or the client's shorter measured window, when the run ended early). Pure.
RrStats combine_rr(const TestSpec& spec, const EndReport& client, const EndReport& server);

/// The socket knobs a run had, each from the end it concerns (see RunResult::socket). Pure.
SocketKnobs effective_knobs(const TestSpec& spec, const SocketKnobs& client, const SocketKnobs& server);

/// IP + TCP header bytes of a full TCP segment with timestamps: 20 + 32 over IPv4 (AF_INET), 40 + 32
/// over IPv6 (AF_INET6). The path MTU minus this is the MSS.
uint32_t tcp_ip_header_bytes(int family);

/// Merges the client's and the server's reports into what `run` prints. Pure; unit tested. `family`:
/// the data connections' address family (AF_INET or AF_INET6), for the segment count's header arithmetic.
RunResult combine_reports(const TestSpec& spec, const EndReport& client, const EndReport& server, RunStatus status, const std::string& error,
                          int family = AF_INET);

}  // namespace nm
