#pragma once
// Value types of the traffic engine: what test to run, and what it measured. Produced by core, consumed by
// matrix, cli and bindings. Plain values; JSON in json_codec_traffic.cpp. Units are in the names:
// bits/s and packets/s in the data, human units only when printing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/device/device_types.hpp"
#include "core/profile/cpu_profile.hpp"
#include "core/traffic/cpu_types.hpp"
#include "core/traffic/rr_types.hpp"
#include "core/traffic/socket_types.hpp"

namespace nm {

enum class Protocol { Tcp, Udp };

/// Which way data flows, from the client's point of view.
enum class Direction {
    Forward,  ///< client sends, server receives (iperf's default)
    Reverse,  ///< server sends, client receives (-R)
    Bidir,    ///< both at once (--bidir)
};

/// The direction of the data coming the other way: Forward <-> Reverse (Bidir stays Bidir).
constexpr Direction opposite(Direction d) { return d == Direction::Forward ? Direction::Reverse : d == Direction::Reverse ? Direction::Forward : d; }

/// How the data moves, besides the protocol: the second half of a test kind's name ("tcp_rr").
enum class TrafficPattern {
    Stream,  ///< bulk data one way per stream (netperf's TCP_STREAM/UDP_STREAM)
    Rr,      ///< request/response on each flow's connection (TCP_RR, UDP_RR)
    Crr,     ///< request/response on a new TCP connection per transaction (TCP_CRR)
};

inline constexpr uint16_t kDefaultPort = 5301;       ///< not iperf3's 5201, so both can run side by side
inline constexpr uint32_t kDefaultProfileHz = 1000;  ///< perf record's default rate
/// The most streams per direction, and threads per direction, a test may have (resolve_spec, the sweep config).
inline constexpr uint32_t kMaxStreams = 256;

/// One share of a UDP payload-size mix: `weight` datagrams of `payload_bytes` in every sum(weights).
struct PayloadShare {
    uint32_t payload_bytes = 0;
    uint32_t weight = 0;
};

constexpr auto json_fields(const PayloadShare*) {
    using S = PayloadShare;
    return field_list(field("payload_bytes", &S::payload_bytes), field("weight", &S::weight));
}

/// Where a test goes: the server and the local end it leaves from. Not what is sent (TestSpec): a sweep
/// has one target for all its tests (test_spec_for in sweep_types.hpp puts it into each).
struct TestTarget {
    std::string host;              ///< server address (client side)
    uint16_t port = kDefaultPort;  ///< server control port
    std::string bind;              ///< local address to bind, "" = any
    std::string iface;             ///< local interface for counters; "" = found from the route
};

/// One test, as `nicmatrix run` takes it and as a sweep's `traffic` entry describes it: what to send, with
/// where to send it (its TestTarget part; the JSON keeps both in one object). A new field: its member here
/// and its row in NM_TEST_SPEC_FIELDS below.
struct TestSpec : TestTarget {
    Protocol protocol = Protocol::Tcp;
    Direction direction = Direction::Forward;
    uint32_t streams = 0;  ///< -P; 0 = auto: 1 for TCP and paced UDP, one per core for unlimited UDP
    uint32_t threads = 0;  ///< --threads; 0 = one per core, at most one per stream
    /// -l bytes per write (TCP) or UDP payload; 0 = default: UDP 1472; TCP whole send units up to 128 KiB,
    /// chosen by the sender once connected (core/workers/tcp_write_size.hpp; the run's socket.write_size says which)
    uint32_t write_size = 0;
    uint32_t window = 0;         ///< -w socket buffer bytes; 0 = kernel default (autotuning)
    double duration_s = 10;      ///< -t measured seconds (after omit)
    uint64_t bytes = 0;          ///< -n bytes to send (ttcp's buflen x nbuf); 0 = run for duration_s
    double omit_s = 0;           ///< --omit warm-up seconds, not counted
    double interval_s = 1;       ///< -i per-interval samples; 0 = none
    double rate_bps = 0;         ///< -b target rate, 0 = as fast as possible
    double rate_pps = 0;         ///< --pps target rate (UDP), 0 = as fast as possible
    bool udp_gso = false;        ///< UDP_SEGMENT on the sender
    bool udp_gro = false;        ///< UDP_GRO on the receiver
    double stall_timeout_s = 3;  ///< no data moving for this long ends the run with status Stalled
    /// UDP: datagrams of several payload sizes interleaved by weight (an IMIX); empty = every datagram is
    /// write_size bytes. When given, write_size is the largest share (resolve_spec sets it); no GSO.
    std::vector<PayloadShare> payload_mix;
    /// --profile: a kernel profile of the measured window on every CPU of each end's host (perf_event_open);
    /// the server profiles its own host unless it is the client's (one sampler then covers both ends).
    bool profile = false;
    uint32_t profile_hz = kDefaultProfileHz;  ///< --profile-hz: samples per second per CPU
    std::string profile_categories;           ///< --profile-categories: the category table's file; "" = the shipped one
    /// CPUs the engine's worker threads are pinned to (iperf3's -A): the client's on the client's host,
    /// the server's on the server's (the server pins its own when the spec tells it). Empty = not pinned.
    std::vector<uint32_t> client_cpus;
    std::vector<uint32_t> server_cpus;
    /// Stream, or a request/response test (--rr, --crr): each flow keeps `rr_burst` requests of
    /// request_size bytes in flight, each answered by response_size bytes. Forward only.
    TrafficPattern pattern = TrafficPattern::Stream;
    uint32_t request_size = 1;   ///< --rr-size REQ bytes
    uint32_t response_size = 1;  ///< --rr-size ,RESP bytes
    uint32_t rr_burst = 1;       ///< --rr-burst transactions in flight per flow
    SocketOptions socket;        ///< -C, -N, -M, --dscp, -Z, --skip-rx-copy, --bind-dev, --rx-spin
};

/// Whether, and in which entries, a sweep's traffic list takes a TestSpec field (a sweep axis).
enum class FieldAxis : uint8_t {
    None,        ///< not in a traffic entry (the sweep sets it for every test, or it is the target)
    Both,        ///< stream and request/response entries; always written
    Stream,      ///< stream entries only; always written in them
    Rr,          ///< request/response entries only; always written in them
    Knob,        ///< a socket knob: both kinds of entry, written only when set (entries read as before it existed)
    StreamKnob,  ///< a knob of stream tests (a request/response entry refuses it by hand, saying why)
};

/// The unit of a TestSpec field's value (the table's `unit`): what `nicmatrix run` scales a K/M/G suffix by.
/// The sweep config's tables (matrix/model/sweep_types.hpp) name their units with it too.
enum class FieldUnit : uint8_t {
    None,   ///< a count, a name, a switch
    Bytes,  ///< K/M/G are powers of 1024
    Seconds,
    Microseconds,
    BitsPerSecond,     ///< K/M/G are powers of 1000
    PacketsPerSecond,  ///< K/M/G are powers of 1000
    Hertz,
    Milliseconds,  ///< the sweep config's (no flag of `nicmatrix run` has it)
    Percent,       ///< the sweep config's
};

// TestSpec's fields, declared once (the machinery and what is derived: core/traffic/test_spec_fields.hpp).
// X(key, member, min, max, axis, column, unit, help, flag)
//   key     the JSON key (TestSpec's, and a traffic entry's when axis is not None)
//   member  the member of TestSpec it is
//   min,max the range a traffic entry accepts (numbers; 0, 0 = not range-checked here)
//   column  Python's DataFrame setting column of a sweep cell ("" = none)
//   unit    FieldUnit: what the number counts
//   help    what it is (the schema's description; a traffic entry's error says "expected <help>")
//   flag    its flag of `nicmatrix run`: cli_flag(names, value placeholder, --help text, kFlag* options, the
//           key of a field whose flag it needs), or kNoFlag (set by flags written by hand, or not by a flag).
//           The man page's line for it is `* {key}: text` in man/nicmatrix-run.1.md (without one, --help's text)
// The order is the JSON Schema's, the DataFrame's and `nicmatrix run --help`'s (cli/run_command.cpp adds the
// flags written by hand before the field it names).
#define NM_TEST_SPEC_FIELDS(X)                                                                                                                     \
    X(host, host, 0, 0, None, "", None, "the server's address or name (client side)",                                                              \
      cli_flag("-c,--client", "HOST", "Server address or name", kFlagRequired))                                                                    \
    X(port, port, 0, 0, None, "", None, "the server's control port",                                                                               \
      cli_flag("-p,--port", "PORT", "Server port (default 5301; 5201 with --peer-kind iperf3)"))                                                   \
    X(bind, bind, 0, 0, None, "", None, "the local address to connect from; \"\" = any",                                                           \
      cli_flag("-B,--bind", "ADDR", "Local address to connect from"))                                                                              \
    X(protocol, protocol, 0, 0, Both, "protocol", None, "\"tcp\" or \"udp\"", kNoFlag)                                                             \
    X(direction, direction, 0, 0, Both, "direction", None, "\"forward\", \"reverse\" or \"bidir\"", kNoFlag)                                       \
    X(streams, streams, 1, kMaxStreams, Both, "streams", None, "a positive integer (at most 256)",                                                 \
      cli_flag("-P,--parallel", "N", "Streams (default: 1; unlimited UDP: one per core, each with its own sender thread)"))                        \
    X(threads, threads, 0, kMaxStreams, Both, "threads", None, "an integer from 0 (one per core) to 256",                                          \
      cli_flag("--threads", "T", "Worker threads per direction (default: one per core, at most one per stream)"))                                  \
    X(write_size, write_size, 0, 16u << 20, Stream, "write_size", Bytes, "a size in bytes from 0 (default) to 16777216",                           \
      cli_flag("-l,--length", "SIZE",                                                                                                              \
               "TCP write size or UDP payload, K/M suffixes (default TCP: whole segments, at most 128K; UDP 1472; UDP 18..65507)",                 \
               kFlagScaled | kFlagPositive))                                                                                                       \
    X(window, window, 0, 1u << 30, Both, "window", Bytes, "a socket buffer size in bytes (0 = kernel default)",                                    \
      cli_flag("-w,--window", "SIZE", "Socket buffer size SO_SNDBUF/SO_RCVBUF, K/M suffixes (default: kernel autotuning)", kFlagScaled))           \
    X(duration_s, duration_s, 0, 0, None, "", Seconds, "measured seconds (after omit_s)",                                                          \
      cli_flag("-t,--time", "S", "Measured seconds (after --omit)", kFlagShowDefault))                                                             \
    X(bytes, bytes, 0, 0, Stream, "test_bytes", Bytes, "a byte count (0 = run for duration_s)",                                                    \
      cli_flag("-n,--bytes", "SIZE", "Bytes to send instead of a duration (ttcp's buflen x nbuf), K/M/G suffixes", kFlagScaled))                   \
    X(rate_bps, rate_bps, 0, 1e13, Stream, "target_rate_bps", BitsPerSecond, "a rate in bits/s (0 = unlimited)",                                   \
      cli_flag("-b,--bitrate", "RATE", "Target payload bits/s, K/M/G suffixes (powers of 1000); 0 = unlimited", kFlagScaled))                      \
    X(rate_pps, rate_pps, 0, 1e10, Stream, "target_rate_pps", PacketsPerSecond, "a rate in packets/s (0 = unlimited)",                             \
      cli_flag("--pps", "N", "Target UDP datagrams/s, K/M suffixes; 0 = unlimited", kFlagScaled))                                                  \
    X(udp_gso, udp_gso, 0, 0, Stream, "udp_gso", None, "true or false: UDP_SEGMENT on the sender",                                                 \
      cli_flag("--gso", "", "UDP: send with UDP_SEGMENT (GSO); a separate mode from plain sendmmsg"))                                              \
    X(udp_gro, udp_gro, 0, 0, Stream, "udp_gro", None, "true or false: UDP_GRO on the receiver",                                                   \
      cli_flag("--gro", "", "UDP: receive with UDP_GRO (datagrams are still counted one by one)"))                                                 \
    X(omit_s, omit_s, 0, 0, None, "", Seconds, "warm-up seconds, not counted",                                                                     \
      cli_flag("-O,--omit", "S", "Warm-up seconds, not counted", kFlagShowDefault))                                                                \
    X(interval_s, interval_s, 0, 0, None, "", Seconds, "seconds per interval sample; 0 = none",                                                    \
      cli_flag("-i,--interval", "S", "Seconds per interval sample; 0 = none. Text mode prints a line live as each ends (this end's counts)",       \
               kFlagShowDefault))                                                                                                                  \
    X(iface, iface, 0, 0, None, "", None, "the local interface for counters; \"\" = found from the route",                                         \
      cli_flag("--iface", "IFACE", "Local interface for counters (default: the one holding the local address)"))                                   \
    X(stall_timeout_s, stall_timeout_s, 0, 0, None, "", Seconds, "seconds without data that end the run as stalled",                               \
      cli_flag("--stall-timeout", "S", "Seconds without data that end the run as stalled", kFlagShowDefault))                                      \
    X(request_size, request_size, 1, 16u << 20, Rr, "", Bytes, "request bytes (UDP: at most 65507)", kNoFlag)                                      \
    X(response_size, response_size, 1, 16u << 20, Rr, "", Bytes, "response bytes (UDP: at most 65507)", kNoFlag)                                   \
    X(burst, rr_burst, 1, 128, Rr, "", None, "transactions in flight per flow, 1 to 128",                                                          \
      cli_flag("--rr-burst", "N", "--rr/--crr transactions in flight per flow (1..128)", kFlagShowDefault))                                        \
    X(congestion, socket.congestion, 0, 0, Knob, "", None, "TCP congestion control on the sending ends (-C)",                                      \
      cli_flag("-C,--congestion", "NAME",                                                                                                          \
               "TCP congestion control on the sending ends (one of /proc/sys/net/ipv4/tcp_available_congestion_control; "                          \
               "no module is loaded)"))                                                                                                            \
    X(nodelay, socket.nodelay, 0, 0, Knob, "", None, "TCP_NODELAY on the sending ends (-N)",                                                       \
      cli_flag("-N,--no-delay", "", "TCP_NODELAY on the sending ends"))                                                                            \
    X(mss, socket.mss, 88, 65495, Knob, "", Bytes, "a TCP MSS in bytes from 88 to 65495",                                                          \
      cli_flag("-M,--set-mss", "BYTES", "TCP_MAXSEG on the client before it connects (its SYN caps both directions), 88..65495"))                  \
    X(zerocopy, socket.zerocopy, 0, 0, StreamKnob, "", None, "MSG_ZEROCOPY on TCP stream senders (-Z)",                                            \
      cli_flag("-Z,--zerocopy", "", "TCP senders send with MSG_ZEROCOPY (completions counted; plain sends where the kernel copies anyway)"))       \
    X(skip_rx_copy, socket.skip_rx_copy, 0, 0, Knob, "", None, "TCP receivers read with MSG_TRUNC (--skip-rx-copy)",                               \
      cli_flag("--skip-rx-copy", "", "TCP receivers read with MSG_TRUNC: the data is not copied to user space"))                                   \
    X(bind_dev, socket.bind_dev, 0, 0, Knob, "", None, "SO_BINDTODEVICE on the client's data sockets (--bind-dev)",                                \
      cli_flag("--bind-dev", "IFACE", "SO_BINDTODEVICE: the client's data sockets use this interface only"))                                       \
    X(rx_spin_us, socket.rx_spin_us, 0, kMaxRxSpinUs, StreamKnob, "", Microseconds,                                                                \
      "microseconds a receiver polls an empty socket before sleeping, 0 to 10000",                                                                 \
      cli_flag("--rx-spin", "USEC",                                                                                                                \
               "Stream receivers that find every socket empty poll for up to USEC microseconds before sleeping "                                   \
               "(0..10000; 0 = sleep at once, the default): fewer wake-ups for the sending side's kernel to pay, "                                 \
               "more CPU on the receiving end, counted in its figures; spins and how many data ended are reported",                                \
               kFlagValueAsType))                                                                                                                  \
    X(profile, profile, 0, 0, None, "", None, "a kernel profile of the measured window on each end's host",                                        \
      cli_flag("--profile", "",                                                                                                                    \
               "Kernel profile of the measured window on every CPU of each end's host (perf_event_open; root or "                                  \
               "CAP_PERFMON): where the CPU went, by category (copy, checksum, gro, tcp_ip, ...), task and symbol"))                               \
    X(profile_hz, profile_hz, 0, 0, None, "", Hertz, "profile samples per second per CPU",                                                         \
      cli_flag("--profile-hz", "N", "--profile samples per second per CPU (1..10000)", kFlagShowDefault, "profile"))                               \
    X(profile_categories, profile_categories, 0, 0, None, "", None, "the profile category table's file; \"\" = the shipped one",                   \
      cli_flag("--profile-categories", "FILE", "--profile category table (JSON, as configs/profile-categories.json; default: the shipped one)", 0, \
               "profile"))

/// CPU used by one end's engine worker threads during the measured window (getrusage RUSAGE_THREAD of
/// each worker, measured window only): the engine's own CPU, not the host's.
struct ProcessCpu {
    double user_s = 0;
    double sys_s = 0;
    double util_pct = 0;  ///< (user + sys) / duration, percent of one core
};

constexpr auto json_fields(const ProcessCpu*) {
    using S = ProcessCpu;
    return field_list(field("user_s", &S::user_s), field("sys_s", &S::sys_s), field("util_pct", &S::util_pct));
}

/// System-wide CPU over the measured window, from /proc/stat (softirq is where received packets are
/// processed, and getrusage misses it). Percent of all cores.
struct SystemCpu {
    double busy_pct = 0;
    double user_pct = 0;
    double sys_pct = 0;
    double irq_pct = 0;
    double softirq_pct = 0;
    double steal_pct = 0;  ///< time a hypervisor ran something else while this guest wanted the CPU
    /// CPU-seconds the host was busy over the window, summed over its CPUs (busy ticks / USER_HZ): what
    /// netperf's per-end service demand divides by the bytes moved.
    double busy_cpu_s = 0;
    std::vector<PerCpu> per_cpu;      ///< every CPU over the same window, by CPU number
    int32_t busiest_cpu = -1;         ///< the CPU of per_cpu with the highest busy_pct; -1 = none read
    double busiest_cpu_busy_pct = 0;  ///< its busy_pct: one saturated core the aggregate hides
};

/// The codec adds "busiest_cpu_busy_pct", null with busiest_cpu.
constexpr auto json_fields_and_more(const SystemCpu*) {
    using S = SystemCpu;
    return field_list(field("busy_pct", &S::busy_pct), field("user_pct", &S::user_pct), field("sys_pct", &S::sys_pct), field("irq_pct", &S::irq_pct),
                      field("softirq_pct", &S::softirq_pct), field("steal_pct", &S::steal_pct), field("busy_cpu_s", &S::busy_cpu_s),
                      field("per_cpu", &S::per_cpu), field("busiest_cpu", &S::busiest_cpu, kFieldNullIfNegative));
}

/// NAPI and interrupt figures over the measured window: /proc/net/softnet_stat and /proc/interrupts.
struct NapiStats {
    uint64_t processed = 0;
    uint64_t dropped = 0;
    uint64_t time_squeeze = 0;
    uint64_t interrupts = 0;  ///< interrupts of the interface (0 for veth, which has none)
    uint64_t packets = 0;     ///< rx + tx packets of the interface over the window (stats64)
    double interrupts_per_s = 0;
    double interrupts_per_packet = 0;    ///< interrupts / packets: ~1 for an interrupt-per-packet driver, << 1 with NAPI
    double processed_per_s = 0;          ///< softnet processed per second
    double processed_per_interrupt = 0;  ///< packets NAPI polled per interrupt; 0 without interrupts
};

constexpr auto json_fields(const NapiStats*) {
    using S = NapiStats;
    return field_list(field("processed", &S::processed), field("dropped", &S::dropped), field("time_squeeze", &S::time_squeeze),
                      field("interrupts", &S::interrupts), field("packets", &S::packets), field("interrupts_per_s", &S::interrupts_per_s),
                      field("interrupts_per_packet", &S::interrupts_per_packet), field("processed_per_s", &S::processed_per_s),
                      field("processed_per_interrupt", &S::processed_per_interrupt));
}

/// Where an end's receive work ran over the measured window: which CPU ran the NET_RX softirq that
/// handed its sockets their packets, and from which receive queue's NAPI.
struct ReceivePath {
    /// NET_RX softirqs raised on each CPU over the window, by CPU number (/proc/softirqs deltas). The file is
    /// system-wide: every device and both directions are in it (on the lab, both ends' work).
    std::vector<uint64_t> net_rx_per_cpu;
    /// SO_INCOMING_CPU of this end's data sockets at the window's end: the CPU that processed the last packet
    /// each of them received (in softirq), ascending and unique; empty when no socket had received one.
    std::vector<uint32_t> incoming_cpus;
    /// SO_INCOMING_NAPI_ID of the same sockets: the NAPI instance (one per receive queue; 0, left out, when
    /// the device has none on that path), ascending and unique.
    std::vector<uint32_t> incoming_napi_ids;
};

constexpr auto json_fields(const ReceivePath*) {
    using S = ReceivePath;
    return field_list(field("net_rx_per_cpu", &S::net_rx_per_cpu), field("incoming_cpus", &S::incoming_cpus),
                      field("incoming_napi_ids", &S::incoming_napi_ids));
}

/// What one end measured about itself.
struct EndMeasurement {
    std::string iface;  ///< interface the counters are from; "" when unknown
    ProcessCpu cpu;
    SystemCpu system;
    NapiStats napi;
    LinkCounters counters_before;
    LinkCounters counters_after;
    double duration_s = 0;              ///< this end's measured window
    uint64_t io_calls = 0;              ///< send/recv system calls of this end's engine in the window
    std::optional<CpuProfile> profile;  ///< where this end's host spent its CPU (--profile); none when not asked
    /// The CPUs this end's engine worker threads were seen running on during the window (sched_getcpu
    /// at every turn of their loops), ascending; pinned or not.
    std::vector<uint32_t> placement;
    ReceivePath receive_path;  ///< where its receive softirq ran
    SocketKnobs socket;        ///< this end's data sockets as read back (and its zerocopy counts)
};

constexpr auto json_fields(const EndMeasurement*) {
    using S = EndMeasurement;
    return field_list(field("iface", &S::iface), field("cpu", &S::cpu), field("system", &S::system), field("napi", &S::napi),
                      field("counters_before", &S::counters_before), field("counters_after", &S::counters_after), field("duration_s", &S::duration_s),
                      field("io_calls", &S::io_calls), field("cpu_profile", &S::profile, kFieldOmitEmpty | kFieldIfTyped),
                      field("placement", &S::placement), field("receive_path", &S::receive_path), field("socket", &S::socket));
}

/// UDP delivery: sequence numbers on every datagram.
struct LossStats {
    uint64_t sent = 0;  ///< datagrams actually sent
    uint64_t received = 0;
    uint64_t lost = 0;
    uint64_t duplicates = 0;
    uint64_t reordered = 0;
    double percent = 0;    ///< lost / sent
    double jitter_ms = 0;  ///< RFC 3550
};

constexpr auto json_fields(const LossStats*) {
    using S = LossStats;
    return field_list(field("sent", &S::sent), field("received", &S::received), field("lost", &S::lost), field("percent", &S::percent),
                      field("reordered", &S::reordered), field("jitter_ms", &S::jitter_ms), field("duplicates", &S::duplicates));
}

/// Adds `b`'s counts to `a` (one stream seen by two sockets, or streams summed into a run): counts add,
/// jitter is the worse of the two, and percent is recomputed from the summed lost and sent.
inline LossStats& operator+=(LossStats& a, const LossStats& b) {
    a.sent += b.sent;
    a.received += b.received;
    a.lost += b.lost;
    a.duplicates += b.duplicates;
    a.reordered += b.reordered;
    a.jitter_ms = a.jitter_ms > b.jitter_ms ? a.jitter_ms : b.jitter_ms;
    a.percent = a.sent > 0 ? 100.0 * static_cast<double>(a.lost) / static_cast<double>(a.sent) : 0;
    return a;
}

struct StreamResult {
    uint32_t id = 0;
    Direction direction = Direction::Forward;
    uint64_t bytes = 0;
    double throughput_bps = 0;
    uint32_t retransmits = 0;       ///< TCP_INFO tcpi_total_retrans over the window
    uint64_t retrans_bytes = 0;     ///< TCP_INFO tcpi_bytes_retrans over the window (on the wire twice)
    uint32_t cwnd = 0;              ///< segments, at the end
    double rtt_us = 0;              ///< smoothed RTT at the end
    uint32_t pmtu = 0;              ///< path MTU at the end
    uint32_t mss = 0;               ///< TCP_INFO tcpi_snd_mss at the end (sender): payload bytes per full segment
    uint64_t packets = 0;           ///< UDP datagrams (receiver's count); TCP: 0
    std::optional<LossStats> loss;  ///< UDP only: this stream's delivery
};

constexpr auto json_fields(const StreamResult*) {
    using S = StreamResult;
    return field_list(field("id", &S::id), field("direction", &S::direction), field("bytes", &S::bytes), field("packets", &S::packets),
                      field("throughput_bps", &S::throughput_bps), field("retransmits", &S::retransmits), field("retrans_bytes", &S::retrans_bytes),
                      field("cwnd", &S::cwnd), field("rtt_us", &S::rtt_us), field("pmtu", &S::pmtu), field("mss", &S::mss),
                      field("loss", &S::loss, kFieldOmitEmpty));
}

/// What one end's workers moved in one interval of the window, read from their progress counters while
/// the test runs (`--json-stream`'s "progress" events). Only this end's own counts: what it sent and what it
/// received, each between two readings of the counters, the readings `start_s`..`end_s` seconds after the
/// window opened (an interval late by up to one poll of the session loop, about 10 ms). The run's
/// IntervalSamples, made after it ends from both ends' per-interval counts, are the figures of record.
struct LiveInterval {
    size_t index = 0;  ///< 0-based, in the window
    double start_s = 0;
    double end_s = 0;
    uint64_t sent_bytes = 0;      ///< payload this end's senders wrote in [start_s, end_s)
    uint64_t received_bytes = 0;  ///< payload this end's receivers read in [start_s, end_s)
};

struct IntervalSample {
    double start_s = 0;
    double end_s = 0;
    uint64_t bytes = 0;
    uint64_t packets = 0;
    double throughput_bps = 0;
    double packets_per_s = 0;
};

constexpr auto json_fields(const IntervalSample*) {
    using S = IntervalSample;
    return field_list(field("start_s", &S::start_s), field("end_s", &S::end_s), field("bytes", &S::bytes), field("packets", &S::packets),
                      field("throughput_bps", &S::throughput_bps), field("packets_per_s", &S::packets_per_s));
}

/// How a run ended.
enum class RunStatus {
    Ok,
    Stalled,      ///< data stopped flowing (a path that drops packets): ended early, not hung
    PeerLost,     ///< the other end vanished
    Interrupted,  ///< stopped by the user (SIGINT)
    Limited,      ///< ended by one of the server's limits (a byte count still running at serve --max-duration)
    Failed,       ///< a worker failed (a send or receive error, a socket option refused): see error
};

/// The machine just before a sweep's repetition: system-wide /proc/stat over a short window while none of
/// the sweep's own traffic runs (what other tenants, jobs or a hypervisor take). Percent of all CPUs.
struct BackgroundLoad {
    double busy_pct = 0;  ///< everything but idle and iowait (steal included)
    double steal_pct = 0;
    double window_s = 0;  ///< the last sample's length
    double waited_s = 0;  ///< how long the sweep waited for a quiet moment before this run
};

constexpr auto json_fields(const BackgroundLoad*) {
    using S = BackgroundLoad;
    return field_list(field("busy_pct", &S::busy_pct), field("steal_pct", &S::steal_pct), field("window_s", &S::window_s),
                      field("waited_s", &S::waited_s));
}

/// One data connection as a stock iperf3 server on the far end reported it (its results JSON).
struct Iperf3StreamFigures {
    uint32_t id = 0;                      ///< iperf3's stream id (1, 3, 4, 5, ...: iperf3 skips 2)
    uint32_t stream = 0;                  ///< the engine's stream id of the same connection (0, 1, ...)
    bool peer_sent = false;               ///< the peer sent on it (-R, --bidir's second half); else it received
    uint64_t bytes = 0;                   ///< what the peer sent or received on it over its window
    std::optional<uint64_t> retransmits;  ///< the peer's TCP retransmits on a stream it sent; none when not reported
    double duration_s = 0;                ///< the peer's window for the stream (its end_time - start_time)
};

constexpr auto json_fields(const Iperf3StreamFigures*) {
    using S = Iperf3StreamFigures;
    return field_list(field("id", &S::id), field("stream", &S::stream), field("peer_sent", &S::peer_sent), field("bytes", &S::bytes),
                      field("retransmits", &S::retransmits), field("duration_s", &S::duration_s));
}

/// What a stock `iperf3 -s` on the far end (--peer-kind iperf3) reported about one test, in its own terms:
/// figures from the peer's iperf3, not measured by nicmatrix. The peer's host CPU breakdown, softirq,
/// NIC counters and NAPI figures are not in it: iperf3 does not report them.
struct Iperf3PeerFigures {
    /// The server's version string ("iperf 3.12") as it reported it: only a server started with --json (-J)
    /// sends it (inside its server_output_json); "" = not reported.
    std::string version;
    std::string system_info;  ///< the server's uname line, with its version; "" = not reported
    /// iperf3's cpu_util of the server process over its test (getrusage over wall time): percent of one core.
    double cpu_total_pct = 0;
    double cpu_user_pct = 0;
    double cpu_system_pct = 0;
    uint64_t bytes_received = 0;  ///< summed over the streams the peer received
    uint64_t bytes_sent = 0;      ///< summed over the streams the peer sent
    /// The peer's window: the longest stream's end_time - start_time, from its omit's end (omit_s) to
    /// the TEST_END it was sent after the local window closed.
    double duration_s = 0;
    double received_bps = 0;              ///< bytes_received * 8 / duration_s
    double sent_bps = 0;                  ///< bytes_sent * 8 / duration_s
    std::optional<uint64_t> retransmits;  ///< summed over the streams the peer sent, when it reports them
    std::string congestion;               ///< the congestion control its sockets used ("" = not reported)
    uint32_t omit_s = 0;                  ///< the warm-up the peer was told (whole seconds: iperf3 takes no less)
    uint32_t time_s = 0;                  ///< the test length the peer was told (whole seconds; its own timer is time + omit + 5)
    std::vector<Iperf3StreamFigures> streams;
    /// The run's own figures that come from the peer's report rather than this end's engine: "tcp.retransmits"
    /// and "streams[].retransmits" when the peer sent. Everything else of the run is this end's.
    std::vector<std::string> figures_from_peer;
};

/// The codec adds "kind": "iperf3" (written, not read).
constexpr auto json_fields_and_more(const Iperf3PeerFigures*) {
    using S = Iperf3PeerFigures;
    return field_list(
        field("version", &S::version, kFieldNullIfEmpty), field("system_info", &S::system_info, kFieldNullIfEmpty),
        field_group("cpu", field("total_pct", &S::cpu_total_pct), field("user_pct", &S::cpu_user_pct), field("system_pct", &S::cpu_system_pct)),
        field("bytes_received", &S::bytes_received), field("bytes_sent", &S::bytes_sent), field("duration_s", &S::duration_s),
        field("received_bps", &S::received_bps), field("sent_bps", &S::sent_bps), field("retransmits", &S::retransmits),
        field("congestion", &S::congestion, kFieldNullIfEmpty), field_group("told", field("omit_s", &S::omit_s), field("time_s", &S::time_s)),
        field("streams", &S::streams), field("figures_from_peer", &S::figures_from_peer));
}

/// Everything one run measured, both ends. Counts are from the receiving application's view.
struct RunResult {
    TestSpec spec;
    RunStatus status = RunStatus::Ok;
    std::string error;          ///< why, when status is not Ok
    double throughput_bps = 0;  ///< payload bits/s received (bidir: both directions summed)
    /// Per second: UDP datagrams the engine received; TCP packets the receiving interface received
    /// (rx_packets over the window; see packets_source).
    double packets_per_s = 0;
    /// Where `packets` and packets_per_s come from: "datagrams" (UDP, the engine's count), "interface"
    /// (TCP, the receiving interface's rx_packets delta; bidir: both ends' interfaces summed, which
    /// includes each direction's ACKs), "estimate" (TCP without readable counters: bytes / (path MTU - 52)).
    std::string packets_source;
    /// TCP: payload segments (bytes + retransmitted bytes over the MSS) per packet the receiving interface
    /// counted: >1 where GRO/TSO hand the interface counters aggregates (veth passes TSO super-packets
    /// whole). 0 when not known (UDP, bidir, no counters).
    double segments_per_packet = 0;
    uint64_t bytes = 0;
    uint64_t packets = 0;
    double duration_s = 0;  ///< the measured window
    std::vector<StreamResult> streams;
    std::optional<LossStats> loss;  ///< UDP only
    uint32_t tcp_retransmits = 0;
    uint64_t tcp_retrans_bytes = 0;  ///< bytes sent again (TCP_INFO); part of what the interfaces count
    EndMeasurement sender;           ///< bidir: the client
    EndMeasurement receiver;         ///< bidir: the server
    uint64_t io_calls = 0;           ///< ttcp's figures, on the receiver
    double calls_per_s = 0;
    double ms_per_call = 0;
    /// The engines' own CPU (both ends' worker threads, rusage) in µs per KB (1024 bytes) moved. Not
    /// netperf's figure: see sender/receiver_service_demand_us_per_kb. Old files call it
    /// "service_demand_us_per_kb".
    double engine_service_demand_us_per_kb = 0;
    /// netperf's per-end service demand: that host's system-wide busy CPU time over its window (all CPUs,
    /// SystemCpu::busy_cpu_s) in µs per KB moved. On the lab both ends are one host: each counts both.
    double sender_service_demand_us_per_kb = 0;
    double receiver_service_demand_us_per_kb = 0;
    std::vector<IntervalSample> intervals;
    /// The cross-check of the engine's counts against the receiving interface's stats64 over the window.
    /// Bidir: the server's interface. Zero when the interface is unknown.
    uint64_t receiver_rx_bytes = 0;    ///< rx_bytes delta of the receiving interface
    uint64_t receiver_rx_packets = 0;  ///< rx_packets delta of the receiving interface
    std::optional<RrStats> rr;         ///< request/response tests only
    /// The effective socket knobs, each from the end it concerns: congestion, nodelay, mss, tos and
    /// zerocopy from the sender (RR: the client), skip_rx_copy and rx_spin from the receiver (bidir: both
    /// ends' receivers), bind_dev from the client. Both ends' own read-backs are sender.socket and receiver.socket.
    SocketKnobs socket;
    /// Set by a sweep, not by `nicmatrix run`: when the run began (UTC ISO 8601, milliseconds), the
    /// machine's load sampled just before it, and whether that load stayed above the sweep's thresholds
    /// (the run was measured under interference).
    std::string started;
    std::optional<BackgroundLoad> background;
    bool disturbed = false;
    /// Set when the far end was a stock `iperf3 -s` (--peer-kind iperf3): what it reported. The far end's
    /// EndMeasurement (receiver, or sender with -R) is then not measured: the results file writes it as null.
    std::optional<Iperf3PeerFigures> iperf3_peer;
    /// Set by a sweep on the first run after a cell's change: what the ends' links did (none otherwise).
    std::optional<ChangeLink> link;
};

/// What one end of a test reports about itself (the server sends this to the client on the control
/// channel; the client merges both into a RunResult). Counts are over this end's measured window.
struct EndReport {
    RunStatus status = RunStatus::Ok;
    std::string error;
    EndMeasurement measurement;
    uint64_t sent_bytes = 0;
    uint64_t sent_packets = 0;  ///< UDP datagrams sent inside the window
    uint64_t received_bytes = 0;
    uint64_t received_packets = 0;  ///< UDP datagrams received that were sent inside the window
    uint64_t send_calls = 0;
    uint64_t recv_calls = 0;
    std::vector<StreamResult> sent;      ///< streams this end sent (TCP_INFO; UDP: loss.sent)
    std::vector<StreamResult> received;  ///< streams this end received (UDP: loss without `sent`)
    std::vector<IntervalSample> sent_intervals;
    std::vector<IntervalSample> received_intervals;
    /// The engine's worker threads by kernel thread id: who sent and who received (a profile of the host
    /// both ends share sorts samples by them).
    std::vector<int32_t> send_tids;
    std::vector<int32_t> recv_tids;
    /// The server did not profile because it runs on the client's host (the client's sampler covers it).
    bool profile_shared = false;
    std::optional<RrEndCounts> rr;  ///< request/response tests only
};

constexpr auto json_fields(const EndReport*) {
    using S = EndReport;
    return field_list(field("status", &S::status), field("error", &S::error), field("measurement", &S::measurement),
                      field("sent_bytes", &S::sent_bytes), field("sent_packets", &S::sent_packets), field("received_bytes", &S::received_bytes),
                      field("received_packets", &S::received_packets), field("send_calls", &S::send_calls), field("recv_calls", &S::recv_calls),
                      field("sent", &S::sent), field("received", &S::received), field("sent_intervals", &S::sent_intervals),
                      field("received_intervals", &S::received_intervals),
                      field_group("threads", field("send", &S::send_tids), field("recv", &S::recv_tids)), field("profile_shared", &S::profile_shared),
                      field("rr", &S::rr));
}

}  // namespace nm
