#include <array>
#include <utility>

#include "core/base/error.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/profile_codec.hpp"
#include "core/base/rr_codec.hpp"
#include "core/base/traffic_codec.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/base/test_spec_fields.hpp"

namespace nm {

using codec::opt;

namespace {

template <typename E, size_t N>
void enum_to_json(Json& j, E v, const std::array<std::pair<E, const char*>, N>& names) {
    for (const auto& [value, name] : names) {
        if (value == v) {
            j = name;
            return;
        }
    }
    j = nullptr;
}

template <typename E, size_t N>
void enum_from_json(const Json& j, E& v, const std::array<std::pair<E, const char*>, N>& names, const char* what) {
    const auto s = j.get<std::string>();
    for (const auto& [value, name] : names) {
        if (s == name) {
            v = value;
            return;
        }
    }
    std::string expected;
    for (const auto& [value, name] : names) expected += std::string(expected.empty() ? "" : ", ") + name;
    throw usage_error(std::string(what) + ": expected one of " + expected + ", got \"" + s + "\"");
}

constexpr std::array<std::pair<Protocol, const char*>, 2> kProtocols{{{Protocol::Tcp, "tcp"}, {Protocol::Udp, "udp"}}};
constexpr std::array<std::pair<Direction, const char*>, 3> kDirections{
    {{Direction::Forward, "forward"}, {Direction::Reverse, "reverse"}, {Direction::Bidir, "bidir"}}};
// A TestSpec's "test" word; CRR is "rr" with "connect_per_transaction", as a sweep's traffic entry says it.
constexpr std::array<std::pair<TrafficPattern, const char*>, 3> kPatterns{
    {{TrafficPattern::Stream, "stream"}, {TrafficPattern::Rr, "rr"}, {TrafficPattern::Crr, "crr"}}};
constexpr std::array<std::pair<RunStatus, const char*>, 6> kStatuses{{{RunStatus::Ok, "ok"},
                                                                      {RunStatus::Stalled, "stalled"},
                                                                      {RunStatus::PeerLost, "peer_lost"},
                                                                      {RunStatus::Interrupted, "interrupted"},
                                                                      {RunStatus::Limited, "limited"},
                                                                      {RunStatus::Failed, "failed"}}};

// The stats64 fields by their rtnl_link_stats64 names.
#define NM_COUNTER_FIELDS(X)                                                                                   \
    X(rx_packets) X(tx_packets) X(rx_bytes) X(tx_bytes) X(rx_errors) X(tx_errors) X(rx_dropped) X(tx_dropped) \
    X(multicast) X(collisions) X(rx_length_errors) X(rx_over_errors) X(rx_crc_errors) X(rx_frame_errors)      \
    X(rx_fifo_errors) X(rx_missed_errors) X(tx_aborted_errors) X(tx_carrier_errors) X(tx_fifo_errors)         \
    X(tx_heartbeat_errors) X(tx_window_errors) X(rx_nohandler)

Json counters_json(const LinkCounters& c) {
    Json j = Json::object();
#define NM_PUT(f) j[#f] = c.f;
    NM_COUNTER_FIELDS(NM_PUT)
#undef NM_PUT
    return j;
}

LinkCounters counters_from(const Json& j) {
    LinkCounters c;
#define NM_GET(f) opt(j, #f, c.f);
    NM_COUNTER_FIELDS(NM_GET)
#undef NM_GET
    return c;
}

Json end_nic_json(const EndMeasurement& m) {
    return Json{{"iface", m.iface},
                {"before", counters_json(m.counters_before)},
                {"after", counters_json(m.counters_after)}};
}

void end_nic_from(const Json& j, EndMeasurement& m) {
    opt(j, "iface", m.iface);
    if (j.contains("before")) m.counters_before = counters_from(j.at("before"));
    if (j.contains("after")) m.counters_after = counters_from(j.at("after"));
}

}  // namespace

void to_json(Json& j, const Protocol& v) { enum_to_json(j, v, kProtocols); }
void from_json(const Json& j, Protocol& v) { enum_from_json(j, v, kProtocols, "protocol"); }
void to_json(Json& j, const Direction& v) { enum_to_json(j, v, kDirections); }
void from_json(const Json& j, Direction& v) { enum_from_json(j, v, kDirections, "direction"); }
void to_json(Json& j, const RunStatus& v) { enum_to_json(j, v, kStatuses); }
void to_json(Json& j, const TrafficPattern& v) { enum_to_json(j, v, kPatterns); }
void from_json(const Json& j, TrafficPattern& v) { enum_from_json(j, v, kPatterns, "pattern"); }
void from_json(const Json& j, RunStatus& v) { enum_from_json(j, v, kStatuses, "status"); }

void to_json(Json& j, const TestSpec& v) {
    j = Json::object();
    for_each_test_spec_field(v, [&](const TestSpecField& f, const auto& member) { j[f.key] = member; });
    // By hand (NM_TEST_SPEC_HAND_KEYS): the pattern as a traffic entry says it, dscp's "not set".
    j["test"] = v.pattern == TrafficPattern::Stream ? "stream" : "rr";
    j["connect_per_transaction"] = v.pattern == TrafficPattern::Crr;
    j["dscp"] = v.socket.dscp >= 0 ? Json(v.socket.dscp) : Json(nullptr);
    if (v.profile_categories.empty()) j.erase("profile_categories");   // written only when set
    // iperf3's -A: which CPUs each end pins its engine threads to; written only when asked.
    if (!v.client_cpus.empty() || !v.server_cpus.empty()) j["affinity"] = Json{{"client", v.client_cpus}, {"server", v.server_cpus}};
    if (!v.payload_mix.empty()) {
        Json mix = Json::array();
        for (const auto& m : v.payload_mix) mix.push_back({{"payload_bytes", m.payload_bytes}, {"weight", m.weight}});
        j["payload_mix"] = mix;
    }
}

void from_json(const Json& j, TestSpec& v) {
    for_each_test_spec_field(v, [&](const TestSpecField& f, auto& member) { opt(j, f.key, member); });
    v.client_cpus.clear();
    v.server_cpus.clear();
    if (const auto it = j.find("affinity"); it != j.end() && it->is_object()) {
        opt(*it, "client", v.client_cpus);
        opt(*it, "server", v.server_cpus);
    }
    std::string test = "stream";
    opt(j, "test", test);
    if (test != "stream" && test != "rr") throw usage_error("test: expected \"stream\" or \"rr\", got \"" + test + "\"");
    const bool per_transaction = j.value("connect_per_transaction", false);
    v.pattern = test == "stream" ? TrafficPattern::Stream : per_transaction ? TrafficPattern::Crr : TrafficPattern::Rr;
    v.socket.dscp = -1;
    opt(j, "dscp", v.socket.dscp);
    v.payload_mix.clear();
    if (const auto it = j.find("payload_mix"); it != j.end() && it->is_array()) {
        for (const auto& m : *it) {
            v.payload_mix.push_back({checked_integer_field<uint32_t>(m, "payload_bytes"), checked_integer_field<uint32_t>(m, "weight")});
        }
    }
}

void to_json(Json& j, const ProcessCpu& v) { j = Json{{"user_s", v.user_s}, {"sys_s", v.sys_s}, {"util_pct", v.util_pct}}; }

void from_json(const Json& j, ProcessCpu& v) {
    opt(j, "user_s", v.user_s);
    opt(j, "sys_s", v.sys_s);
    opt(j, "util_pct", v.util_pct);
}

void to_json(Json& j, const SystemCpu& v) {
    j = Json{{"busy_pct", v.busy_pct},
             {"user_pct", v.user_pct},
             {"sys_pct", v.sys_pct},
             {"irq_pct", v.irq_pct},
             {"softirq_pct", v.softirq_pct},
             {"steal_pct", v.steal_pct},
             {"busy_cpu_s", v.busy_cpu_s},
             {"per_cpu", v.per_cpu},
             {"busiest_cpu", v.busiest_cpu >= 0 ? Json(v.busiest_cpu) : Json(nullptr)},
             {"busiest_cpu_busy_pct", v.busiest_cpu >= 0 ? Json(v.busiest_cpu_busy_pct) : Json(nullptr)}};
}

void from_json(const Json& j, SystemCpu& v) {
    opt(j, "busy_pct", v.busy_pct);
    opt(j, "user_pct", v.user_pct);
    opt(j, "sys_pct", v.sys_pct);
    opt(j, "irq_pct", v.irq_pct);
    opt(j, "softirq_pct", v.softirq_pct);
    opt(j, "steal_pct", v.steal_pct);
    opt(j, "busy_cpu_s", v.busy_cpu_s);
    opt(j, "per_cpu", v.per_cpu);
    opt(j, "busiest_cpu", v.busiest_cpu);
    opt(j, "busiest_cpu_busy_pct", v.busiest_cpu_busy_pct);
}

void to_json(Json& j, const NapiStats& v) {
    j = Json{{"processed", v.processed},
             {"dropped", v.dropped},
             {"time_squeeze", v.time_squeeze},
             {"interrupts", v.interrupts},
             {"packets", v.packets},
             {"interrupts_per_s", v.interrupts_per_s},
             {"interrupts_per_packet", v.interrupts_per_packet},
             {"processed_per_s", v.processed_per_s},
             {"processed_per_interrupt", v.processed_per_interrupt}};
}

void from_json(const Json& j, NapiStats& v) {
    opt(j, "processed", v.processed);
    opt(j, "dropped", v.dropped);
    opt(j, "time_squeeze", v.time_squeeze);
    opt(j, "interrupts", v.interrupts);
    opt(j, "packets", v.packets);
    opt(j, "interrupts_per_s", v.interrupts_per_s);
    opt(j, "interrupts_per_packet", v.interrupts_per_packet);
    opt(j, "processed_per_s", v.processed_per_s);
    opt(j, "processed_per_interrupt", v.processed_per_interrupt);
}

void to_json(Json& j, const EndMeasurement& v) {
    j = Json{{"iface", v.iface},
             {"cpu", v.cpu},
             {"system", v.system},
             {"napi", v.napi},
             {"counters_before", counters_json(v.counters_before)},
             {"counters_after", counters_json(v.counters_after)},
             {"duration_s", v.duration_s},
             {"io_calls", v.io_calls},
             {"placement", v.placement},
             {"receive_path", v.receive_path},
             {"socket", v.socket}};
    if (v.profile) j["cpu_profile"] = *v.profile;
}

void from_json(const Json& j, EndMeasurement& v) {
    opt(j, "iface", v.iface);
    opt(j, "cpu", v.cpu);
    opt(j, "system", v.system);
    opt(j, "napi", v.napi);
    if (j.contains("counters_before")) v.counters_before = counters_from(j.at("counters_before"));
    if (j.contains("counters_after")) v.counters_after = counters_from(j.at("counters_after"));
    opt(j, "duration_s", v.duration_s);
    opt(j, "io_calls", v.io_calls);
    if (const auto it = j.find("cpu_profile"); it != j.end() && it->is_object()) v.profile = it->get<CpuProfile>();
    opt(j, "placement", v.placement);
    opt(j, "receive_path", v.receive_path);
    opt(j, "socket", v.socket);
}

void to_json(Json& j, const ReceivePath& v) {
    j = Json{{"net_rx_per_cpu", v.net_rx_per_cpu}, {"incoming_cpus", v.incoming_cpus}, {"incoming_napi_ids", v.incoming_napi_ids}};
}

void from_json(const Json& j, ReceivePath& v) {
    opt(j, "net_rx_per_cpu", v.net_rx_per_cpu);
    opt(j, "incoming_cpus", v.incoming_cpus);
    opt(j, "incoming_napi_ids", v.incoming_napi_ids);
}

void to_json(Json& j, const LossStats& v) {
    j = Json{{"sent", v.sent},
             {"received", v.received},
             {"lost", v.lost},
             {"percent", v.percent},
             {"reordered", v.reordered},
             {"jitter_ms", v.jitter_ms},
             {"duplicates", v.duplicates}};
}

void from_json(const Json& j, LossStats& v) {
    opt(j, "sent", v.sent);
    opt(j, "received", v.received);
    opt(j, "lost", v.lost);
    opt(j, "percent", v.percent);
    opt(j, "reordered", v.reordered);
    opt(j, "jitter_ms", v.jitter_ms);
    opt(j, "duplicates", v.duplicates);
}

void to_json(Json& j, const StreamResult& v) {
    j = Json{{"id", v.id},
             {"direction", v.direction},
             {"bytes", v.bytes},
             {"packets", v.packets},
             {"throughput_bps", v.throughput_bps},
             {"retransmits", v.retransmits},
             {"retrans_bytes", v.retrans_bytes},
             {"cwnd", v.cwnd},
             {"rtt_us", v.rtt_us},
             {"pmtu", v.pmtu},
             {"mss", v.mss}};
    if (v.loss) j["loss"] = *v.loss;
}

void from_json(const Json& j, StreamResult& v) {
    opt(j, "id", v.id);
    opt(j, "direction", v.direction);
    opt(j, "bytes", v.bytes);
    opt(j, "packets", v.packets);
    opt(j, "throughput_bps", v.throughput_bps);
    opt(j, "retransmits", v.retransmits);
    opt(j, "retrans_bytes", v.retrans_bytes);
    opt(j, "cwnd", v.cwnd);
    opt(j, "rtt_us", v.rtt_us);
    opt(j, "pmtu", v.pmtu);
    opt(j, "mss", v.mss);
    if (j.contains("loss") && !j.at("loss").is_null()) v.loss = j.at("loss").get<LossStats>();
}

void to_json(Json& j, const IntervalSample& v) {
    j = Json{{"start_s", v.start_s},
             {"end_s", v.end_s},
             {"bytes", v.bytes},
             {"packets", v.packets},
             {"throughput_bps", v.throughput_bps},
             {"packets_per_s", v.packets_per_s}};
}

void to_json(Json& j, const LiveInterval& v) {
    const double span = v.end_s - v.start_s;
    const auto bps = [&](uint64_t bytes) { return span > 0 ? 8.0 * static_cast<double>(bytes) / span : 0.0; };
    j = Json{{"index", v.index},
             {"start_s", v.start_s},
             {"end_s", v.end_s},
             {"sent_bytes", v.sent_bytes},
             {"received_bytes", v.received_bytes},
             {"sent_bps", bps(v.sent_bytes)},
             {"received_bps", bps(v.received_bytes)}};
}

void from_json(const Json& j, IntervalSample& v) {
    opt(j, "start_s", v.start_s);
    opt(j, "end_s", v.end_s);
    opt(j, "bytes", v.bytes);
    opt(j, "packets", v.packets);
    opt(j, "throughput_bps", v.throughput_bps);
    opt(j, "packets_per_s", v.packets_per_s);
}

void to_json(Json& j, const BackgroundLoad& v) {
    j = Json{{"busy_pct", v.busy_pct}, {"steal_pct", v.steal_pct}, {"window_s", v.window_s}, {"waited_s", v.waited_s}};
}

void from_json(const Json& j, BackgroundLoad& v) {
    opt(j, "busy_pct", v.busy_pct);
    opt(j, "steal_pct", v.steal_pct);
    opt(j, "window_s", v.window_s);
    opt(j, "waited_s", v.waited_s);
}

void to_json(Json& j, const Iperf3StreamFigures& v) {
    j = Json{{"id", v.id},
             {"stream", v.stream},
             {"peer_sent", v.peer_sent},
             {"bytes", v.bytes},
             {"retransmits", v.retransmits ? Json(*v.retransmits) : Json(nullptr)},
             {"duration_s", v.duration_s}};
}

void from_json(const Json& j, Iperf3StreamFigures& v) {
    opt(j, "id", v.id);
    opt(j, "stream", v.stream);
    opt(j, "peer_sent", v.peer_sent);
    opt(j, "bytes", v.bytes);
    opt(j, "retransmits", v.retransmits);
    opt(j, "duration_s", v.duration_s);
}

void to_json(Json& j, const Iperf3PeerFigures& v) {
    const auto text_or_null = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    j = Json{{"kind", "iperf3"},
             {"version", text_or_null(v.version)},
             {"system_info", text_or_null(v.system_info)},
             {"cpu", Json{{"total_pct", v.cpu_total_pct}, {"user_pct", v.cpu_user_pct}, {"system_pct", v.cpu_system_pct}}},
             {"bytes_received", v.bytes_received},
             {"bytes_sent", v.bytes_sent},
             {"duration_s", v.duration_s},
             {"received_bps", v.received_bps},
             {"sent_bps", v.sent_bps},
             {"retransmits", v.retransmits ? Json(*v.retransmits) : Json(nullptr)},
             {"congestion", text_or_null(v.congestion)},
             {"told", Json{{"omit_s", v.omit_s}, {"time_s", v.time_s}}},
             {"streams", v.streams},
             {"figures_from_peer", v.figures_from_peer}};
}

void from_json(const Json& j, Iperf3PeerFigures& v) {
    opt(j, "version", v.version);
    opt(j, "system_info", v.system_info);
    if (const auto it = j.find("cpu"); it != j.end() && it->is_object()) {
        opt(*it, "total_pct", v.cpu_total_pct);
        opt(*it, "user_pct", v.cpu_user_pct);
        opt(*it, "system_pct", v.cpu_system_pct);
    }
    opt(j, "bytes_received", v.bytes_received);
    opt(j, "bytes_sent", v.bytes_sent);
    opt(j, "duration_s", v.duration_s);
    opt(j, "received_bps", v.received_bps);
    opt(j, "sent_bps", v.sent_bps);
    opt(j, "retransmits", v.retransmits);
    opt(j, "congestion", v.congestion);
    if (const auto it = j.find("told"); it != j.end() && it->is_object()) {
        opt(*it, "omit_s", v.omit_s);
        opt(*it, "time_s", v.time_s);
    }
    opt(j, "streams", v.streams);
    opt(j, "figures_from_peer", v.figures_from_peer);
}

void to_json(Json& j, const RunResult& v) {
    // A stock iperf3 far end measures nothing of its end that nicmatrix records: that end's figures are
    // null (absent), not zero. The far end is the receiver, or the sender with -R.
    const bool peer_sender = v.iperf3_peer && v.spec.direction == Direction::Reverse;
    const bool peer_receiver = v.iperf3_peer && !peer_sender;
    const auto end = [&](bool absent, Json value) { return absent ? Json(nullptr) : std::move(value); };
    const auto cpu_end = [](const EndMeasurement& m) { return Json(m.cpu); };
    Json nic_receiver = end_nic_json(v.receiver);
    nic_receiver["rx_bytes_delta"] = v.receiver_rx_bytes;
    nic_receiver["rx_packets_delta"] = v.receiver_rx_packets;
    j = Json{{"spec", v.spec},
             {"status", v.status},
             {"error", v.error},
             {"throughput_bps", v.throughput_bps},
             {"packets_per_s", v.packets_per_s},
             {"packets_source", v.packets_source},
             {"segments_per_packet", v.segments_per_packet > 0 ? Json(v.segments_per_packet) : Json(nullptr)},
             {"bytes", v.bytes},
             {"packets", v.packets},
             {"duration_s", v.duration_s},
             {"streams", v.streams},
             {"loss", v.loss ? Json(*v.loss) : Json(nullptr)},
             {"tcp", Json{{"retransmits", v.tcp_retransmits}, {"retrans_bytes", v.tcp_retrans_bytes}}},
             {"cpu", Json{{"sender", end(peer_sender, cpu_end(v.sender))},
                          {"receiver", end(peer_receiver, cpu_end(v.receiver))},
                          {"system", Json{{"sender", end(peer_sender, v.sender.system)}, {"receiver", end(peer_receiver, v.receiver.system)}}},
                          {"service_demand_us_per_kb",
                           Json{{"sender", end(peer_sender, v.sender_service_demand_us_per_kb)},
                                {"receiver", end(peer_receiver, v.receiver_service_demand_us_per_kb)}}}}},
             {"placement", Json{{"sender", end(peer_sender, v.sender.placement)}, {"receiver", end(peer_receiver, v.receiver.placement)}}},
             {"receive_path", Json{{"sender", end(peer_sender, v.sender.receive_path)}, {"receiver", end(peer_receiver, v.receiver.receive_path)}}},
             {"io_calls", v.io_calls},
             {"calls_per_s", v.calls_per_s},
             {"ms_per_call", v.ms_per_call},
             {"engine_service_demand_us_per_kb", end(v.iperf3_peer.has_value(), v.engine_service_demand_us_per_kb)},
             {"intervals", v.intervals},
             {"nic", Json{{"sender", end(peer_sender, end_nic_json(v.sender))},
                          {"receiver", end(peer_receiver, nic_receiver)},
                          {"engine", Json{{"bytes", v.bytes}, {"packets", v.packets}}}}},
             {"napi", Json{{"sender", end(peer_sender, v.sender.napi)}, {"receiver", end(peer_receiver, v.receiver.napi)}}},
             {"ends", Json{{"sender", end(peer_sender, Json{{"duration_s", v.sender.duration_s}, {"io_calls", v.sender.io_calls}, {"socket", v.sender.socket}})},
                           {"receiver",
                            end(peer_receiver, Json{{"duration_s", v.receiver.duration_s}, {"io_calls", v.receiver.io_calls}, {"socket", v.receiver.socket}})}}},
             {"cpu_profile", Json{{"sender", v.sender.profile ? Json(*v.sender.profile) : Json(nullptr)},
                                  {"receiver", v.receiver.profile ? Json(*v.receiver.profile) : Json(nullptr)}}},
             {"rr", v.rr ? Json(*v.rr) : Json(nullptr)},
             {"socket", v.socket}};
    // A sweep's own fields; `nicmatrix run --json` has none of them.
    if (!v.started.empty()) j["started"] = v.started;
    if (v.link) j["link"] = *v.link;
    if (v.background) {
        j["background"] = *v.background;
        j["disturbed"] = v.disturbed;
    }
    if (v.iperf3_peer) j["peer"] = *v.iperf3_peer;
}

void from_json(const Json& j, RunResult& v) {
    opt(j, "spec", v.spec);
    opt(j, "status", v.status);
    opt(j, "error", v.error);
    opt(j, "throughput_bps", v.throughput_bps);
    opt(j, "packets_per_s", v.packets_per_s);
    opt(j, "packets_source", v.packets_source);
    opt(j, "segments_per_packet", v.segments_per_packet);
    opt(j, "bytes", v.bytes);
    opt(j, "packets", v.packets);
    opt(j, "duration_s", v.duration_s);
    opt(j, "streams", v.streams);
    if (j.contains("loss") && !j.at("loss").is_null()) v.loss = j.at("loss").get<LossStats>();
    if (j.contains("tcp")) {
        opt(j.at("tcp"), "retransmits", v.tcp_retransmits);
        opt(j.at("tcp"), "retrans_bytes", v.tcp_retrans_bytes);
    }
    if (j.contains("cpu")) {
        const auto& cpu = j.at("cpu");
        opt(cpu, "sender", v.sender.cpu);
        opt(cpu, "receiver", v.receiver.cpu);
        if (cpu.contains("system")) {
            opt(cpu.at("system"), "sender", v.sender.system);
            opt(cpu.at("system"), "receiver", v.receiver.system);
        }
        if (const auto sd = cpu.find("service_demand_us_per_kb"); sd != cpu.end() && sd->is_object()) {
            opt(*sd, "sender", v.sender_service_demand_us_per_kb);
            opt(*sd, "receiver", v.receiver_service_demand_us_per_kb);
        }
    }
    if (const auto it = j.find("placement"); it != j.end() && it->is_object()) {
        opt(*it, "sender", v.sender.placement);
        opt(*it, "receiver", v.receiver.placement);
    }
    if (const auto it = j.find("receive_path"); it != j.end() && it->is_object()) {
        opt(*it, "sender", v.sender.receive_path);
        opt(*it, "receiver", v.receiver.receive_path);
    }
    opt(j, "io_calls", v.io_calls);
    opt(j, "calls_per_s", v.calls_per_s);
    opt(j, "ms_per_call", v.ms_per_call);
    // Files written before the rename call the engines' figure service_demand_us_per_kb.
    opt(j, "service_demand_us_per_kb", v.engine_service_demand_us_per_kb);
    opt(j, "engine_service_demand_us_per_kb", v.engine_service_demand_us_per_kb);
    opt(j, "intervals", v.intervals);
    opt(j, "started", v.started);
    if (const auto it = j.find("background"); it != j.end() && !it->is_null()) v.background = it->get<BackgroundLoad>();
    opt(j, "disturbed", v.disturbed);
    if (const auto it = j.find("link"); it != j.end() && !it->is_null()) v.link = it->get<ChangeLink>();
    if (j.contains("nic")) {
        const auto& nic = j.at("nic");
        if (nic.contains("sender") && nic.at("sender").is_object()) end_nic_from(nic.at("sender"), v.sender);
        if (nic.contains("receiver") && nic.at("receiver").is_object()) {
            end_nic_from(nic.at("receiver"), v.receiver);
            opt(nic.at("receiver"), "rx_bytes_delta", v.receiver_rx_bytes);
            opt(nic.at("receiver"), "rx_packets_delta", v.receiver_rx_packets);
        }
    }
    if (j.contains("napi")) {
        opt(j.at("napi"), "sender", v.sender.napi);
        opt(j.at("napi"), "receiver", v.receiver.napi);
    }
    if (j.contains("ends")) {
        const auto& ends = j.at("ends");
        if (ends.contains("sender") && ends.at("sender").is_object()) {
            opt(ends.at("sender"), "duration_s", v.sender.duration_s);
            opt(ends.at("sender"), "io_calls", v.sender.io_calls);
            opt(ends.at("sender"), "socket", v.sender.socket);
        }
        if (ends.contains("receiver") && ends.at("receiver").is_object()) {
            opt(ends.at("receiver"), "duration_s", v.receiver.duration_s);
            opt(ends.at("receiver"), "io_calls", v.receiver.io_calls);
            opt(ends.at("receiver"), "socket", v.receiver.socket);
        }
    }
    if (const auto it = j.find("cpu_profile"); it != j.end() && it->is_object()) {
        for (auto [key, end] : {std::pair{"sender", &v.sender}, {"receiver", &v.receiver}}) {
            if (const auto p = it->find(key); p != it->end() && p->is_object()) end->profile = p->get<CpuProfile>();
        }
    }
    if (const auto it = j.find("rr"); it != j.end() && !it->is_null()) v.rr = it->get<RrStats>();
    opt(j, "socket", v.socket);
    if (const auto it = j.find("peer"); it != j.end() && it->is_object()) v.iperf3_peer = it->get<Iperf3PeerFigures>();
}

void to_json(Json& j, const EndReport& v) {
    j = Json{{"status", v.status},
             {"error", v.error},
             {"measurement", v.measurement},
             {"sent_bytes", v.sent_bytes},
             {"sent_packets", v.sent_packets},
             {"received_bytes", v.received_bytes},
             {"received_packets", v.received_packets},
             {"send_calls", v.send_calls},
             {"recv_calls", v.recv_calls},
             {"sent", v.sent},
             {"received", v.received},
             {"sent_intervals", v.sent_intervals},
             {"received_intervals", v.received_intervals},
             {"threads", Json{{"send", v.send_tids}, {"recv", v.recv_tids}}},
             {"profile_shared", v.profile_shared},
             {"rr", v.rr ? Json(*v.rr) : Json(nullptr)}};
}

void from_json(const Json& j, EndReport& v) {
    opt(j, "status", v.status);
    opt(j, "error", v.error);
    opt(j, "measurement", v.measurement);
    opt(j, "sent_bytes", v.sent_bytes);
    opt(j, "sent_packets", v.sent_packets);
    opt(j, "received_bytes", v.received_bytes);
    opt(j, "received_packets", v.received_packets);
    opt(j, "send_calls", v.send_calls);
    opt(j, "recv_calls", v.recv_calls);
    opt(j, "sent", v.sent);
    opt(j, "received", v.received);
    opt(j, "sent_intervals", v.sent_intervals);
    opt(j, "received_intervals", v.received_intervals);
    if (const auto it = j.find("threads"); it != j.end() && it->is_object()) {
        opt(*it, "send", v.send_tids);
        opt(*it, "recv", v.recv_tids);
    }
    opt(j, "profile_shared", v.profile_shared);
    if (const auto it = j.find("rr"); it != j.end() && !it->is_null()) v.rr = it->get<RrEndCounts>();
}

}  // namespace nm
