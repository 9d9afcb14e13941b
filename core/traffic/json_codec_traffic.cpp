#include <array>
#include <utility>

#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/device/device_codec.hpp"
#include "core/profile/profile_codec.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/test_spec_fields.hpp"
#include "core/traffic/traffic_codec.hpp"

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

Json end_nic_json(const EndMeasurement& m) { return Json{{"iface", m.iface}, {"before", m.counters_before}, {"after", m.counters_after}}; }

void end_nic_from(const Json& j, EndMeasurement& m) {
    opt(j, "iface", m.iface);
    opt(j, "before", m.counters_before);
    opt(j, "after", m.counters_after);
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
    if (v.profile_categories.empty()) j.erase("profile_categories");  // written only when set
    // iperf3's -A: which CPUs each end pins its engine threads to; written only when asked.
    if (!v.client_cpus.empty() || !v.server_cpus.empty()) j["affinity"] = Json{{"client", v.client_cpus}, {"server", v.server_cpus}};
    if (!v.payload_mix.empty()) j["payload_mix"] = v.payload_mix;
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

// The listed fields (traffic_types.hpp) and the busiest CPU's busy_pct, null when no CPU was read.
void to_json(Json& j, const SystemCpu& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["busiest_cpu_busy_pct"] = v.busiest_cpu >= 0 ? Json(v.busiest_cpu_busy_pct) : Json(nullptr);
}

void from_json(const Json& j, SystemCpu& v) {
    read_fields(j, v, json_fields_and_more(&v));
    opt(j, "busiest_cpu_busy_pct", v.busiest_cpu_busy_pct);
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

// The listed fields (traffic_types.hpp) and the constant "kind", written for the reader, not read.
void to_json(Json& j, const Iperf3PeerFigures& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["kind"] = "iperf3";
}

void from_json(const Json& j, Iperf3PeerFigures& v) { read_fields(j, v, json_fields_and_more(&v)); }

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
    j = Json{
        {"spec", v.spec},
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
                     {"service_demand_us_per_kb", Json{{"sender", end(peer_sender, v.sender_service_demand_us_per_kb)},
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
        {"ends",
         Json{{"sender", end(peer_sender, Json{{"duration_s", v.sender.duration_s}, {"io_calls", v.sender.io_calls}, {"socket", v.sender.socket}})},
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

}  // namespace nm
