#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/traffic/cpu_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace {

nm::RunResult sample() {
    nm::RunResult r;
    r.spec.host = "198.18.0.2";
    r.spec.protocol = nm::Protocol::Udp;
    r.spec.direction = nm::Direction::Bidir;
    r.spec.write_size = 18;
    r.spec.rate_pps = 1000;
    r.status = nm::RunStatus::Stalled;
    r.error = "stalled";
    r.throughput_bps = 1e9;
    r.packets_per_s = 5e5;
    r.bytes = 123456789;
    r.packets = 1000;
    r.duration_s = 2.5;
    nm::StreamResult s;
    s.id = 3;
    s.direction = nm::Direction::Reverse;
    s.bytes = 99;
    s.retransmits = 4;
    s.loss = nm::LossStats{10, 9, 1, 2, 3, 10.0, 0.25};
    r.streams = {s};
    r.loss = nm::LossStats{10, 9, 1, 2, 3, 10.0, 0.25};
    r.tcp_retransmits = 4;
    r.sender.iface = "nm-a";
    r.sender.cpu = {0.5, 1.5, 80};
    r.sender.system.busy_pct = 50;
    r.sender.system.user_pct = 10;
    r.sender.system.sys_pct = 20;
    r.sender.system.irq_pct = 1;
    r.sender.system.softirq_pct = 19;
    r.sender.napi = {100, 1, 2, 3};
    r.sender.counters_before.tx_bytes = 7;
    r.sender.counters_after.tx_bytes = 70;
    r.sender.duration_s = 2.4;
    r.receiver.iface = "nm-b";
    r.receiver.cpu = {0.25, 0.75, 40};
    r.receiver.counters_after.rx_packets = 11;
    r.receiver.io_calls = 77;
    r.io_calls = 77;
    r.calls_per_s = 30.8;
    r.ms_per_call = 32.4;
    r.engine_service_demand_us_per_kb = 1.5;
    r.sender_service_demand_us_per_kb = 4.5;
    r.receiver_service_demand_us_per_kb = 3.25;
    r.packets_source = "interface";
    r.segments_per_packet = 12.5;
    r.spec.client_cpus = {0};
    r.spec.server_cpus = {1, 2};
    r.sender.system.steal_pct = 2;
    r.sender.system.busy_cpu_s = 2.5;
    r.sender.system.per_cpu = {nm::PerCpu{0, 90, 30, 40, 0, 20, 1}, nm::PerCpu{1, 10, 5, 5, 0, 0, 0}};
    r.sender.system.busiest_cpu = 0;
    r.sender.system.busiest_cpu_busy_pct = 90;
    r.sender.placement = {0};
    r.receiver.placement = {1, 2};
    r.streams[0].mss = 1448;
    r.intervals = {nm::IntervalSample{0, 1, 100, 10, 800, 10}};
    r.receiver_rx_bytes = 1000;
    r.receiver_rx_packets = 11;
    return r;
}

}  // namespace

TEST_CASE("RunResult JSON has the documented keys", "[unit]") {
    const nm::Json j = sample();
    for (const char* key : {"throughput_bps",
                            "packets_per_s",
                            "bytes",
                            "duration_s",
                            "streams",
                            "loss",
                            "tcp",
                            "cpu",
                            "io_calls",
                            "calls_per_s",
                            "ms_per_call",
                            "engine_service_demand_us_per_kb",
                            "intervals",
                            "nic",
                            "napi",
                            "status",
                            "error",
                            "placement",
                            "packets_source",
                            "segments_per_packet"}) {
        INFO(key);
        CHECK(j.contains(key));
    }
    CHECK(j.at("loss").at("lost") == 1);
    CHECK(j.at("loss").at("jitter_ms") == 0.25);
    CHECK(j.at("tcp").at("retransmits") == 4);
    CHECK(j.at("cpu").at("sender").at("sys_s") == 1.5);
    CHECK(j.at("cpu").at("receiver").at("util_pct") == 40);
    CHECK(j.at("cpu").at("system").at("sender").at("softirq_pct") == 19);
    CHECK(j.at("nic").at("receiver").at("rx_bytes_delta") == 1000);
    CHECK(j.at("nic").at("sender").at("before").at("tx_bytes") == 7);
    CHECK(j.at("status") == "stalled");
    CHECK(j.at("spec").at("protocol") == "udp");
    CHECK(j.at("spec").at("direction") == "bidir");
    CHECK_FALSE(j.contains("service_demand_us_per_kb"));  // renamed: engine_service_demand_us_per_kb
    CHECK(j.at("cpu").at("service_demand_us_per_kb").at("sender") == 4.5);
    CHECK(j.at("cpu").at("service_demand_us_per_kb").at("receiver") == 3.25);
    const auto& sys = j.at("cpu").at("system").at("sender");
    CHECK(sys.at("per_cpu").size() == 2);
    CHECK(sys.at("per_cpu").at(0).at("softirq_pct") == 20);
    CHECK(sys.at("busiest_cpu") == 0);
    CHECK(sys.at("busiest_cpu_busy_pct") == 90);
    CHECK(j.at("cpu").at("system").at("receiver").at("busiest_cpu").is_null());  // no per-CPU figures
    CHECK(j.at("placement").at("receiver") == nm::Json::array({1, 2}));
    CHECK(j.at("spec").at("affinity").at("server") == nm::Json::array({1, 2}));
    CHECK(j.at("streams").at(0).at("mss") == 1448);
}

TEST_CASE("An old run reads back: service_demand_us_per_kb is the engines' figure, no per-CPU, no placement", "[unit]") {
    const nm::Json old = {{"throughput_bps", 1e9},
                          {"packets_per_s", 86000},
                          {"service_demand_us_per_kb", 0.75},
                          {"cpu", {{"sender", {{"user_s", 0.1}}}, {"system", {{"sender", {{"busy_pct", 50}}}}}}},
                          {"spec", {{"host", "h"}}}};
    const auto r = old.get<nm::RunResult>();
    CHECK(r.engine_service_demand_us_per_kb == 0.75);
    CHECK(r.sender_service_demand_us_per_kb == 0);
    CHECK(r.sender.system.busy_pct == 50);
    CHECK(r.sender.system.per_cpu.empty());
    CHECK(r.sender.system.busiest_cpu == -1);
    CHECK(r.sender.placement.empty());
    CHECK(r.spec.client_cpus.empty());
    CHECK(r.packets_source.empty());
}

TEST_CASE("RunResult and EndReport round-trip through JSON", "[unit]") {
    const nm::RunResult r = sample();
    const nm::Json j = r;
    const auto back = j.get<nm::RunResult>();
    CHECK(nm::Json(back) == j);

    nm::EndReport e;
    e.status = nm::RunStatus::PeerLost;
    e.measurement = r.sender;
    e.sent = r.streams;
    e.received = r.streams;
    e.sent_bytes = 5;
    e.recv_calls = 6;
    e.received_intervals = r.intervals;
    const nm::Json ej = e;
    CHECK(nm::Json(ej.get<nm::EndReport>()) == ej);
}

TEST_CASE("Traffic enums reject unknown words naming the field", "[unit]") {
    CHECK_THROWS_WITH(nm::Json("sctp").get<nm::Protocol>(), Catch::Contains("protocol") && Catch::Contains("sctp"));
    CHECK_THROWS_AS(nm::Json("sideways").get<nm::Direction>(), nm::Error);
    nm::TestSpec partial = nm::Json{{"host", "h"}, {"protocol", "udp"}}.get<nm::TestSpec>();
    CHECK(partial.host == "h");
    CHECK(partial.protocol == nm::Protocol::Udp);
    CHECK(partial.port == nm::kDefaultPort);
}

TEST_CASE("Every run status has a JSON word and reads back (failed: a worker's error)", "[unit]") {
    const std::pair<nm::RunStatus, const char*> all[] = {{nm::RunStatus::Ok, "ok"},
                                                         {nm::RunStatus::Stalled, "stalled"},
                                                         {nm::RunStatus::PeerLost, "peer_lost"},
                                                         {nm::RunStatus::Interrupted, "interrupted"},
                                                         {nm::RunStatus::Failed, "failed"}};
    for (const auto& [status, word] : all) {
        CHECK(nm::Json(status) == word);
        CHECK(nm::Json(word).get<nm::RunStatus>() == status);
    }
}
