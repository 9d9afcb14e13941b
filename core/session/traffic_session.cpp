#include "core/session/traffic_session.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/json_integer.hpp"
#include "core/host/proc_stats.hpp"
#include "core/host/socket_options.hpp"
#include "core/profile/host_profiler.hpp"
#include "core/rr/rr_setup.hpp"
#include "core/workers/payload_mix.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {
namespace {

std::string fmt(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// A UDP socket's buffer: its own default size, or the test's -w. SO_RCVBUFFORCE passes net.core.rmem_max
// with CAP_NET_ADMIN; it is used for the engine's own defaults and for a window this end's user chose, never
// for one a remote client chose (that would let any client pin kernel memory past rmem_max), which gets the
// plain option, capped by the kernel.
void set_udp_buffer(int fd, bool receive, uint32_t window, int default_bytes, WindowSource source) {
    const int bytes = window > 0 ? static_cast<int>(window) : default_bytes;
    const bool force = window == 0 || source == WindowSource::Local;
    const int forced = receive ? SO_RCVBUFFORCE : SO_SNDBUFFORCE;
    const int plain = receive ? SO_RCVBUF : SO_SNDBUF;
    if (!force || ::setsockopt(fd, SOL_SOCKET, forced, &bytes, sizeof bytes) != 0) ::setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof bytes);
}

}  // namespace

void count_packets(RunResult& r, const TestSpec& spec, const EndMeasurement& client, const EndMeasurement& server, uint32_t pmtu, int family) {
    if (spec.protocol == Protocol::Udp) {
        r.packets_source = "datagrams";
        return;
    }
    if (spec.pattern != TrafficPattern::Stream) {
        // Request/response: the messages the flows counted (both directions share the interfaces).
        r.packets_source = "messages";
        return;
    }
    const auto rx_packets = [](const EndMeasurement& m) {
        return m.iface.empty() ? uint64_t{0} : counter_delta(m.counters_before.rx_packets, m.counters_after.rx_packets);
    };
    const bool bidir = spec.direction == Direction::Bidir;
    const bool known = bidir ? !client.iface.empty() && !server.iface.empty() : !r.receiver.iface.empty();
    const uint64_t wire = bidir ? rx_packets(client) + rx_packets(server) : rx_packets(r.receiver);
    // The sender's TCP_INFO MSS (payload per full segment, options taken off); else the path MTU (or
    // 1500) less the IP and TCP headers with timestamps: 52 bytes over IPv4, 72 over IPv6.
    uint32_t mss = 0;
    for (const auto& s : r.streams) mss = std::max(mss, s.mss);
    const double headers = tcp_ip_header_bytes(family);
    const double segment = mss > 0 ? mss : pmtu > 100 ? pmtu - headers : 1500.0 - headers;
    const double segments = std::ceil(static_cast<double>(r.bytes + r.tcp_retrans_bytes) / segment);
    if (known && wire > 0) {
        r.packets = wire;
        r.packets_source = "interface";
        // Bidir interfaces count each direction's ACKs with the other's data: no ratio to show.
        r.segments_per_packet = bidir ? 0 : segments / static_cast<double>(wire);
    } else {
        r.packets = static_cast<uint64_t>(segments);
        r.packets_source = "estimate";
        r.segments_per_packet = 0;
    }
}

unsigned engine_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

std::optional<UdpPath> udp_path_of(int fd) {
    const SocketAddress peer = peer_address(fd);
    int mtu = 0;
    socklen_t len = sizeof mtu;
    const bool v4 = peer.family() == AF_INET || peer.host().find(':') == std::string::npos;  // v4-mapped counts as IPv4
    const int rc = peer.family() == AF_INET ? ::getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len) : ::getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len);
    if (rc != 0 || mtu <= 0) return std::nullopt;
    return UdpPath{static_cast<uint32_t>(mtu), v4 ? 28u : 48u, peer.host()};
}

TestSpec resolve_spec(const TestSpec& in, unsigned cores, const std::optional<UdpPath>& path) {
    TestSpec s = in;
    const bool udp = s.protocol == Protocol::Udp;
    // Every double is checked with !(x within range), which NaN fails too.
    if (s.port == 0) throw usage_error("port: 0 is not a port; give 1..65535");
    if (!(s.duration_s >= 0) || s.duration_s > kMaxDurationS) {
        throw usage_error("duration: " + fmt(s.duration_s) + " s; must be 0.." + fmt(kMaxDurationS));
    }
    if (s.bytes > kMaxBytes) throw usage_error("bytes: " + std::to_string(s.bytes) + "; at most " + std::to_string(kMaxBytes));
    if (!(s.duration_s > 0) && s.bytes == 0) throw usage_error("duration: " + fmt(s.duration_s) + " s; must be > 0 (or give a byte count with -n)");
    if (!(s.omit_s >= 0 && s.omit_s <= kMaxOmitS)) throw usage_error("omit: " + fmt(s.omit_s) + " s; must be 0.." + fmt(kMaxOmitS));
    if (!(s.interval_s >= 0 && s.interval_s <= kMaxDurationS)) {
        throw usage_error("interval: " + fmt(s.interval_s) + " s; must be 0 (none) or 0.01.." + fmt(kMaxDurationS));
    }
    if (s.interval_s > 0 && s.interval_s < 0.01) throw usage_error("interval: " + fmt(s.interval_s) + " s; at least 0.01");
    if (!(s.rate_bps >= 0 && s.rate_bps <= kMaxRateBps)) throw usage_error("rate: " + fmt(s.rate_bps) + " bit/s; must be 0.." + fmt(kMaxRateBps));
    if (!(s.rate_pps >= 0 && s.rate_pps <= kMaxRatePps)) throw usage_error("pps: " + fmt(s.rate_pps) + "; must be 0.." + fmt(kMaxRatePps));
    if (s.rate_bps > 0 && s.rate_pps > 0) throw usage_error("rate: give -b or --pps, not both");
    if (!udp && s.rate_pps > 0) throw usage_error("pps: packets per second is a UDP rate; add -u");
    if (!udp && (s.udp_gso || s.udp_gro)) throw usage_error("gso/gro: UDP_SEGMENT and UDP_GRO are UDP options; add -u");
    if (!(s.stall_timeout_s > 0 && s.stall_timeout_s <= kMaxStallTimeoutS)) {
        throw usage_error("stall timeout: " + fmt(s.stall_timeout_s) + " s; must be > 0 and at most " + fmt(kMaxStallTimeoutS));
    }
    if (s.profile) profile::check_profile_hz(s.profile_hz);
    if (s.streams > kMaxStreams) throw usage_error("streams: " + std::to_string(s.streams) + "; at most " + std::to_string(kMaxStreams));
    if (s.threads > kMaxStreams) throw usage_error("threads: " + std::to_string(s.threads) + "; at most " + std::to_string(kMaxStreams));
    if (!s.payload_mix.empty()) {
        if (!udp) throw usage_error("payload mix: a UDP option; add -u");
        if (s.udp_gso) throw usage_error("payload mix: datagrams of several sizes cannot go out as one GSO send; drop --gso");
        check_payload_mix(s.payload_mix);
        for (const auto& m : s.payload_mix) {
            if (m.payload_bytes < kMinUdpPayload || m.payload_bytes > kMaxUdpPayload) {
                throw usage_error("payload mix: UDP payload " + std::to_string(m.payload_bytes) + " bytes; must be " +
                                  std::to_string(kMinUdpPayload) + ".." + std::to_string(kMaxUdpPayload));
            }
        }
        s.write_size = max_payload(s.payload_mix);
    }
    if (udp) {
        if (s.write_size == 0) s.write_size = kDefaultUdpPayload;
        if (s.write_size < kMinUdpPayload || s.write_size > kMaxUdpPayload) {
            throw usage_error("length: UDP payload " + std::to_string(s.write_size) + " bytes; must be " + std::to_string(kMinUdpPayload) + ".." +
                              std::to_string(kMaxUdpPayload));
        }
    } else {
        if (s.write_size > kMaxTcpWrite) throw usage_error("length: write size " + std::to_string(s.write_size) + " bytes; at most 64 MiB");
    }
    if (s.window > 0 && (s.window < kMinWindow || s.window > kMaxWindow)) {
        throw usage_error("window: " + std::to_string(s.window) + " bytes; must be 2048..1 GiB");
    }
    resolve_rr(s);
    validate_socket_options(s);
    if (s.streams == 0) s.streams = udp && s.rate_bps == 0 && s.rate_pps == 0 ? cores : 1;
    s.streams = std::min(s.streams, kMaxStreams);  // cores beyond 256
    if (s.threads == 0) s.threads = cores;
    s.threads = std::min(s.threads, s.streams);
    const uint64_t sockets = s.direction == Direction::Bidir ? 2ull * s.streams : s.streams;
    if (s.window > 0 && s.window * sockets > kMaxWindowTotal) {
        throw usage_error("window: " + std::to_string(s.window) + " bytes on each of " + std::to_string(sockets) +
                          " sockets asks the kernel for more than 1 GiB of socket buffers; give a smaller -w or fewer streams");
    }
    if (udp && s.udp_gso && path && path->mtu > 0 && s.write_size + path->header_bytes > path->mtu) {
        throw usage_error("gso: a UDP payload of " + std::to_string(s.write_size) + " bytes plus " + std::to_string(path->header_bytes) +
                          " bytes of IP and UDP headers does not fit the path MTU " + std::to_string(path->mtu) +
                          (path->peer.empty() ? "" : " to " + path->peer) + "; with GSO every datagram must fit one packet: use a payload (-l) of " +
                          std::to_string(path->mtu > path->header_bytes ? path->mtu - path->header_bytes : 0) + " bytes or less, or no GSO");
    }
    if (s.bytes > 0) s.omit_s = 0;  // a byte count is all counted, as ttcp does
    return s;
}

Timeline make_timeline(const TestSpec& spec, TimePoint now) {
    Timeline t;
    t.start = now;
    t.window_start = now + std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(spec.omit_s));
    if (spec.bytes == 0) {
        t.window_end = t.window_start + std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(spec.duration_s));
    }
    t.interval = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(spec.interval_s));
    return t;
}

EnginePlan plan_for(const TestSpec& spec, Direction send_direction, std::string iface) {
    const uint32_t n = std::max<uint32_t>(1, spec.streams);
    EnginePlan plan;
    plan.protocol = spec.protocol;
    // TCP without -l: the sender writes whole send units of at most kDefaultTcpWrite (its buffer).
    plan.whole_units = spec.protocol == Protocol::Tcp && spec.write_size == 0;
    plan.write_size = plan.whole_units ? kDefaultTcpWrite : spec.write_size;
    plan.udp_gso = spec.udp_gso;
    plan.udp_gro = spec.udp_gro;
    plan.stream_count = StreamLayout::of(spec).total();
    plan.send_direction = send_direction;
    plan.iface = std::move(iface);
    plan.stall_timeout = std::chrono::milliseconds(static_cast<int64_t>(spec.stall_timeout_s * 1000));
    plan.pattern = spec.pattern;
    plan.request_size = spec.request_size;
    plan.response_size = spec.response_size;
    plan.rr_burst = spec.rr_burst;
    plan.socket = spec.socket;
    plan.end = send_direction == Direction::Forward ? End::Client : End::Server;
    if (spec.bytes > 0) plan.bytes_per_stream = std::max<uint64_t>(1, spec.bytes / n);
    if (spec.protocol == Protocol::Udp) {
        double mean_payload = spec.write_size;
        if (!spec.payload_mix.empty()) {
            plan.payload_pattern = payload_pattern(spec.payload_mix);
            double sum = 0;
            for (uint32_t p : plan.payload_pattern) sum += p;
            mean_payload = sum / static_cast<double>(plan.payload_pattern.size());
        }
        const double pps = spec.rate_pps > 0 ? spec.rate_pps : spec.rate_bps / (8.0 * mean_payload);
        plan.rate_per_stream = pps / n;
    } else {
        plan.rate_per_stream = spec.rate_bps / 8.0 / n;
    }
    return plan;
}

std::vector<std::vector<DataStream>> spread_streams(std::vector<DataStream> streams, uint32_t groups) {
    groups = std::max<uint32_t>(1, std::min<uint32_t>(groups, static_cast<uint32_t>(streams.size())));
    std::vector<std::vector<DataStream>> out(streams.empty() ? 0 : groups);
    for (size_t i = 0; i < streams.size(); ++i) out[i % groups].push_back(std::move(streams[i]));
    return out;
}

std::vector<std::vector<DataStream>> make_udp_receivers(SocketAddress local, uint16_t preferred_port, uint32_t count, uint32_t window,
                                                        WindowSource source, uint16_t& port) {
    std::vector<std::vector<DataStream>> groups;
    uint16_t want = preferred_port;
    for (uint32_t i = 0; i < count; ++i) {
        UniqueFd fd(::socket(local.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (!fd) throw system_error("socket (UDP)", errno);
        const int one = 1;
        ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        set_udp_buffer(fd.get(), true, window, 8 << 20, source);
        local.set_port(want);
        if (::bind(fd.get(), local.get(), local.len) != 0) {
            if (i == 0 && want != 0 && errno == EADDRINUSE) {
                want = 0;  // the preferred port is taken: let the kernel pick, the peer is told
                local.set_port(0);
                if (::bind(fd.get(), local.get(), local.len) != 0) throw system_error("bind UDP receiver", errno);
            } else {
                throw system_error("bind UDP receiver to port " + std::to_string(want), errno);
            }
        }
        if (i == 0) want = local_address(fd.get()).port();
        std::vector<DataStream> g;
        g.push_back(DataStream{std::move(fd), i});
        groups.push_back(std::move(g));
    }
    port = want;
    return groups;
}

DataStream make_udp_sender(const SocketAddress& peer, const SocketAddress& local, uint32_t id, uint32_t window, WindowSource source) {
    UniqueFd fd(::socket(peer.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) throw system_error("socket (UDP)", errno);
    set_udp_buffer(fd.get(), false, window, 4 << 20, source);
    // From the control connection's own address: the receiver counts only datagrams from there.
    SocketAddress from = local;
    from.set_port(0);
    if (::bind(fd.get(), from.get(), from.len) != 0) throw system_error("bind UDP sender to " + from.host(), errno);
    if (::connect(fd.get(), peer.get(), peer.len) != 0) throw system_error("connect UDP to " + peer.host(), errno);
    return DataStream{std::move(fd), id};
}

namespace {

// What the loop knows of the peer's senders: done ("sent", or its result), and since when.
struct PeerSenders {
    bool done = false;
    TimePoint done_at;
};

// Tells the peer `type` ("sent", "abort", "stalled"); a peer already gone marks the channel lost.
void notify_peer(ControlChannel& channel, Msg type, LoopOutcome& out) {
    try {
        channel.send(type, Json::object(), deadline_in(kNoticeTimeout));
    } catch (const Error&) {
        out.channel_lost = true;
    }
}

// The reasons this end ends the loop itself: a stop, a stall, the server's limit, the hard deadline. True
// when one holds at `now` (`out` says which; the peer is told where it needs to be).
bool ended_here(ControlChannel& channel, EndEngine& engine, const TestSpec& spec, TimePoint now, TimePoint hard_deadline, std::stop_token stop,
                const LoopLimit& limit, LoopOutcome& out) {
    if (stop.stop_requested()) {
        out.status = RunStatus::Interrupted;
        out.error = "interrupted";
        notify_peer(channel, Msg::Abort, out);
        return true;
    }
    if (engine.stalled(now)) {
        out.status = RunStatus::Stalled;
        out.error = "stalled: no data moved for " + fmt(spec.stall_timeout_s) + " s";
        notify_peer(channel, Msg::Stalled, out);
        return true;
    }
    if (now > limit.at) {
        out.status = RunStatus::Limited;
        out.error = limit.why;
        send_error(channel, WireError::Limit, limit.why);
        return true;
    }
    if (now > hard_deadline) {
        out.status = RunStatus::PeerLost;
        out.error = "the test did not end within " + std::to_string(kEndGrace.count()) + " s of its duration";
        return true;
    }
    return false;
}

// A message from the peer during the loop, received at `now`: its senders are done, its result, or the
// end of the test on its side. True when it ends the loop (`out` says how).
bool on_peer_message(ControlChannel& channel, const Json& msg, const TestSpec& spec, TimePoint now, PeerSenders& peer, LoopOutcome& out) {
    const auto type = msg_type(msg);
    if (type == Msg::Sent) {
        peer.done = true;
        peer.done_at = now;
    } else if (type == Msg::Result) {
        try {
            out.peer_report = receive_report(channel, msg, deadline_in(kResultTimeout));
        } catch (const Error& e) {
            out.status = RunStatus::PeerLost;
            out.error = std::string("peer lost: ") + e.what();
            out.channel_lost = true;
            return true;
        }
        peer.done = true;
    } else if (type == Msg::Stalled) {
        out.status = RunStatus::Stalled;
        out.error = "stalled: the peer saw no data move for " + fmt(spec.stall_timeout_s) + " s";
        return true;
    } else if (type == Msg::Abort) {
        out.status = RunStatus::Interrupted;
        out.error = "the peer aborted the test";
        return true;
    } else if (type == Msg::Error) {
        // The server ending a test at one of its limits is its own status, not a lost peer.
        out.status = wire_error_of(msg) == WireError::Limit ? RunStatus::Limited : RunStatus::PeerLost;
        const auto text = msg.find("message");
        out.error = "peer: " + (text != msg.end() && text->is_string() ? text->get<std::string>() : std::string("error"));
        return true;
    }
    return false;
}

}  // namespace

LoopOutcome run_end_loop(ControlChannel& channel, EndEngine& engine, const TestSpec& spec, const Timeline& timeline, bool peer_sends,
                         std::stop_token stop, const LoopLimit& limit) {
    LoopOutcome out;
    bool sent_told = !engine.has_senders();
    PeerSenders peer{.done = !peer_sends, .done_at = timeline.start};
    bool receivers_stopped = false;
    const TimePoint hard_deadline = timeline.window_end == TimePoint::max() ? TimePoint::max() : timeline.window_end + kEndGrace;
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        engine.poll(now);
        if (!sent_told && engine.senders_done()) {
            notify_peer(channel, Msg::Sent, out);
            sent_told = true;
        }
        // UDP receivers cannot see an end of stream, nor can CRR's listeners: they stop (after draining)
        // once the peer's senders are done. TCP receivers end at EOF; the timer is only a safety net.
        const bool no_eof = spec.protocol == Protocol::Udp || spec.pattern == TrafficPattern::Crr;
        if (peer.done && !receivers_stopped && (no_eof || now - peer.done_at > std::chrono::seconds(2))) {
            engine.stop_receivers();
            receivers_stopped = true;
        }
        if (engine.all_done() && (peer.done || !engine.has_receivers())) break;
        if (ended_here(channel, engine, spec, now, hard_deadline, stop, limit, out)) break;
        if (out.peer_report) {
            // The peer is finished and will close the connection; only our own workers are left to end.
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        std::optional<Json> msg;
        try {
            // Wake for a message, for the workers' state (every 10 ms), and at the window's edges exactly.
            msg = channel.receive(std::max(now, std::min(now + std::chrono::milliseconds(10), engine.next_due())));
        } catch (const Error& e) {
            out.status = RunStatus::PeerLost;
            out.error = std::string("peer lost: ") + e.what();
            out.channel_lost = true;
            break;
        }
        if (msg && on_peer_message(channel, *msg, spec, now, peer, out)) break;
    }
    return out;
}

uint32_t tcp_ip_header_bytes(int family) {
    constexpr uint32_t kTcpWithTimestamps = 20 + 12;
    return (family == AF_INET6 ? 40 : 20) + kTcpWithTimestamps;
}

std::vector<IntervalSample> merge_interval_samples(const std::vector<IntervalSample>& samples, size_t factor) {
    if (factor <= 1) return samples;
    std::vector<IntervalSample> out;
    for (size_t k = 0; k < samples.size(); k += factor) {
        IntervalSample m = samples[k];
        const size_t last = std::min(samples.size(), k + factor) - 1;
        for (size_t i = k + 1; i <= last; ++i) {
            m.bytes += samples[i].bytes;
            m.packets += samples[i].packets;
        }
        m.end_s = samples[last].end_s;
        const double span = m.end_s - m.start_s;
        m.throughput_bps = span > 0 ? static_cast<double>(m.bytes) * 8 / span : 0;
        m.packets_per_s = span > 0 ? static_cast<double>(m.packets) / span : 0;
        out.push_back(m);
    }
    return out;
}

namespace {

size_t merge_factor(size_t count) {
    size_t f = 1;
    while ((count + f - 1) / f > kMaxIntervalSamples) f *= 2;
    return f;
}

// The span one sample of a list covers (its first sample's; 0 for an empty list).
double sample_span(const std::vector<IntervalSample>& v) { return v.empty() ? 0 : v.front().end_s - v.front().start_s; }

}  // namespace

void cap_intervals(EndReport& report) {
    for (auto* list : {&report.sent_intervals, &report.received_intervals}) *list = merge_interval_samples(*list, merge_factor(list->size()));
}

void send_report(ControlChannel& channel, const EndReport& report, Deadline deadline) {
    const std::string text = Json(report).dump(-1, ' ', true);  // ASCII, so a part never splits a character
    const size_t parts = std::max<size_t>(1, (text.size() + kReportPartChars - 1) / kReportPartChars);
    if (parts > kMaxReportParts) throw Error(ErrorKind::Failed, "result: " + std::to_string(text.size()) + " bytes of JSON; too large to send");
    for (size_t i = 0; i < parts; ++i) {
        Json body{{"data", text.substr(i * kReportPartChars, kReportPartChars)}};
        if (i == 0) {
            body["parts"] = parts;
            channel.send(Msg::Result, std::move(body), deadline);
        } else {
            body["part"] = i;
            channel.send(Msg::ResultPart, std::move(body), deadline);
        }
    }
}

EndReport receive_report(ControlChannel& channel, const Json& first, Deadline deadline) {
    try {
        const auto parts = checked_integer_field<size_t>(first, "parts");
        if (parts < 1 || parts > kMaxReportParts) {
            throw Error(ErrorKind::Failed, "parts: " + std::to_string(parts) + "; must be 1.." + std::to_string(kMaxReportParts));
        }
        std::string text = first.at("data").get<std::string>();
        for (size_t i = 1; i < parts; ++i) {
            const Json part = channel.expect(deadline, "part " + std::to_string(i + 1) + " of " + std::to_string(parts) + " of the result");
            if (!is(part, Msg::ResultPart) || checked_integer_field<size_t>(part, "part") != i) {
                throw Error(ErrorKind::Failed, "expected part " + std::to_string(i) + " of the result");
            }
            text += part.at("data").get<std::string>();
        }
        return Json::parse(text).get<EndReport>();
    } catch (const Error& e) {
        throw Error(ErrorKind::Failed, std::string("the server's result: ") + e.what());
    } catch (const Json::exception& e) {
        throw Error(ErrorKind::Failed, std::string("the server's result: malformed: ") + e.what());
    }
}

namespace {

// What a test's stream directions add up to: the rate of their bytes, the longest window, the intervals.
struct DirectionTotals {
    double throughput = 0;
    double duration = 0;
    std::vector<IntervalSample> intervals;
};

// Adds one direction's samples to `intervals`. Both directions' samples are summed: they are brought to the
// coarser of the two spans first (one end may have merged its samples once more than the other,
// cap_intervals).
void add_intervals(std::vector<IntervalSample>& intervals, std::vector<IntervalSample> mine) {
    const double have = sample_span(intervals), got = sample_span(mine);
    if (have > 0 && got > 0 && got < have * 0.99) mine = merge_interval_samples(mine, static_cast<size_t>(std::lround(have / got)));
    if (have > 0 && got > 0 && have < got * 0.99) intervals = merge_interval_samples(intervals, static_cast<size_t>(std::lround(got / have)));
    for (size_t k = 0; k < mine.size(); ++k) {
        if (k >= intervals.size()) intervals.push_back(mine[k]);
        else {
            intervals[k].bytes += mine[k].bytes;
            intervals[k].packets += mine[k].packets;
            intervals[k].throughput_bps += mine[k].throughput_bps;
            intervals[k].packets_per_s += mine[k].packets_per_s;
        }
    }
}

// One direction: the receiver's counts, the sender's TCP_INFO and datagrams sent, matched by stream id.
void add_direction(RunResult& r, DirectionTotals& t, const EndReport& from, const EndReport& to) {
    std::map<uint32_t, StreamResult> by_id;
    for (const auto& s : from.sent) {
        StreamResult m = s;
        m.bytes = 0;
        m.packets = 0;
        m.throughput_bps = 0;
        if (m.loss) m.loss = LossStats{s.loss->sent, 0, 0, 0, 0, 0, 0};
        by_id[s.id] = m;
    }
    for (const auto& s : to.received) {
        auto& m = by_id[s.id];
        m.id = s.id;
        m.direction = s.direction;
        m.bytes = s.bytes;
        m.packets = s.packets;
        m.throughput_bps = s.throughput_bps;
        if (m.rtt_us == 0) m.rtt_us = s.rtt_us;
        if (m.pmtu == 0) m.pmtu = s.pmtu;
        if (s.loss) {
            const uint64_t sent = m.loss ? m.loss->sent : 0;
            m.loss = *s.loss;
            m.loss->sent = sent;
        }
    }
    const double d = to.measurement.duration_s;
    t.duration = std::max(t.duration, d);
    uint64_t bytes = 0;
    for (auto& [id, m] : by_id) {
        if (m.loss) {
            m.loss->lost = m.loss->sent > m.loss->received ? m.loss->sent - m.loss->received : 0;
            m.loss->percent = m.loss->sent > 0 ? 100.0 * static_cast<double>(m.loss->lost) / static_cast<double>(m.loss->sent) : 0;
        }
        bytes += m.bytes;
        r.streams.push_back(m);
    }
    t.throughput += d > 0 ? static_cast<double>(bytes) * 8 / d : 0;
    r.io_calls += to.recv_calls;
    add_intervals(t.intervals, to.received_intervals);
}

}  // namespace

RunResult combine_reports(const TestSpec& spec, const EndReport& client, const EndReport& server, RunStatus status, const std::string& error,
                          int family) {
    RunResult r;
    r.spec = spec;
    r.status = status;
    r.error = error;
    // The control loop's verdict first, then either end's own (a worker that failed).
    for (const EndReport* end : {&client, &server}) {
        if (r.status == RunStatus::Ok && end->status != RunStatus::Ok) {
            r.status = end->status;
            r.error = end->error;
        }
    }
    if (r.error.empty()) r.error = !client.error.empty() ? client.error : server.error;
    const bool reverse = spec.direction == Direction::Reverse;
    const EndReport& snd = reverse ? server : client;
    const EndReport& rcv = reverse ? client : server;
    r.sender = snd.measurement;
    r.receiver = rcv.measurement;
    // One host, one sampler (the server runs on the client's host and did not sample): the client's profile
    // is both ends'.
    if (server.profile_shared && client.measurement.profile && !server.measurement.profile) {
        EndMeasurement& client_end = reverse ? r.receiver : r.sender;
        EndMeasurement& server_end = reverse ? r.sender : r.receiver;
        client_end.profile->shared_with = reverse ? "sender" : "receiver";
        server_end.profile = client_end.profile;
        server_end.profile->shared_with = reverse ? "receiver" : "sender";
    }

    DirectionTotals totals;
    const bool rr = spec.pattern != TrafficPattern::Stream;
    if (rr) {
        // Request/response: the client's flows, each with the bytes and messages it sent and received.
        totals.duration = client.measurement.duration_s;
        r.streams = client.sent;
        for (const auto& s : r.streams) totals.throughput += totals.duration > 0 ? static_cast<double>(s.bytes) * 8 / totals.duration : 0;
        r.io_calls = client.send_calls + client.recv_calls + server.send_calls + server.recv_calls;
    } else if (spec.direction == Direction::Bidir) {
        add_direction(r, totals, client, server);
        add_direction(r, totals, server, client);
    } else {
        add_direction(r, totals, snd, rcv);
    }
    r.intervals = totals.intervals;
    const double duration = totals.duration;
    r.duration_s = duration;
    r.throughput_bps = totals.throughput;
    uint32_t pmtu = 0;
    for (const auto& s : r.streams) {
        r.bytes += s.bytes;
        r.packets += s.packets;
        r.tcp_retransmits += s.retransmits;
        r.tcp_retrans_bytes += s.retrans_bytes;
        pmtu = std::max(pmtu, s.pmtu);
        if (s.loss) {
            if (!r.loss) r.loss = LossStats{};
            *r.loss += *s.loss;
        }
    }
    r.calls_per_s = duration > 0 ? static_cast<double>(r.io_calls) / duration : 0;
    r.ms_per_call = r.io_calls > 0 ? duration * 1000 / static_cast<double>(r.io_calls) : 0;
    const double kb = static_cast<double>(r.bytes) / 1024;
    const double engine_cpu_s = r.sender.cpu.user_s + r.sender.cpu.sys_s + r.receiver.cpu.user_s + r.receiver.cpu.sys_s;
    r.engine_service_demand_us_per_kb = kb > 0 ? engine_cpu_s * 1e6 / kb : 0;
    // netperf's: each end's host, all of its CPUs, over that end's window.
    r.sender_service_demand_us_per_kb = kb > 0 ? r.sender.system.busy_cpu_s * 1e6 / kb : 0;
    r.receiver_service_demand_us_per_kb = kb > 0 ? r.receiver.system.busy_cpu_s * 1e6 / kb : 0;
    const EndMeasurement& rx_end = spec.direction == Direction::Bidir ? server.measurement : r.receiver;
    if (!rx_end.iface.empty()) {
        r.receiver_rx_bytes = counter_delta(rx_end.counters_before.rx_bytes, rx_end.counters_after.rx_bytes);
        r.receiver_rx_packets = counter_delta(rx_end.counters_before.rx_packets, rx_end.counters_after.rx_packets);
    }
    count_packets(r, spec, client.measurement, server.measurement, pmtu, family);
    r.packets_per_s = duration > 0 ? static_cast<double>(r.packets) / duration : 0;
    if (rr) r.rr = combine_rr(spec, client, server);
    r.socket = effective_knobs(spec, client.measurement.socket, server.measurement.socket);
    return r;
}

RrStats combine_rr(const TestSpec& spec, const EndReport& client, const EndReport& server) {
    RrStats rr;
    const RrEndCounts initiator = client.rr.value_or(RrEndCounts{});
    const RrEndCounts responder = server.rr.value_or(RrEndCounts{});
    rr.transactions = initiator.transactions;
    rr.responder_transactions = responder.transactions;
    rr.lost = initiator.lost;
    rr.late = initiator.late;
    rr.histogram = initiator.latency;
    rr.histogram.merge(responder.latency);  // empty: the responder times nothing
    rr.latency_us = summarize_latency(rr.histogram);
    rr.intervals = initiator.intervals;
    // The transactions are those whose request went out inside the window: their rate is over the window's
    // length, or over what the client measured when the run ended early.
    const double measured = client.measurement.duration_s;
    const double d = measured > 0 ? std::min(spec.duration_s, measured) : 0;
    rr.transactions_per_s = d > 0 ? static_cast<double>(rr.transactions) / d : 0;
    const auto per_transaction = [&](const ProcessCpu& cpu, uint64_t n) {
        return n > 0 ? (cpu.user_s + cpu.sys_s) * 1e6 / static_cast<double>(n) : 0;
    };
    rr.cpu_us_per_transaction_sender = per_transaction(client.measurement.cpu, rr.transactions);
    rr.cpu_us_per_transaction_receiver = per_transaction(server.measurement.cpu, responder.transactions);
    return rr;
}

SocketKnobs effective_knobs(const TestSpec& spec, const SocketKnobs& client, const SocketKnobs& server) {
    const bool reverse = spec.direction == Direction::Reverse;
    SocketKnobs k = reverse ? server : client;
    k.skip_rx_copy = (reverse ? client : server).skip_rx_copy;
    k.rx_spin = (reverse ? client : server).rx_spin;
    k.bind_dev = client.bind_dev;
    if (spec.direction == Direction::Bidir) {
        k.zerocopy += server.zerocopy;
        k.rx_spin += client.rx_spin;
    }
    return k;
}

}  // namespace nm
