#include "cli/run_printing.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli/human_units.hpp"
#include "core/device/device_types.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/profile/categories.hpp"
#include "core/profile/profile_codec.hpp"
#include "core/traffic/dscp.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm::cli {
namespace {

const char* arrow(Direction d) { return d == Direction::Reverse ? "<-" : "->"; }

std::string cpu_line(const char* role, const char* who, const EndMeasurement& m) {
    std::ostringstream o;
    o << "CPU " << role << " (" << who << (m.iface.empty() ? "" : ", " + m.iface) << "): user " << fixed(m.cpu.user_s, 2) << " s  sys "
      << fixed(m.cpu.sys_s, 2) << " s  util " << fixed(m.cpu.util_pct, 1) << "%  | system busy " << fixed(m.system.busy_pct, 1) << "%  usr "
      << fixed(m.system.user_pct, 1) << "%  sys " << fixed(m.system.sys_pct, 1) << "%  irq " << fixed(m.system.irq_pct, 1) << "%  softirq "
      << fixed(m.system.softirq_pct, 1) << "%  steal " << fixed(m.system.steal_pct, 1) << "%";
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
    for (size_t i = 0; i < p.top.size() && i < 5; ++i)
        o << ' ' << p.top[i].symbol << ' ' << fixed(p.top[i].pct, 1) << "% (" << p.top[i].category << ')';
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
        o << "Zerocopy (MSG_ZEROCOPY): " << z.sends << " sends, " << z.completions << " completed, " << z.copied << " of them copied by the kernel"
          << (z.fell_back ? "; fell back to plain sends: " + z.note : std::string()) << '\n';
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
    o << kind << ": " << r.spec.streams << " flow(s) x " << r.spec.rr_burst << " in flight, request " << r.spec.request_size << " bytes, response "
      << r.spec.response_size << " bytes\n";
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

}  // namespace

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
        o << pad(std::to_string(transactions), 10) << " transactions  " << pad(fixed(secs > 0 ? static_cast<double>(transactions) / secs : 0, 1), 11)
          << " trans/s" << std::endl;
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
    o << std::endl;  // flushed: the line is for now, not for when the run ends
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
            o << "[SUM] " << pad(fixed(iv.start_s, 2), 6) << "-" << fixed(iv.end_s, 2) << " sec  "
              << pad(human_bytes(static_cast<double>(iv.bytes)), 12) << "  " << pad(human_bits(iv.throughput_bps), 15);
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
            o << "  " << pad(fixed(pps, 0), 11) << "  " << pad(std::to_string(s.loss->lost) + "/" + std::to_string(s.loss->sent), 18) << " ("
              << fixed(s.loss->percent, 2) << "%)  " << fixed(s.loss->jitter_ms, 3) << " ms";
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
        o << "Loss: " << r.loss->lost << "/" << r.loss->sent << " (" << fixed(r.loss->percent, 3) << "%)  received " << r.loss->received
          << "  duplicates " << r.loss->duplicates << "  reordered " << r.loss->reordered << "  jitter " << fixed(r.loss->jitter_ms, 3) << " ms\n";
    }
    const bool reverse = r.spec.direction == Direction::Reverse;
    if (r.iperf3_peer) {
        print_iperf3_peer(r, o);
        return;
    }
    o << cpu_line("sender  ", reverse ? "server" : "client", r.sender) << '\n';
    o << cpu_line("receiver", reverse ? "client" : "server", r.receiver) << '\n';
    o << "I/O: " << r.io_calls << " receive calls, " << fixed(r.calls_per_s, 0) << " calls/s, " << fixed(r.ms_per_call, 4) << " ms/call\n";
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
        o << "NIC " << rx.iface << " (receiver) rx: " << r.receiver_rx_bytes << " bytes, " << r.receiver_rx_packets << " packets; engine counted "
          << engine_bytes << " payload bytes" << (udp ? ", " + std::to_string(engine_packets) + " datagrams" : std::string())
          << "; softnet processed " << rx.napi.processed << ", dropped " << rx.napi.dropped << ", squeezed " << rx.napi.time_squeeze << '\n';
    }
    print_profiles(r, o);
    print_socket(r, o);
    if (r.status != RunStatus::Ok) o << "status: " << Json(r.status).get<std::string>() << ": " << r.error << '\n';
}

}  // namespace nm::cli
