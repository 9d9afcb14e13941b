// `nicmatrix serve` and `nicmatrix run`: flags in, a TrafficServer / TrafficClient built, results printed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "core/base/dscp.hpp"
#include "core/base/error.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/profile_codec.hpp"
#include "core/base/rfc2544_codec.hpp"
#include "core/base/rr_codec.hpp"
#include "core/base/traffic_codec.hpp"
#include "core/profile/categories.hpp"
#include "core/host/cidr.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/iperf3/iperf3_client.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/rfc2544/rfc2544.hpp"
#include "core/workers/stream_layout.hpp"
#include "core/session/traffic_client.hpp"
#include "core/session/traffic_server.hpp"
#include "core/session/traffic_session.hpp"
#include "agent/agent_server.hpp"
#include "agent/key_file.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "matrix/report/frame_table.hpp"
#include "matrix/sweep_stream.hpp"

namespace nm::cli {
namespace {

// "100M" -> 100e6 (rates: powers of 1000) or 100 * 2^20 (sizes: powers of 1024).
double parse_scaled(const std::string& text, const std::string& flag, bool binary) {
    if (text.empty()) throw usage_error(flag + ": empty value");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw usage_error(flag + ": \"" + text + "\" is not a number");
    }
    const std::string suffix = text.substr(used);
    const double k = binary ? 1024.0 : 1000.0;
    double scale = 1;
    if (suffix == "k" || suffix == "K") scale = k;
    else if (suffix == "m" || suffix == "M") scale = k * k;
    else if (suffix == "g" || suffix == "G") scale = k * k * k;
    else if (!suffix.empty()) throw usage_error(flag + ": \"" + text + "\": unknown suffix (use K, M or G)");
    if (!(v >= 0) || !std::isfinite(v)) throw usage_error(flag + ": \"" + text + "\" must be >= 0");
    // Finite after scaling too: 1e308G is infinity (resolve_spec bounds what is left).
    if (!std::isfinite(v * scale)) throw usage_error(flag + ": \"" + text + "\" is too large");
    return v * scale;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string human_bytes(double b) {
    const char* units[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
    int u = 0;
    while (b >= 1024 * 0.995 && u < 4) {
        b /= 1024;
        ++u;
    }
    return fixed(b, b < 10 ? 2 : (b < 100 ? 1 : 0)) + " " + units[u];
}

std::string human_bits(double bps) {
    const char* units[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
    int u = 0;
    while (bps >= 1000 && u < 4) {
        bps /= 1000;
        ++u;
    }
    return fixed(bps, bps < 10 ? 2 : (bps < 100 ? 1 : 0)) + " " + units[u];
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    return s;
}

const char* arrow(Direction d) { return d == Direction::Reverse ? "<-" : "->"; }

std::string cpu_line(const char* role, const char* who, const EndMeasurement& m) {
    std::ostringstream o;
    o << "CPU " << role << " (" << who << (m.iface.empty() ? "" : ", " + m.iface) << "): user " << fixed(m.cpu.user_s, 2)
      << " s  sys " << fixed(m.cpu.sys_s, 2) << " s  util " << fixed(m.cpu.util_pct, 1) << "%  | system busy "
      << fixed(m.system.busy_pct, 1) << "%  usr " << fixed(m.system.user_pct, 1) << "%  sys " << fixed(m.system.sys_pct, 1)
      << "%  irq " << fixed(m.system.irq_pct, 1) << "%  softirq " << fixed(m.system.softirq_pct, 1) << "%  steal "
      << fixed(m.system.steal_pct, 1) << "%";
    if (m.system.busiest_cpu >= 0) {
        o << "  busiest CPU " << m.system.busiest_cpu << " " << fixed(m.system.busiest_cpu_busy_pct, 1) << "%";
    }
    if (!m.placement.empty()) o << "  | engine on CPU " << format_cpu_list(m.placement);
    return o.str();
}

// "copy 31.2%  tcp_ip 14.0%  ...": the categories in the table's order, the empty ones left out.
std::string category_line(const CpuProfile& p, const std::vector<std::string>& order) {
    std::ostringstream o;
    for (const auto& name : order) {
        const auto it = p.categories.find(name);
        if (it == p.categories.end() || it->second < 0.05) continue;
        o << "  " << name << ' ' << fixed(it->second, 1) << '%';
    }
    return o.str();
}

void print_profile(const char* role, const CpuProfile& p, std::ostream& o) {
    std::vector<std::string> order;
    for (const auto& c : profile::builtin_category_table().categories) order.push_back(c);
    for (const auto& [name, pct] : p.categories) {
        if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    }
    o << "Profile " << role << " (host " << p.host << ", " << p.samples << " samples at " << p.hz << " Hz on " << p.cpus << " CPUs over "
      << fixed(p.window_s, 2) << " s, " << p.lost << " lost):" << category_line(p, order) << '\n';
    o << "  top:";
    for (size_t i = 0; i < p.top.size() && i < 5; ++i) o << ' ' << p.top[i].symbol << ' ' << fixed(p.top[i].pct, 1) << "% (" << p.top[i].category << ')';
    o << '\n';
}

// On one host both ends carry the same profile: print it once.
void print_profiles(const RunResult& r, std::ostream& o) {
    if (r.sender.profile && r.receiver.profile && !r.sender.profile->shared_with.empty()) {
        print_profile("of both ends' host", *r.sender.profile, o);
    } else {
        if (r.sender.profile) print_profile("sender", *r.sender.profile, o);
        if (r.receiver.profile) print_profile("receiver", *r.receiver.profile, o);
    }
}

// The socket knobs the sender's socket had (and where they were asked for, what became of them).
void print_socket(const RunResult& r, std::ostream& o) {
    const SocketKnobs& k = r.socket;
    const SocketOptions& asked = r.spec.socket;
    const bool tcp = r.spec.protocol == Protocol::Tcp;
    std::vector<std::string> parts;
    if (tcp) {
        parts.push_back("congestion " + (k.congestion.empty() ? std::string("?") : k.congestion));
        parts.push_back("mss " + std::to_string(k.mss));
        parts.push_back(std::string("nodelay ") + (k.nodelay ? "on" : "off"));
        if (k.write_size > 0) {
            std::string w = "writes " + std::to_string(k.write_size) + " bytes";
            if (r.spec.write_size == 0 && k.mss > 0 && k.write_size % k.mss == 0) w += " (" + std::to_string(k.write_size / k.mss) + " x mss)";
            parts.push_back(w);
        }
    }
    if (k.tos >= 0) {
        const auto name = dscp_name(k.tos >> 2);
        char tos[8];
        std::snprintf(tos, sizeof tos, "0x%02x", static_cast<unsigned>(k.tos));
        parts.push_back(std::string("tos ") + tos + " (dscp " + std::to_string(k.tos >> 2) + (name ? " " + *name : std::string()) + ")");
    }
    if (!k.bind_dev.empty()) parts.push_back("bound to " + k.bind_dev);
    if (k.skip_rx_copy) parts.push_back("receiver MSG_TRUNC");
    o << "Socket (" << (r.spec.direction == Direction::Reverse ? "server" : "client") << "'s, read back):";
    for (size_t i = 0; i < parts.size(); ++i) o << (i == 0 ? " " : "  ") << parts[i];
    o << '\n';
    if (asked.rx_spin_us > 0) {
        const auto& sp = k.rx_spin;
        o << "Receiver spin (--rx-spin " << asked.rx_spin_us << " us, over the whole test): ";
        if (sp.us == 0) {
            o << "not applied by the receiving end (a build without --rx-spin?)\n";
        } else if (sp.spins == 0) {
            o << "the receivers never found their sockets empty\n";
        } else {
            char pct[16];
            std::snprintf(pct, sizeof pct, "%.1f", sp.spins ? 100.0 * static_cast<double>(sp.caught) / static_cast<double>(sp.spins) : 0.0);
            o << sp.spins << " spins on empty sockets, " << pct << "% ended by data within the spin (the rest slept)\n";
        }
    }
    if (asked.zerocopy) {
        const auto& z = k.zerocopy;
        o << "Zerocopy (MSG_ZEROCOPY): " << z.sends << " sends, " << z.completions << " completed, " << z.copied
          << " of them copied by the kernel" << (z.fell_back ? "; fell back to plain sends: " + z.note : std::string()) << '\n';
    }
}

// A request/response run, in the manner of netperf's TCP_RR table and neper's key=value lines.
void print_rr_result(const RunResult& r, std::ostream& o) {
    const RrStats rr = r.rr.value_or(RrStats{});
    const bool udp = r.spec.protocol == Protocol::Udp;
    const char* kind = r.spec.pattern == TrafficPattern::Crr ? "TCP_CRR" : udp ? "UDP_RR" : "TCP_RR";
    if (!rr.intervals.empty()) {
        o << "Intervals (client, by request time):\n";
        for (const auto& iv : rr.intervals) {
            o << "[SUM] " << pad(fixed(iv.start_s, 2), 6) << "-" << fixed(iv.end_s, 2) << " sec  " << pad(std::to_string(iv.transactions), 10)
              << " transactions  " << pad(fixed(iv.transactions_per_s, 1), 11) << " trans/s\n";
        }
    }
    o << kind << ": " << r.spec.streams << " flow(s) x " << r.spec.rr_burst << " in flight, request " << r.spec.request_size
      << " bytes, response " << r.spec.response_size << " bytes\n";
    o << "Request  Resp.    Elapsed  Trans.       Trans.\n"
      << "Size     Size     Time     Count        Rate\n"
      << "bytes    bytes    secs.                 per sec\n";
    o << std::left;
    o.width(9);
    o << r.spec.request_size;
    o.width(9);
    o << r.spec.response_size;
    o.width(9);
    o << fixed(r.duration_s, 2);
    o.width(13);
    o << rr.transactions << fixed(rr.transactions_per_s, 2) << '\n' << std::right;
    const auto& l = rr.latency_us;
    o << "latency_us: mean=" << fixed(l.mean, 2) << " p50=" << fixed(l.p50, 2) << " p90=" << fixed(l.p90, 2) << " p99=" << fixed(l.p99, 2)
      << " p99.9=" << fixed(l.p999, 2) << " max=" << fixed(l.max, 2) << " (request sent -> response received"
      << (r.spec.pattern == TrafficPattern::Crr ? ", from connect()" : "") << "; percentiles within 0.4%)\n";
    o << "transactions=" << rr.transactions << " (server counted " << rr.responder_transactions << ")";
    if (udp) o << " lost=" << rr.lost << " late=" << rr.late;
    o << '\n';
    o << "CPU per transaction (engine threads): client " << fixed(rr.cpu_us_per_transaction_sender, 2) << " us, server "
      << fixed(rr.cpu_us_per_transaction_receiver, 2) << " us\n";
    o << cpu_line("client  ", "initiator", r.sender) << '\n';
    o << cpu_line("server  ", "responder", r.receiver) << '\n';
    print_profiles(r, o);
    print_socket(r, o);
    if (r.status != RunStatus::Ok) o << "status: " << Json(r.status).get<std::string>() << ": " << r.error << '\n';
}

// One line per interval while a text-mode run is under way: this end's own counts, read from the engine's
// running counters as the interval ends (the receiver's intervals, the measured ones, come with the
// result). A request/response client's flows count the bytes they move both ways: the line shows the
// transactions those bytes make up. A part-interval the window ends in is left out when it is under a
// tenth of an interval (its bytes are in the result).
void print_live(const TestSpec& spec, const LiveInterval& i, std::ostream& o) {
    const bool rr = spec.pattern != TrafficPattern::Stream;
    if (i.index == 0) {
        o << (rr ? "Live (client's bytes moved / (request + response size), as each interval ends):\n"
                 : "Live (client's own counts, as each interval ends):\n");
    }
    const double secs = i.end_s - i.start_s;
    if (i.index > 0 && secs < spec.interval_s / 10) return;
    const auto rate = [&](uint64_t bytes) { return secs > 0 ? static_cast<double>(bytes) * 8 / secs : 0.0; };
    o << "[SUM] " << pad(fixed(i.start_s, 2), 6) << "-" << fixed(i.end_s, 2) << " sec  ";
    if (rr) {
        const uint64_t per = std::max<uint64_t>(uint64_t{spec.request_size} + spec.response_size, 1);
        const uint64_t transactions = (i.sent_bytes + i.received_bytes) / per;
        o << pad(std::to_string(transactions), 10) << " transactions  "
          << pad(fixed(secs > 0 ? static_cast<double>(transactions) / secs : 0, 1), 11) << " trans/s" << std::endl;
        return;
    }
    const StreamLayout layout = StreamLayout::of(spec);
    const bool both = layout.sends(End::Client) && layout.receives(End::Client);
    if (layout.sends(End::Client)) {
        o << pad(human_bytes(static_cast<double>(i.sent_bytes)), 12) << "  " << pad(human_bits(rate(i.sent_bytes)), 15) << "  sent";
    }
    if (layout.receives(End::Client)) {
        o << (both ? "  " : "") << pad(human_bytes(static_cast<double>(i.received_bytes)), 12) << "  " << pad(human_bits(rate(i.received_bytes)), 15)
          << "  received";
    }
    o << std::endl;   // flushed: the line is for now, not for when the run ends
}

// A run against a stock iperf3: this end's figures, then what the server reported of itself.
void print_iperf3_peer(const RunResult& r, std::ostream& o) {
    const auto& p = *r.iperf3_peer;
    const bool reverse = r.spec.direction == Direction::Reverse;
    o << (reverse ? cpu_line("receiver", "client", r.receiver) : cpu_line("sender  ", "client", r.sender)) << '\n';
    o << "Far end: " << (p.version.empty() ? "iperf3 (version not reported: start it with --json to have it)" : p.version)
      << "; its own figures over its " << fixed(p.duration_s, 2) << " s (told omit " << p.omit_s << " s, time " << p.time_s << " s):\n";
    if (p.bytes_received > 0 || p.bytes_sent == 0) {
        o << "  received " << human_bytes(static_cast<double>(p.bytes_received)) << " = " << human_bits(p.received_bps) << '\n';
    }
    if (p.bytes_sent > 0) {
        o << "  sent " << human_bytes(static_cast<double>(p.bytes_sent)) << " = " << human_bits(p.sent_bps)
          << (p.retransmits ? ", " + std::to_string(*p.retransmits) + " retransmits" : std::string()) << '\n';
    }
    o << "  CPU of its process: " << fixed(p.cpu_total_pct, 1) << "% of one core (user " << fixed(p.cpu_user_pct, 1) << "%, system "
      << fixed(p.cpu_system_pct, 1) << "%)" << (p.congestion.empty() ? std::string() : "; congestion " + p.congestion) << '\n';
    o << "  not measured there: host CPU, softirq, NIC and NAPI counters (iperf3 does not report them)\n";
    if (r.status != RunStatus::Ok) o << "status: " << Json(r.status).get<std::string>() << ": " << r.error << '\n';
}

void print_result(const RunResult& r, std::ostream& o) {
    if (r.spec.pattern != TrafficPattern::Stream) {
        print_rr_result(r, o);
        return;
    }
    const bool udp = r.spec.protocol == Protocol::Udp;
    const std::string span = "0.00-" + fixed(r.duration_s, 2) + " sec";
    if (!r.intervals.empty()) {
        o << (r.iperf3_peer && r.spec.direction == Direction::Forward ? "Intervals (this end's senders; the far end is a stock iperf3):\n"
                                                                       : "Intervals (receiver):\n");
        for (const auto& iv : r.intervals) {
            o << "[SUM] " << pad(fixed(iv.start_s, 2), 6) << "-" << fixed(iv.end_s, 2) << " sec  " << pad(human_bytes(static_cast<double>(iv.bytes)), 12)
              << "  " << pad(human_bits(iv.throughput_bps), 15);
            if (udp) o << "  " << pad(fixed(iv.packets_per_s, 0), 10) << " datagrams/s";
            o << '\n';
        }
    }
    if (udp) {
        o << "[ ID] Dir Interval           Transfer       Bitrate          Datagrams/s  Lost/Sent            Jitter\n";
    } else {
        o << "[ ID] Dir Interval           Transfer       Bitrate          Retr   Cwnd     RTT        PMTU\n";
    }
    for (const auto& s : r.streams) {
        o << "[" << pad(std::to_string(s.id), 3) << "] " << arrow(s.direction) << "  " << span << "  "
          << pad(human_bytes(static_cast<double>(s.bytes)), 12) << "  " << pad(human_bits(s.throughput_bps), 15);
        if (udp && s.loss) {
            const double pps = r.duration_s > 0 ? static_cast<double>(s.packets) / r.duration_s : 0;
            o << "  " << pad(fixed(pps, 0), 11) << "  " << pad(std::to_string(s.loss->lost) + "/" + std::to_string(s.loss->sent), 18)
              << " (" << fixed(s.loss->percent, 2) << "%)  " << fixed(s.loss->jitter_ms, 3) << " ms";
        } else if (!udp) {
            o << "  " << pad(std::to_string(s.retransmits), 5) << "  " << pad(std::to_string(s.cwnd), 5) << " seg  " << pad(fixed(s.rtt_us, 0), 6)
              << " us  " << pad(std::to_string(s.pmtu), 6);
        }
        o << '\n';
    }
    o << "[SUM] " << (r.spec.direction == Direction::Bidir ? "<>" : arrow(r.spec.direction)) << "  " << span << "  "
      << pad(human_bytes(static_cast<double>(r.bytes)), 12) << "  " << pad(human_bits(r.throughput_bps), 15);
    if (udp) {
        o << "  " << pad(fixed(r.packets_per_s, 0), 11) << " datagrams/s";
    } else {
        o << "  " << pad(std::to_string(r.tcp_retransmits), 5) << " retransmits";
    }
    o << '\n';
    if (r.loss) {
        o << "Loss: " << r.loss->lost << "/" << r.loss->sent << " (" << fixed(r.loss->percent, 3) << "%)  received "
          << r.loss->received << "  duplicates " << r.loss->duplicates << "  reordered " << r.loss->reordered << "  jitter "
          << fixed(r.loss->jitter_ms, 3) << " ms\n";
    }
    const bool reverse = r.spec.direction == Direction::Reverse;
    if (r.iperf3_peer) {
        print_iperf3_peer(r, o);
        return;
    }
    o << cpu_line("sender  ", reverse ? "server" : "client", r.sender) << '\n';
    o << cpu_line("receiver", reverse ? "client" : "server", r.receiver) << '\n';
    o << "I/O: " << r.io_calls << " receive calls, " << fixed(r.calls_per_s, 0) << " calls/s, " << fixed(r.ms_per_call, 4)
      << " ms/call\n";
    o << "Service demand (us/KB): sender host " << fixed(r.sender_service_demand_us_per_kb, 3) << ", receiver host "
      << fixed(r.receiver_service_demand_us_per_kb, 3) << " (netperf's: all CPUs of that host); engines "
      << fixed(r.engine_service_demand_us_per_kb, 3) << " (both ends' engine threads)\n";
    if (!udp) {
        o << "Packets: " << fixed(r.packets_per_s, 0) << "/s "
          << (r.packets_source == "interface" ? "counted by the receiving interface" : "estimated from bytes / MSS (no interface counters)");
        if (r.segments_per_packet > 0) o << ", " << fixed(r.segments_per_packet, 2) << " segments per packet (GRO/TSO aggregation)";
        o << '\n';
    }
    // The cross-check: what the receiving interface saw next to what the engine counted into it (for
    // --bidir the server's interface and the client-to-server streams).
    const EndMeasurement& rx = r.receiver;
    uint64_t engine_bytes = 0, engine_packets = 0;
    for (const auto& s : r.streams) {
        if (r.spec.direction == Direction::Bidir && s.direction != Direction::Forward) continue;
        engine_bytes += s.bytes;
        engine_packets += s.packets;
    }
    if (!rx.iface.empty()) {
        o << "NIC " << rx.iface << " (receiver) rx: " << r.receiver_rx_bytes << " bytes, " << r.receiver_rx_packets
          << " packets; engine counted " << engine_bytes << " payload bytes" << (udp ? ", " + std::to_string(engine_packets) + " datagrams" : std::string())
          << "; softnet processed " << rx.napi.processed << ", dropped " << rx.napi.dropped << ", squeezed " << rx.napi.time_squeeze << '\n';
    }
    print_profiles(r, o);
    print_socket(r, o);
    if (r.status != RunStatus::Ok) o << "status: " << Json(r.status).get<std::string>() << ": " << r.error << '\n';
}

void print_server_record(const ServerTestRecord& t, bool json) {
    if (json) {
        std::cout << Json{{"client", t.client}, {"spec", t.spec}, {"report", t.report}}.dump() << std::endl;
        return;
    }
    const auto& r = t.report;
    const double d = r.measurement.duration_s;
    std::cout << "test from " << t.client << ": " << Json(t.spec.protocol).get<std::string>() << " ";
    if (r.rr) {
        std::cout << Json(t.spec.pattern).get<std::string>() << ", " << t.spec.streams << " flow(s): answered " << r.rr->transactions
                  << " requests = " << fixed(d > 0 ? static_cast<double>(r.rr->transactions) / d : 0, 1) << " trans/s";
    } else {
        std::cout << Json(t.spec.direction).get<std::string>() << ", " << t.spec.streams << " stream(s): ";
        if (r.received_bytes > 0 || r.sent_bytes == 0) {
            std::cout << "received " << human_bytes(static_cast<double>(r.received_bytes)) << " = "
                      << human_bits(d > 0 ? static_cast<double>(r.received_bytes) * 8 / d : 0);
        }
        if (r.sent_bytes > 0) {
            std::cout << (r.received_bytes > 0 ? ", " : "") << "sent " << human_bytes(static_cast<double>(r.sent_bytes)) << " = "
                      << human_bits(d > 0 ? static_cast<double>(r.sent_bytes) * 8 / d : 0);
        }
    }
    std::cout << " in " << fixed(d, 2) << " s; cpu user " << fixed(r.measurement.cpu.user_s, 2) << " s sys "
              << fixed(r.measurement.cpu.sys_s, 2) << " s"
              << (r.measurement.profile ? "; profile " + std::to_string(r.measurement.profile->samples) + " samples" : std::string())
              << (r.profile_shared ? "; profiled by the client (same host)" : "") << "; status " << Json(r.status).get<std::string>()
              << (r.error.empty() ? "" : " (" + r.error + ")") << std::endl;
}

// The test client's options from --key-file (or $NICMATRIX_KEY_FILE).
TrafficClientOptions client_options(const std::string& key_file_flag) {
    TrafficClientOptions o;
    if (const auto key_file = key_file_from(key_file_flag); !key_file.empty()) o.key = std::string(load_key(key_file).bytes());
    return o;
}

// Splits "64,128,imix" (imix:64x7/594x4 uses '/' between shares on the command line, where ',' separates sizes).
std::vector<std::string> split_frames(const std::string& text) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, ',')) {
        std::replace(item.begin(), item.end(), '/', ',');
        if (item.empty()) throw usage_error("--frames: empty frame size in \"" + text + "\"");
        out.push_back(item);
    }
    return out;
}

template <typename Options>
void run_rfc2544_command(const Options& ro, std::stop_token stop) {
    Rfc2544Spec table = ro.table;
    if (!ro.frames.empty()) table.frames = split_frames(ro.frames);
    if (!ro.line_rate.empty()) table.line_rate_bps = parse_scaled(ro.line_rate, "--line-rate", false);
    table.streams = ro.spec.streams;
    if (ro.udp || ro.reverse || ro.bidir || !ro.rate.empty() || !ro.pps.empty() || !ro.length.empty() || !ro.bytes.empty()) {
        throw usage_error("--rfc2544: sets its own UDP rate, sizes and direction; drop -u, -R, --bidir, -b, --pps, -l, -n");
    }
    validate_rfc2544(table);
    TestSpec base = ro.spec;
    if (!ro.window.empty()) base.window = static_cast<uint32_t>(parse_scaled(ro.window, "--window", true));
    const std::string iface = sending_iface(base);
    base.iface = iface;
    std::optional<double> link_bps;
    std::map<std::string, uint64_t> coalesce;
    if (!iface.empty()) {
        try {
            NetlinkDeviceControl device;
            const LinkState state = device.read(iface);
            if (state.speed_mbps) link_bps = *state.speed_mbps * 1e6;
            coalesce = state.coalesce;
        } catch (const Error&) {  // NOLINT(bugprone-empty-catch): no speed known; --line-rate is then required
        }
    }
    if (!ro.json) {
        std::cout << "RFC 2544 throughput to " << base.host << ":" << base.port << " from " << (iface.empty() ? "?" : iface) << std::endl;
    }
    TrafficClient client(client_options(ro.key_file));
    const auto on_row = [&ro](const FrameRow& row) {
        if (ro.json) return;
        std::cout << "  " << row.frame << ": " << (row.found ? fixed(row.throughput_fps, 0) + " frames/s" : std::string("no rate passed"))
                  << " after " << row.trials << " trials" << (row.error.empty() ? "" : " (" + row.error + ")") << std::endl;
    };
    Rfc2544Result result = run_rfc2544(client, base, table, link_bps, stop, on_row);
    result.interfaces.push_back({"", iface, coalesce});
    if (ro.json) {
        std::cout << Json(result).dump(2) << '\n';
    } else {
        std::cout << '\n' << render_frame_table(build_frame_table(result), TableFormat::Text);
    }
    if (result.interrupted) throw Error(ErrorKind::Failed, "rfc2544 interrupted");
}

// `serve`'s limits (core/session/server_limits.hpp), as flags; server_limits() turns them into ServerLimits.
struct ServerLimitFlags {
    double max_duration_s = 300;
    double max_stall_timeout_s = 60;
    std::string max_test_memory = "1G";
    uint32_t max_threads = 0;
    std::vector<std::string> allow_from;
    uint32_t max_handshakes = 128;
    uint32_t max_handshakes_per_source = 16;
    double handshake_timeout_s = 2;
    uint32_t max_control = 64;
    uint32_t max_control_per_source = 8;
    unsigned ipv6_source_prefix = 64;
};

void add_server_limit_flags(CLI::App& serve, ServerLimitFlags& f) {
    const std::string group = "Limits (no client can raise them)";
    serve.add_option("--max-duration", f.max_duration_s,
                     "Seconds a test may last (omit included); longer timed tests are refused at hello, a byte count (-n) is "
                     "ended there with status limited")
        ->check(CLI::Range(1.0, 90000.0))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-stall-timeout", f.max_stall_timeout_s, "Longest stall timeout (run --stall-timeout) a client may ask, seconds")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-test-memory", f.max_test_memory,
                     "Engine buffers one test may make the server allocate (streams x threads x write size), K/M/G suffixes")
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-threads", f.max_threads, "Worker threads per direction a test may use (default: the server's cores)")
        ->check(CLI::Range(1, 256))
        ->group(group);
    serve.add_option("--allow-from", f.allow_from,
                     "Accept connections only from these addresses or CIDR blocks (IPv4 and IPv6, repeatable; default: any)")
        ->group(group);
    serve.add_option("--max-handshakes", f.max_handshakes,
                     "Connections that have not sent their first message yet, in all; at the cap the oldest is closed")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-handshakes-per-source", f.max_handshakes_per_source, "The same, per source address")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--handshake-timeout", f.handshake_timeout_s,
                     "Seconds a new connection has to send its first message (and, with --key-file, a test its proof)")
        ->check(CLI::Range(0.1, 60.0))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-control", f.max_control, "Settings-control connections (peer agent sessions) at once, in all")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--max-control-per-source", f.max_control_per_source, "The same, per source address")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str()
        ->group(group);
    serve.add_option("--ipv6-source-prefix", f.ipv6_source_prefix,
                     "For the per-source caps, IPv6 clients count by this prefix (one host holds a /64; 128 = per address); "
                     "IPv4 clients count by address")
        ->check(CLI::Range(1, 128))
        ->capture_default_str()
        ->group(group);
}

ServerLimits server_limits(const ServerLimitFlags& f) {
    ServerLimits l;
    l.max_duration = std::chrono::seconds(static_cast<int64_t>(std::ceil(f.max_duration_s)));
    l.max_stall_timeout_s = f.max_stall_timeout_s;
    const double memory = parse_scaled(f.max_test_memory, "--max-test-memory", true);
    if (memory < 1024 * 1024 || memory > 1e15) throw usage_error("--max-test-memory: \"" + f.max_test_memory + "\": give 1M..1000T");
    l.max_test_memory_bytes = static_cast<uint64_t>(memory);
    l.max_threads = f.max_threads;
    for (const auto& a : f.allow_from) l.allow_from.push_back(Cidr::parse(a));
    l.max_handshakes = f.max_handshakes;
    l.max_handshakes_per_source = f.max_handshakes_per_source;
    l.handshake_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.handshake_timeout_s * 1000));
    l.max_control = f.max_control;
    l.max_control_per_source = f.max_control_per_source;
    l.ipv6_source_prefix = f.ipv6_source_prefix;
    return l;
}

}  // namespace

void add_traffic_commands(CLI::App& app, std::stop_token stop) {
    struct ServeOptions {
        std::string bind;
        uint16_t port = kDefaultPort;
        bool once = false;
        bool json = false;
        bool allow_profile = false;
        std::vector<std::string> allow_control;
        std::vector<std::string> allow_kinds;
        std::string key_file;
        std::string journal = FileSettingsJournal::default_agent_path();
        double heartbeat_timeout_s = 10;
        ServerLimitFlags limits;
    };
    auto so = std::make_shared<ServeOptions>();
    auto* serve = app.add_subcommand("serve", "Run the traffic server: answers `nicmatrix run` clients, one test at a time");
    serve->add_option("--bind", so->bind, "Local address to listen on (default: every address, IPv4 and IPv6)");
    serve->add_option("-p,--port", so->port, "TCP port for control and data (UDP data uses the same number when free)")
        ->capture_default_str();
    serve->add_flag("-1,--once", so->once, "Exit after one test");
    serve->add_flag("--json", so->json, "Print one JSON line per test (the server's own measurements)");
    serve->add_option("--allow-control", so->allow_control,
                      "Let an authenticated client change settings of this interface (repeatable): the kinds --allow-kinds names "
                      "(by default the MTU, the offloads a sweep sweeps - checksums, sg, tso/gso and other segmentation offloads, "
                      "gro, lro - channels, rings, coalescing, RPS, XPS, NAPI and the root qdisc); needs --key-file");
    std::string kinds_help =
        "Kinds of setting an authenticated client may change on the --allow-control interfaces (comma list, repeatable; "
        "\"default\" = the kinds marked *, \"all\" = every kind; default: the kinds marked *). Kinds:";
    for (const auto& k : kAgentSettingKinds) {
        kinds_help += std::string("\n  ") + std::string(k.name) + (k.by_default ? " *" : "") + " - " + std::string(k.what);
    }
    serve->add_option("--allow-kinds", so->allow_kinds, kinds_help)->delimiter(',');
    serve->add_option("--key-file", so->key_file,
                      "Pre-shared key that clients must prove they hold, for settings changes and for every test (default "
                      "$NICMATRIX_KEY_FILE): a regular file of 32 to 4096 bytes, readable by its owner only (head -c 32 "
                      "/dev/urandom > key; chmod 600 key); without one, settings changes are refused and tests need no key");
    serve->add_flag("--allow-profile", so->allow_profile,
                    "Sample this host's kernel for a client's `run --profile` without the key (a profile shows what runs "
                    "here); with --key-file, clients holding the key may always ask for one");
    serve->add_option("--journal", so->journal,
                      "Where the agent journals the originals of the interfaces it changes (`nicmatrix restore` also looks "
                      "at the default); at start it restores the entries of an agent that is gone, never those of one that runs")
        ->capture_default_str();
    serve->add_option("--heartbeat-timeout", so->heartbeat_timeout_s,
                      "Seconds without a message from the controlling client after which the agent restores its interfaces "
                      "(never inside a change's confirm window: an unconfirmed change is rolled back first)")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    add_server_limit_flags(*serve, so->limits);
    serve->callback([so, stop] {
        std::mutex print;
        AgentServerOptions opts;
        opts.server.bind = so->bind;
        opts.server.port = so->port;
        opts.server.once = so->once;
        opts.server.limits = server_limits(so->limits);
        opts.server.allow_profile = so->allow_profile;
        const bool json = so->json;
        opts.server.on_test = [&print, json](const ServerTestRecord& t) {
            std::lock_guard lock(print);
            print_server_record(t, json);
        };
        opts.allow_control = so->allow_control;
        opts.allow_kinds = so->allow_kinds;
        opts.key_file = so->key_file;
        opts.journal = so->journal;
        opts.heartbeat_timeout = std::chrono::milliseconds(static_cast<int64_t>(so->heartbeat_timeout_s * 1000));
        opts.log = [](const std::string& line) { std::cerr << "nicmatrix serve: " << line << std::endl; };
        AgentServer server(std::move(opts));
        if (json) {
            std::cout << Json{{"listening", server.port()}}.dump() << std::endl;
        } else {
            std::cout << "Server listening on port " << server.port() << std::endl;
        }
        server.serve(stop);
    });

    struct RunOptions {
        TestSpec spec;
        std::string rate, pps, length, window, bytes, key_file, affinity;
        std::string peer_kind = "nicmatrix";
        bool udp = false, reverse = false, bidir = false, json = false, json_stream = false;
        bool rr = false, crr = false;
        std::string rr_size, dscp;
        CLI::Option* rr_burst = nullptr;
        bool rfc2544 = false;
        std::string frames, line_rate;
        Rfc2544Spec table;
    };
    auto ro = std::make_shared<RunOptions>();
    auto* run = app.add_subcommand("run", "Run one test against a `nicmatrix serve` (iperf-like flags)");
    run->add_option("-c,--client", ro->spec.host, "Server address or name")->required();
    auto* port_flag = run->add_option("-p,--port", ro->spec.port, "Server port (default 5301; 5201 with --peer-kind iperf3)");
    run->add_option("--peer-kind", ro->peer_kind,
                    "What the server is: nicmatrix (`nicmatrix serve`) or iperf3 (a stock `iperf3 -s`, driven with iperf3's own protocol; "
                    "TCP streams, -R and --bidir; the server's own figures are in the result's \"peer\")")
        ->check(CLI::IsMember({"nicmatrix", "iperf3"}))
        ->capture_default_str();
    run->add_option("-B,--bind", ro->spec.bind, "Local address to connect from");
    run->add_option("-P,--parallel", ro->spec.streams,
                    "Streams (default: 1; unlimited UDP: one per core, each with its own sender thread)");
    run->add_option("--threads", ro->spec.threads, "Worker threads per direction (default: one per core, at most one per stream)");
    run->add_option("-l,--length", ro->length, "TCP write size or UDP payload, K/M suffixes (default TCP: whole segments, at most 128K; UDP 1472; UDP 18..65507)");
    run->add_option("-w,--window", ro->window, "Socket buffer size SO_SNDBUF/SO_RCVBUF, K/M suffixes (default: kernel autotuning)");
    run->add_option("-t,--time", ro->spec.duration_s, "Measured seconds (after --omit)")->capture_default_str();
    run->add_option("-n,--bytes", ro->bytes, "Bytes to send instead of a duration (ttcp's buflen x nbuf), K/M/G suffixes");
    run->add_flag("-R,--reverse", ro->reverse, "Server sends, client receives");
    run->add_flag("--bidir", ro->bidir, "Both directions at once");
    run->add_flag("-u,--udp", ro->udp, "UDP instead of TCP");
    run->add_option("-b,--bitrate", ro->rate, "Target payload bits/s, K/M/G suffixes (powers of 1000); 0 = unlimited");
    run->add_option("--pps", ro->pps, "Target UDP datagrams/s, K/M suffixes; 0 = unlimited");
    run->add_flag("--gso", ro->spec.udp_gso, "UDP: send with UDP_SEGMENT (GSO); a separate mode from plain sendmmsg");
    run->add_flag("--gro", ro->spec.udp_gro, "UDP: receive with UDP_GRO (datagrams are still counted one by one)");
    run->add_option("-O,--omit", ro->spec.omit_s, "Warm-up seconds, not counted")->capture_default_str();
    run->add_option("-i,--interval", ro->spec.interval_s, "Seconds per interval sample; 0 = none. Text mode prints a line live as each ends (this end's counts)")->capture_default_str();
    run->add_option("-A,--affinity", ro->affinity,
                    "Pin the engine threads: CLIENT_CPUS[,SERVER_CPUS] (iperf3's -A); a side is a CPU, a range 0-3 or "
                    "CPUs joined by '+' (0+2); the server pins its own. Each run records where the threads ran (placement)");
    run->add_option("--iface", ro->spec.iface, "Local interface for counters (default: the one holding the local address)");
    run->add_option("--stall-timeout", ro->spec.stall_timeout_s, "Seconds without data that end the run as stalled")->capture_default_str();
    run->add_flag("--rr", ro->rr,
                  "Request/response (netperf TCP_RR; with -u UDP_RR): transactions/s and latency percentiles per flow");
    run->add_flag("--crr", ro->crr, "Request/response with a new TCP connection per transaction (TCP_CRR)");
    run->add_option("--rr-size", ro->rr_size, "--rr/--crr request and response bytes, REQ[,RESP] with K/M suffixes (default 1,1; one value sets both)");
    ro->rr_burst = run->add_option("--rr-burst", ro->spec.rr_burst, "--rr/--crr transactions in flight per flow (1..128)")->capture_default_str();
    run->add_option("-C,--congestion", ro->spec.socket.congestion,
                    "TCP congestion control on the sending ends (one of /proc/sys/net/ipv4/tcp_available_congestion_control; no module is loaded)");
    run->add_flag("-N,--no-delay", ro->spec.socket.nodelay, "TCP_NODELAY on the sending ends");
    run->add_option("-M,--set-mss", ro->spec.socket.mss, "TCP_MAXSEG on the client before it connects (its SYN caps both directions), 88..65495");
    run->add_option("--dscp", ro->dscp, "DSCP on both ends' data sockets: 0..63 or a name (CS0..CS7, AF11..AF43, EF)");
    run->add_flag("-Z,--zerocopy", ro->spec.socket.zerocopy,
                  "TCP senders send with MSG_ZEROCOPY (completions counted; plain sends where the kernel copies anyway)");
    run->add_flag("--skip-rx-copy", ro->spec.socket.skip_rx_copy, "TCP receivers read with MSG_TRUNC: the data is not copied to user space");
    run->add_option("--bind-dev", ro->spec.socket.bind_dev, "SO_BINDTODEVICE: the client's data sockets use this interface only");
    run->add_option("--rx-spin", ro->spec.socket.rx_spin_us,
                    "Stream receivers that find every socket empty poll for up to USEC microseconds before sleeping "
                    "(0..10000; 0 = sleep at once, the default): fewer wake-ups for the sending side's kernel to pay, "
                    "more CPU on the receiving end, counted in its figures; spins and how many data ended are reported")
        ->type_name("USEC");
    auto* json_flag = run->add_flag("--json", ro->json, "Print the result as JSON");
    run->add_flag("--json-stream", ro->json_stream,
                  "Print JSON lines instead: run_start, progress live every -i seconds, each interval, run, run_end (results/STREAM.md, results/stream.schema.json)")
        ->excludes(json_flag);
    run->add_option("--key-file", ro->key_file,
                    "Pre-shared key: the test proves it holds it, and the server must prove it too, on every message (default "
                    "$NICMATRIX_KEY_FILE); a server started with --key-file refuses tests without it");
    run->add_flag("--rfc2544", ro->rfc2544,
                  "Frame-size table: per frame size, the highest UDP rate with no loss (binary search over trials), "
                  "then a confirmation trial; prints frame size | % of line rate | frames/s | Mbit/s | CPU | loss | trials");
    run->add_option("--frames", ro->frames,
                    "--rfc2544 frame sizes, comma-separated: 64..9216, imix (64/594/1518 at 7:4:1) or imix:SIZExWEIGHT/...; "
                    "default 64,128,256,512,1024,1280,1518,imix");
    run->add_option("--trial", ro->table.trial_s, "--rfc2544 seconds per trial")->capture_default_str();
    run->add_option("--resolution", ro->table.resolution_pct, "--rfc2544 search resolution, percent of the bracket's top")->capture_default_str();
    run->add_option("--max-trials", ro->table.max_trials, "--rfc2544 search trials per frame size (plus one confirmation)")->capture_default_str();
    run->add_option("--loss-tolerance", ro->table.loss_tolerance_pct, "--rfc2544 loss (percent) a passing trial may have")->capture_default_str();
    run->add_option("--line-rate", ro->line_rate, "--rfc2544 line rate in bit/s, K/M/G suffixes (default: the sending interface's link speed)");
    auto* profile_flag = run->add_flag("--profile", ro->spec.profile,
                  "Kernel profile of the measured window on every CPU of each end's host (perf_event_open; root or "
                  "CAP_PERFMON): where the CPU went, by category (copy, checksum, gro, tcp_ip, ...), task and symbol");
    run->add_option("--profile-hz", ro->spec.profile_hz, "--profile samples per second per CPU (1..10000)")
        ->capture_default_str()
        ->needs(profile_flag);
    run->add_option("--profile-categories", ro->spec.profile_categories,
                    "--profile category table (JSON, as configs/profile-categories.json; default: the shipped one)")
        ->needs(profile_flag);
    run->callback([ro, stop, port_flag] {
        const bool iperf3_peer = ro->peer_kind == "iperf3";
        if (iperf3_peer && port_flag->count() == 0) ro->spec.port = iperf3::kDefaultPort;
        if (iperf3_peer && ro->rfc2544) throw usage_error("--rfc2544: not with --peer-kind iperf3 (a frame-size table is UDP)");
        if (iperf3_peer && !ro->key_file.empty()) throw usage_error("--key-file: not with --peer-kind iperf3: a stock iperf3 server has no nicmatrix key");
        if (ro->rfc2544 && ro->spec.profile) throw usage_error("--profile: not with --rfc2544 (a table is many short trials)");
        if (ro->rfc2544 && ro->json_stream) throw usage_error("--json-stream: not with --rfc2544 (use --json)");
        if (ro->rfc2544) {
            run_rfc2544_command(*ro, stop);
            return;
        }
        TestSpec spec = ro->spec;
        spec.protocol = ro->udp ? Protocol::Udp : Protocol::Tcp;
        if (ro->reverse && ro->bidir) throw usage_error("-R and --bidir: choose one");
        spec.direction = ro->bidir ? Direction::Bidir : (ro->reverse ? Direction::Reverse : Direction::Forward);
        if (!ro->rate.empty()) spec.rate_bps = parse_scaled(ro->rate, "--bitrate", false);
        if (!ro->pps.empty()) spec.rate_pps = parse_scaled(ro->pps, "--pps", false);
        const auto size = [](const std::string& text, const std::string& flag, double max) {
            const double v = parse_scaled(text, flag, true);
            if (v > max) throw usage_error(flag + ": \"" + text + "\" is too large");
            return v;
        };
        if (!ro->length.empty()) spec.write_size = static_cast<uint32_t>(size(ro->length, "--length", 4294967295.0));
        if (!ro->window.empty()) spec.window = static_cast<uint32_t>(size(ro->window, "--window", 4294967295.0));
        if (!ro->bytes.empty()) spec.bytes = static_cast<uint64_t>(size(ro->bytes, "--bytes", 1e18));
        if (!ro->length.empty() && spec.write_size == 0) throw usage_error("--length: must be > 0");
        if (!ro->affinity.empty()) std::tie(spec.client_cpus, spec.server_cpus) = parse_affinity_option(ro->affinity);
        if (ro->rr && ro->crr) throw usage_error("--rr and --crr: choose one");
        spec.pattern = ro->crr ? TrafficPattern::Crr : ro->rr ? TrafficPattern::Rr : TrafficPattern::Stream;
        if (spec.pattern == TrafficPattern::Stream && (!ro->rr_size.empty() || ro->rr_burst->count() > 0)) {
            throw usage_error("--rr-size and --rr-burst: for request/response tests; add --rr or --crr");
        }
        if (!ro->rr_size.empty()) {
            const auto comma = ro->rr_size.find(',');
            const std::string req = ro->rr_size.substr(0, comma);
            const std::string resp = comma == std::string::npos ? req : ro->rr_size.substr(comma + 1);
            spec.request_size = static_cast<uint32_t>(size(req, "--rr-size", 4294967295.0));
            spec.response_size = static_cast<uint32_t>(size(resp, "--rr-size", 4294967295.0));
        }
        if (!ro->dscp.empty()) spec.socket.dscp = parse_dscp(ro->dscp, "--dscp");
        // With a key the test itself is authenticated, both ways (core/control/test_auth.hpp); a bad key file is
        // refused before anything is printed or connected.
        std::unique_ptr<TrafficRunner> runner;
        if (iperf3_peer) {
            iperf3::check_supported(spec);
            runner = std::make_unique<Iperf3Client>();
        } else {
            runner = std::make_unique<TrafficClient>(client_options(ro->key_file));
        }
        TrafficRunner& client = *runner;
        // A spec the engine refuses is the user's error before anything is printed or connected.
        const TestSpec resolved = resolve_spec(spec, engine_cores());
        // --json-stream never blocks the test on a reader that stops reading (matrix/sweep_stream.hpp).
        std::optional<JsonLines> lines;
        if (ro->json_stream) {
            lines.emplace(STDOUT_FILENO, kDefaultJsonStreamQueue);
            stream_run_start(*lines, spec);
        } else if (!ro->json) {
            std::cout << "Connecting to host " << spec.host << ", port " << spec.port << std::endl;
        }
        const RunResult r = ro->json_stream ? client.run_live(spec, stop, [&](const LiveInterval& i) { stream_run_progress(*lines, i); })
                            : ro->json      ? client.run(spec, stop)
                                            : client.run_live(spec, stop, [&](const LiveInterval& i) { print_live(resolved, i, std::cout); });
        if (ro->json_stream) {
            stream_run_done(*lines, r);
            lines->drain(std::chrono::steady_clock::now() + std::chrono::seconds(5), stop);
            if (const auto lost = describe_stream_losses(lines->stats()); !lost.empty()) std::cerr << "nicmatrix: " << lost << '\n';
        } else if (ro->json) {
            std::cout << Json(r).dump(2) << '\n';
        } else {
            print_result(r, std::cout);
        }
        if (r.status != RunStatus::Ok) {
            throw Error(ErrorKind::Failed, "run " + Json(r.status).get<std::string>() + ": " + r.error);
        }
    });
}

}  // namespace nm::cli
