#include "core/traffic_session.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <thread>

#include "core/base/error.hpp"
#include "core/payload_mix.hpp"
#include "core/proc_stats.hpp"
#include "core/stream_layout.hpp"

namespace nm {
namespace {

std::string fmt(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

void set_rcvbuf(int fd, int bytes) {
    // SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN; without it the plain option still helps.
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    }
}

void set_sndbuf(int fd, int bytes) {
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0) {
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    }
}

}  // namespace

unsigned engine_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

TestSpec resolve_spec(const TestSpec& in, unsigned cores) {
    TestSpec s = in;
    const bool udp = s.protocol == Protocol::Udp;
    if (s.port == 0) throw usage_error("port: 0 is not a port; give 1..65535");
    if (!(s.duration_s > 0) && s.bytes == 0) throw usage_error("duration: " + fmt(s.duration_s) + " s; must be > 0 (or give a byte count with -n)");
    if (s.duration_s > 86400) throw usage_error("duration: " + fmt(s.duration_s) + " s; at most 86400");
    if (!(s.omit_s >= 0) || s.omit_s > 3600) throw usage_error("omit: " + fmt(s.omit_s) + " s; must be 0..3600");
    if (!(s.interval_s >= 0)) throw usage_error("interval: " + fmt(s.interval_s) + " s; must be >= 0");
    if (s.interval_s > 0 && s.interval_s < 0.01) throw usage_error("interval: " + fmt(s.interval_s) + " s; at least 0.01");
    if (!(s.rate_bps >= 0)) throw usage_error("rate: " + fmt(s.rate_bps) + " bit/s; must be >= 0");
    if (!(s.rate_pps >= 0)) throw usage_error("pps: " + fmt(s.rate_pps) + "; must be >= 0");
    if (s.rate_bps > 0 && s.rate_pps > 0) throw usage_error("rate: give -b or --pps, not both");
    if (!udp && s.rate_pps > 0) throw usage_error("pps: packets per second is a UDP rate; add -u");
    if (!udp && (s.udp_gso || s.udp_gro)) throw usage_error("gso/gro: UDP_SEGMENT and UDP_GRO are UDP options; add -u");
    if (!(s.stall_timeout_s > 0)) throw usage_error("stall timeout: must be > 0 s");
    if (s.streams > kMaxStreams) throw usage_error("streams: " + std::to_string(s.streams) + "; at most " + std::to_string(kMaxStreams));
    if (s.threads > kMaxStreams) throw usage_error("threads: " + std::to_string(s.threads) + "; at most " + std::to_string(kMaxStreams));
    if (!s.payload_mix.empty()) {
        if (!udp) throw usage_error("payload mix: a UDP option; add -u");
        if (s.udp_gso) throw usage_error("payload mix: datagrams of several sizes cannot go out as one GSO send; drop --gso");
        for (const auto& m : s.payload_mix) {
            if (m.payload_bytes < kMinUdpPayload || m.payload_bytes > kMaxUdpPayload) {
                throw usage_error("payload mix: UDP payload " + std::to_string(m.payload_bytes) + " bytes; must be " +
                                  std::to_string(kMinUdpPayload) + ".." + std::to_string(kMaxUdpPayload));
            }
        }
        payload_pattern(s.payload_mix);   // validates the weights
        s.write_size = max_payload(s.payload_mix);
    }
    if (udp) {
        if (s.write_size == 0) s.write_size = kDefaultUdpPayload;
        if (s.write_size < kMinUdpPayload || s.write_size > kMaxUdpPayload) {
            throw usage_error("length: UDP payload " + std::to_string(s.write_size) + " bytes; must be " +
                              std::to_string(kMinUdpPayload) + ".." + std::to_string(kMaxUdpPayload));
        }
    } else {
        if (s.write_size == 0) s.write_size = kDefaultTcpWrite;
        if (s.write_size > 64u << 20) throw usage_error("length: write size " + std::to_string(s.write_size) + " bytes; at most 64 MiB");
    }
    if (s.window > 0 && (s.window < 2048 || s.window > 1u << 30)) {
        throw usage_error("window: " + std::to_string(s.window) + " bytes; must be 2048..1 GiB");
    }
    if (s.streams == 0) s.streams = udp && s.rate_bps == 0 && s.rate_pps == 0 ? cores : 1;
    if (s.threads == 0) s.threads = cores;
    s.threads = std::min(s.threads, s.streams);
    if (s.bytes > 0) s.omit_s = 0;   // a byte count is all counted, as ttcp does
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
    plan.write_size = spec.write_size;
    plan.udp_gso = spec.udp_gso;
    plan.udp_gro = spec.udp_gro;
    plan.stream_count = StreamLayout::of(spec).total();
    plan.send_direction = send_direction;
    plan.iface = std::move(iface);
    plan.stall_timeout = std::chrono::milliseconds(static_cast<int64_t>(spec.stall_timeout_s * 1000));
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

std::vector<std::vector<DataStream>> make_udp_receivers(SocketAddress local, uint16_t preferred_port, uint32_t count,
                                                        uint32_t window, uint16_t& port) {
    std::vector<std::vector<DataStream>> groups;
    uint16_t want = preferred_port;
    for (uint32_t i = 0; i < count; ++i) {
        UniqueFd fd(::socket(local.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (!fd) throw system_error("socket (UDP)", errno);
        const int one = 1;
        ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        set_rcvbuf(fd.get(), window > 0 ? static_cast<int>(window) : 8 << 20);
        local.set_port(want);
        if (::bind(fd.get(), local.get(), local.len) != 0) {
            if (i == 0 && want != 0 && errno == EADDRINUSE) {
                want = 0;   // the preferred port is taken: let the kernel pick, the peer is told
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

DataStream make_udp_sender(const SocketAddress& peer, uint32_t id, uint32_t window) {
    UniqueFd fd(::socket(peer.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) throw system_error("socket (UDP)", errno);
    set_sndbuf(fd.get(), window > 0 ? static_cast<int>(window) : 4 << 20);
    if (::connect(fd.get(), peer.get(), peer.len) != 0) throw system_error("connect UDP to " + peer.host(), errno);
    return DataStream{std::move(fd), id};
}

LoopOutcome run_end_loop(ControlChannel& channel, EndEngine& engine, const TestSpec& spec, const Timeline& timeline,
                         bool peer_sends, std::stop_token stop) {
    LoopOutcome out;
    bool sent_told = !engine.has_senders();
    bool peer_sent = !peer_sends;
    TimePoint peer_sent_at = timeline.start;
    bool receivers_stopped = false;
    const TimePoint hard_deadline = timeline.window_end == TimePoint::max() ? TimePoint::max() : timeline.window_end + kEndGrace;
    const auto send = [&](Msg type) {
        try {
            channel.send(type, Json::object(), deadline_in(kNoticeTimeout));
        } catch (const Error&) {
            out.channel_lost = true;
        }
    };
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        engine.poll(now);
        if (!sent_told && engine.senders_done()) {
            send(Msg::Sent);
            sent_told = true;
        }
        // UDP receivers cannot see an end of stream: they stop (after draining) once the peer's senders are
        // done. TCP receivers end at EOF; the timer is only a safety net.
        if (peer_sent && !receivers_stopped &&
            (spec.protocol == Protocol::Udp || now - peer_sent_at > std::chrono::seconds(2))) {
            engine.stop_receivers();
            receivers_stopped = true;
        }
        if (engine.all_done() && (peer_sent || !engine.has_receivers())) break;
        if (stop.stop_requested()) {
            out.status = RunStatus::Interrupted;
            out.error = "interrupted";
            send(Msg::Abort);
            break;
        }
        if (engine.stalled(now)) {
            out.status = RunStatus::Stalled;
            out.error = "stalled: no data moved for " + fmt(spec.stall_timeout_s) + " s";
            send(Msg::Stalled);
            break;
        }
        if (now > hard_deadline) {
            out.status = RunStatus::PeerLost;
            out.error = "the test did not end within " + std::to_string(kEndGrace.count()) + " s of its duration";
            break;
        }
        if (out.peer_report) {
            // The peer is finished and will close the connection; only our own workers are left to end.
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        std::optional<Json> msg;
        try {
            msg = channel.receive(now + std::chrono::milliseconds(10));
        } catch (const Error& e) {
            out.status = RunStatus::PeerLost;
            out.error = std::string("peer lost: ") + e.what();
            out.channel_lost = true;
            break;
        }
        if (!msg) continue;
        const auto type = msg_type(*msg);
        if (type == Msg::Sent) {
            peer_sent = true;
            peer_sent_at = now;
        } else if (type == Msg::Result) {
            out.peer_report = msg->at("report").get<EndReport>();
            peer_sent = true;
        } else if (type == Msg::Stalled) {
            out.status = RunStatus::Stalled;
            out.error = "stalled: the peer saw no data move for " + fmt(spec.stall_timeout_s) + " s";
            break;
        } else if (type == Msg::Abort) {
            out.status = RunStatus::Interrupted;
            out.error = "the peer aborted the test";
            break;
        } else if (type == Msg::Error) {
            out.status = RunStatus::PeerLost;
            out.error = "peer: " + msg->value("message", std::string("error"));
            break;
        }
    }
    return out;
}

uint32_t tcp_ip_header_bytes(int family) {
    constexpr uint32_t kTcpWithTimestamps = 20 + 12;
    return (family == AF_INET6 ? 40 : 20) + kTcpWithTimestamps;
}

RunResult combine_reports(const TestSpec& spec, const EndReport& client, const EndReport& server, RunStatus status,
                          const std::string& error, int family) {
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

    // One direction: the receiver's counts, the sender's TCP_INFO and datagrams sent, matched by stream id.
    double throughput = 0;
    double duration = 0;
    std::vector<IntervalSample> intervals;
    const auto add_direction = [&](const EndReport& from, const EndReport& to) {
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
        duration = std::max(duration, d);
        uint64_t bytes = 0;
        for (auto& [id, m] : by_id) {
            if (m.loss) {
                m.loss->lost = m.loss->sent > m.loss->received ? m.loss->sent - m.loss->received : 0;
                m.loss->percent = m.loss->sent > 0 ? 100.0 * static_cast<double>(m.loss->lost) / static_cast<double>(m.loss->sent) : 0;
            }
            bytes += m.bytes;
            r.streams.push_back(m);
        }
        throughput += d > 0 ? static_cast<double>(bytes) * 8 / d : 0;
        r.io_calls += to.recv_calls;
        for (size_t k = 0; k < to.received_intervals.size(); ++k) {
            if (k >= intervals.size()) intervals.push_back(to.received_intervals[k]);
            else {
                intervals[k].bytes += to.received_intervals[k].bytes;
                intervals[k].packets += to.received_intervals[k].packets;
                intervals[k].throughput_bps += to.received_intervals[k].throughput_bps;
                intervals[k].packets_per_s += to.received_intervals[k].packets_per_s;
            }
        }
    };
    if (spec.direction == Direction::Bidir) {
        add_direction(client, server);
        add_direction(server, client);
    } else {
        add_direction(snd, rcv);
    }
    r.intervals = intervals;
    r.duration_s = duration;
    r.throughput_bps = throughput;
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
    if (spec.protocol == Protocol::Tcp) {
        // Segments are not counted by the application; estimate them from the MSS (path MTU - the IP and
        // TCP headers with timestamps: 52 bytes over IPv4, 72 over IPv6).
        const double headers = tcp_ip_header_bytes(family);
        const double mss = pmtu > 100 ? pmtu - headers : 1500.0 - headers;
        r.packets = static_cast<uint64_t>(std::ceil(static_cast<double>(r.bytes) / mss));
    }
    r.packets_per_s = duration > 0 ? static_cast<double>(r.packets) / duration : 0;
    r.calls_per_s = duration > 0 ? static_cast<double>(r.io_calls) / duration : 0;
    r.ms_per_call = r.io_calls > 0 ? duration * 1000 / static_cast<double>(r.io_calls) : 0;
    const double cpu_s = r.sender.cpu.user_s + r.sender.cpu.sys_s + r.receiver.cpu.user_s + r.receiver.cpu.sys_s;
    r.service_demand_us_per_kb = r.bytes > 0 ? cpu_s * 1e6 / (static_cast<double>(r.bytes) / 1024) : 0;
    const EndMeasurement& rx_end = spec.direction == Direction::Bidir ? server.measurement : r.receiver;
    if (!rx_end.iface.empty()) {
        r.receiver_rx_bytes = counter_delta(rx_end.counters_before.rx_bytes, rx_end.counters_after.rx_bytes);
        r.receiver_rx_packets = counter_delta(rx_end.counters_before.rx_packets, rx_end.counters_after.rx_packets);
    }
    return r;
}

}  // namespace nm
