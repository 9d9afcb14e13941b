// JSON of the traffic engine's values: what `nicmatrix run --json` prints and what a results file keeps for
// every repetition. Readers are tolerant of missing fields (older files, fields added later get defaults)
// but strict about types.
#include <string>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"

namespace nm {
namespace {

// Reads `key` into `out` when present; a missing key leaves the default.
template <typename T>
void read_opt(const Json& j, const char* key, T& out) {
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(out);
}

template <typename E, size_t N>
E enum_from(const Json& j, const char* what, const std::pair<E, const char*> (&names)[N]) {
    const auto s = j.get<std::string>();
    for (const auto& [value, name] : names) {
        if (s == name) return value;
    }
    std::string expected;
    for (const auto& [value, name] : names) expected += std::string(expected.empty() ? "" : ", ") + "\"" + name + "\"";
    throw usage_error(std::string(what) + ": expected one of " + expected + ", got \"" + s + "\"");
}

template <typename E, size_t N>
const char* enum_name(E v, const std::pair<E, const char*> (&names)[N]) {
    for (const auto& [value, name] : names) {
        if (value == v) return name;
    }
    return "unknown";
}

constexpr std::pair<Protocol, const char*> kProtocols[] = {{Protocol::Tcp, "tcp"}, {Protocol::Udp, "udp"}};
constexpr std::pair<Direction, const char*> kDirections[] = {
    {Direction::Forward, "forward"}, {Direction::Reverse, "reverse"}, {Direction::Bidir, "bidir"}};
constexpr std::pair<RunStatus, const char*> kRunStatuses[] = {{RunStatus::Ok, "ok"},
                                                              {RunStatus::Stalled, "stalled"},
                                                              {RunStatus::PeerLost, "peer_lost"},
                                                              {RunStatus::Interrupted, "interrupted"}};

}  // namespace

void to_json(Json& j, const Protocol& v) { j = enum_name(v, kProtocols); }
void from_json(const Json& j, Protocol& v) { v = enum_from(j, "protocol", kProtocols); }
void to_json(Json& j, const Direction& v) { j = enum_name(v, kDirections); }
void from_json(const Json& j, Direction& v) { v = enum_from(j, "direction", kDirections); }
void to_json(Json& j, const RunStatus& v) { j = enum_name(v, kRunStatuses); }
void from_json(const Json& j, RunStatus& v) { v = enum_from(j, "status", kRunStatuses); }

void to_json(Json& j, const LinkCounters& v) {
    j = Json{{"rx_packets", v.rx_packets},
             {"tx_packets", v.tx_packets},
             {"rx_bytes", v.rx_bytes},
             {"tx_bytes", v.tx_bytes},
             {"rx_errors", v.rx_errors},
             {"tx_errors", v.tx_errors},
             {"rx_dropped", v.rx_dropped},
             {"tx_dropped", v.tx_dropped},
             {"multicast", v.multicast},
             {"collisions", v.collisions},
             {"rx_length_errors", v.rx_length_errors},
             {"rx_over_errors", v.rx_over_errors},
             {"rx_crc_errors", v.rx_crc_errors},
             {"rx_frame_errors", v.rx_frame_errors},
             {"rx_fifo_errors", v.rx_fifo_errors},
             {"rx_missed_errors", v.rx_missed_errors},
             {"tx_aborted_errors", v.tx_aborted_errors},
             {"tx_carrier_errors", v.tx_carrier_errors},
             {"tx_fifo_errors", v.tx_fifo_errors},
             {"tx_heartbeat_errors", v.tx_heartbeat_errors},
             {"tx_window_errors", v.tx_window_errors},
             {"rx_nohandler", v.rx_nohandler}};
}

void from_json(const Json& j, LinkCounters& v) {
    read_opt(j, "rx_packets", v.rx_packets);
    read_opt(j, "tx_packets", v.tx_packets);
    read_opt(j, "rx_bytes", v.rx_bytes);
    read_opt(j, "tx_bytes", v.tx_bytes);
    read_opt(j, "rx_errors", v.rx_errors);
    read_opt(j, "tx_errors", v.tx_errors);
    read_opt(j, "rx_dropped", v.rx_dropped);
    read_opt(j, "tx_dropped", v.tx_dropped);
    read_opt(j, "multicast", v.multicast);
    read_opt(j, "collisions", v.collisions);
    read_opt(j, "rx_length_errors", v.rx_length_errors);
    read_opt(j, "rx_over_errors", v.rx_over_errors);
    read_opt(j, "rx_crc_errors", v.rx_crc_errors);
    read_opt(j, "rx_frame_errors", v.rx_frame_errors);
    read_opt(j, "rx_fifo_errors", v.rx_fifo_errors);
    read_opt(j, "rx_missed_errors", v.rx_missed_errors);
    read_opt(j, "tx_aborted_errors", v.tx_aborted_errors);
    read_opt(j, "tx_carrier_errors", v.tx_carrier_errors);
    read_opt(j, "tx_fifo_errors", v.tx_fifo_errors);
    read_opt(j, "tx_heartbeat_errors", v.tx_heartbeat_errors);
    read_opt(j, "tx_window_errors", v.tx_window_errors);
    read_opt(j, "rx_nohandler", v.rx_nohandler);
}

void to_json(Json& j, const TestSpec& v) {
    j = Json{{"host", v.host},         {"port", v.port},           {"bind", v.bind},
             {"protocol", v.protocol}, {"direction", v.direction}, {"streams", v.streams},
             {"threads", v.threads},   {"write_size", v.write_size}, {"window", v.window},
             {"duration_s", v.duration_s}, {"bytes", v.bytes},     {"omit_s", v.omit_s},
             {"interval_s", v.interval_s}, {"rate_bps", v.rate_bps}, {"rate_pps", v.rate_pps},
             {"udp_gso", v.udp_gso},   {"udp_gro", v.udp_gro},     {"iface", v.iface}};
}

void from_json(const Json& j, TestSpec& v) {
    read_opt(j, "host", v.host);
    read_opt(j, "port", v.port);
    read_opt(j, "bind", v.bind);
    read_opt(j, "protocol", v.protocol);
    read_opt(j, "direction", v.direction);
    read_opt(j, "streams", v.streams);
    read_opt(j, "threads", v.threads);
    read_opt(j, "write_size", v.write_size);
    read_opt(j, "window", v.window);
    read_opt(j, "duration_s", v.duration_s);
    read_opt(j, "bytes", v.bytes);
    read_opt(j, "omit_s", v.omit_s);
    read_opt(j, "interval_s", v.interval_s);
    read_opt(j, "rate_bps", v.rate_bps);
    read_opt(j, "rate_pps", v.rate_pps);
    read_opt(j, "udp_gso", v.udp_gso);
    read_opt(j, "udp_gro", v.udp_gro);
    read_opt(j, "iface", v.iface);
}

void to_json(Json& j, const ProcessCpu& v) { j = Json{{"user_s", v.user_s}, {"sys_s", v.sys_s}, {"util_pct", v.util_pct}}; }

void from_json(const Json& j, ProcessCpu& v) {
    read_opt(j, "user_s", v.user_s);
    read_opt(j, "sys_s", v.sys_s);
    read_opt(j, "util_pct", v.util_pct);
}

void to_json(Json& j, const SystemCpu& v) {
    j = Json{{"busy_pct", v.busy_pct}, {"user_pct", v.user_pct}, {"sys_pct", v.sys_pct},
             {"irq_pct", v.irq_pct},   {"softirq_pct", v.softirq_pct}};
}

void from_json(const Json& j, SystemCpu& v) {
    read_opt(j, "busy_pct", v.busy_pct);
    read_opt(j, "user_pct", v.user_pct);
    read_opt(j, "sys_pct", v.sys_pct);
    read_opt(j, "irq_pct", v.irq_pct);
    read_opt(j, "softirq_pct", v.softirq_pct);
}

void to_json(Json& j, const NapiStats& v) {
    j = Json{{"processed", v.processed}, {"dropped", v.dropped}, {"time_squeeze", v.time_squeeze}, {"interrupts", v.interrupts}};
}

void from_json(const Json& j, NapiStats& v) {
    read_opt(j, "processed", v.processed);
    read_opt(j, "dropped", v.dropped);
    read_opt(j, "time_squeeze", v.time_squeeze);
    read_opt(j, "interrupts", v.interrupts);
}

void to_json(Json& j, const EndMeasurement& v) {
    j = Json{{"iface", v.iface},         {"cpu", v.cpu},
             {"system", v.system},       {"napi", v.napi},
             {"counters_before", v.counters_before}, {"counters_after", v.counters_after}};
}

void from_json(const Json& j, EndMeasurement& v) {
    read_opt(j, "iface", v.iface);
    read_opt(j, "cpu", v.cpu);
    read_opt(j, "system", v.system);
    read_opt(j, "napi", v.napi);
    read_opt(j, "counters_before", v.counters_before);
    read_opt(j, "counters_after", v.counters_after);
}

void to_json(Json& j, const StreamResult& v) {
    j = Json{{"id", v.id},         {"direction", v.direction}, {"bytes", v.bytes},   {"throughput_bps", v.throughput_bps},
             {"retransmits", v.retransmits}, {"cwnd", v.cwnd}, {"rtt_us", v.rtt_us}, {"pmtu", v.pmtu}};
}

void from_json(const Json& j, StreamResult& v) {
    read_opt(j, "id", v.id);
    read_opt(j, "direction", v.direction);
    read_opt(j, "bytes", v.bytes);
    read_opt(j, "throughput_bps", v.throughput_bps);
    read_opt(j, "retransmits", v.retransmits);
    read_opt(j, "cwnd", v.cwnd);
    read_opt(j, "rtt_us", v.rtt_us);
    read_opt(j, "pmtu", v.pmtu);
}

void to_json(Json& j, const LossStats& v) {
    j = Json{{"sent", v.sent},           {"received", v.received}, {"lost", v.lost},           {"duplicates", v.duplicates},
             {"reordered", v.reordered}, {"percent", v.percent},   {"jitter_ms", v.jitter_ms}};
}

void from_json(const Json& j, LossStats& v) {
    read_opt(j, "sent", v.sent);
    read_opt(j, "received", v.received);
    read_opt(j, "lost", v.lost);
    read_opt(j, "duplicates", v.duplicates);
    read_opt(j, "reordered", v.reordered);
    read_opt(j, "percent", v.percent);
    read_opt(j, "jitter_ms", v.jitter_ms);
}

void to_json(Json& j, const IntervalSample& v) {
    j = Json{{"start_s", v.start_s}, {"end_s", v.end_s}, {"bytes", v.bytes}, {"packets", v.packets},
             {"throughput_bps", v.throughput_bps}, {"packets_per_s", v.packets_per_s}};
}

void from_json(const Json& j, IntervalSample& v) {
    read_opt(j, "start_s", v.start_s);
    read_opt(j, "end_s", v.end_s);
    read_opt(j, "bytes", v.bytes);
    read_opt(j, "packets", v.packets);
    read_opt(j, "throughput_bps", v.throughput_bps);
    read_opt(j, "packets_per_s", v.packets_per_s);
}

void to_json(Json& j, const RunResult& v) {
    j = Json{{"spec", v.spec},
             {"status", v.status},
             {"error", v.error},
             {"throughput_bps", v.throughput_bps},
             {"packets_per_s", v.packets_per_s},
             {"bytes", v.bytes},
             {"packets", v.packets},
             {"duration_s", v.duration_s},
             {"streams", v.streams},
             {"loss", v.loss ? Json(*v.loss) : Json(nullptr)},
             {"tcp_retransmits", v.tcp_retransmits},
             {"sender", v.sender},
             {"receiver", v.receiver},
             {"io_calls", v.io_calls},
             {"calls_per_s", v.calls_per_s},
             {"ms_per_call", v.ms_per_call},
             {"service_demand_us_per_kb", v.service_demand_us_per_kb},
             {"intervals", v.intervals}};
}

void from_json(const Json& j, RunResult& v) {
    read_opt(j, "spec", v.spec);
    read_opt(j, "status", v.status);
    read_opt(j, "error", v.error);
    read_opt(j, "throughput_bps", v.throughput_bps);
    read_opt(j, "packets_per_s", v.packets_per_s);
    read_opt(j, "bytes", v.bytes);
    read_opt(j, "packets", v.packets);
    read_opt(j, "duration_s", v.duration_s);
    read_opt(j, "streams", v.streams);
    if (const auto it = j.find("loss"); it != j.end() && !it->is_null()) v.loss = it->get<LossStats>();
    read_opt(j, "tcp_retransmits", v.tcp_retransmits);
    read_opt(j, "sender", v.sender);
    read_opt(j, "receiver", v.receiver);
    read_opt(j, "io_calls", v.io_calls);
    read_opt(j, "calls_per_s", v.calls_per_s);
    read_opt(j, "ms_per_call", v.ms_per_call);
    read_opt(j, "service_demand_us_per_kb", v.service_demand_us_per_kb);
    read_opt(j, "intervals", v.intervals);
}

}  // namespace nm
