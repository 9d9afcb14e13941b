#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/traffic_session.hpp"

using Catch::Contains;

namespace {

nm::TestSpec tcp() {
    nm::TestSpec s;
    s.host = "198.18.0.2";
    return s;
}

nm::TestSpec udp() {
    nm::TestSpec s = tcp();
    s.protocol = nm::Protocol::Udp;
    return s;
}

}  // namespace

TEST_CASE("resolve_spec fills the automatic values", "[unit]") {
    const auto t = nm::resolve_spec(tcp(), 4);
    CHECK(t.streams == 1);
    CHECK(t.threads == 1);
    CHECK(t.write_size == 128 * 1024);
    const auto u = nm::resolve_spec(udp(), 4);
    CHECK(u.streams == 4);   // unlimited UDP: one sender per core
    CHECK(u.threads == 4);
    CHECK(u.write_size == 1472);
    auto paced = udp();
    paced.rate_bps = 50e6;
    CHECK(nm::resolve_spec(paced, 4).streams == 1);
    auto many = tcp();
    many.streams = 10;
    many.threads = 3;
    CHECK(nm::resolve_spec(many, 2).threads == 3);
    auto bytes = tcp();
    bytes.bytes = 1000;
    bytes.omit_s = 2;
    CHECK(nm::resolve_spec(bytes, 2).omit_s == 0);
}

TEST_CASE("resolve_spec rejects impossible input naming the field", "[unit]") {
    auto s = udp();
    s.write_size = 17;
    CHECK_THROWS_WITH(nm::resolve_spec(s, 2), Contains("length") && Contains("18..65507"));
    s.write_size = 65508;
    CHECK_THROWS_WITH(nm::resolve_spec(s, 2), Contains("18..65507"));
    auto d = tcp();
    d.duration_s = -1;
    CHECK_THROWS_WITH(nm::resolve_spec(d, 2), Contains("duration"));
    d.duration_s = 0;
    CHECK_THROWS_WITH(nm::resolve_spec(d, 2), Contains("duration"));
    auto r = udp();
    r.rate_bps = 1e6;
    r.rate_pps = 10;
    CHECK_THROWS_WITH(nm::resolve_spec(r, 2), Contains("not both"));
    auto g = tcp();
    g.udp_gso = true;
    CHECK_THROWS_WITH(nm::resolve_spec(g, 2), Contains("add -u"));
    auto p = tcp();
    p.streams = 1000;
    CHECK_THROWS_WITH(nm::resolve_spec(p, 2), Contains("streams"));
    try {
        nm::resolve_spec(s, 2);
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
    }
}

TEST_CASE("combine_reports: UDP loss from the sender's count and the receiver's unique datagrams", "[unit]") {
    auto spec = nm::resolve_spec(udp(), 2);
    spec.streams = 2;
    nm::EndReport client, server;
    client.measurement.cpu = {0.1, 0.9, 50};
    server.measurement.cpu = {0.2, 0.8, 50};
    server.measurement.duration_s = 2;
    server.measurement.iface = "nm-b";
    server.measurement.counters_before.rx_bytes = 1000;
    server.measurement.counters_after.rx_bytes = 1000 + 2000 * 60;
    server.measurement.counters_after.rx_packets = 2000;
    for (uint32_t id = 0; id < 2; ++id) {
        nm::StreamResult s;
        s.id = id;
        s.loss = nm::LossStats{};
        s.loss->sent = 1000;
        client.sent.push_back(s);
        nm::StreamResult r;
        r.id = id;
        r.bytes = 990 * 18;
        r.packets = 990;
        r.loss = nm::LossStats{};
        r.loss->received = 990;
        r.loss->duplicates = id;
        r.loss->jitter_ms = 0.5 * (id + 1);
        server.received.push_back(r);
    }
    server.recv_calls = 100;
    const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    REQUIRE(res.streams.size() == 2);
    REQUIRE(res.loss);
    CHECK(res.loss->sent == 2000);
    CHECK(res.loss->received == 1980);
    CHECK(res.loss->lost == 20);
    CHECK(res.loss->percent == Approx(1.0));
    CHECK(res.loss->duplicates == 1);
    CHECK(res.loss->jitter_ms == Approx(1.0));
    CHECK(res.packets == 1980);
    CHECK(res.bytes == 1980 * 18);
    CHECK(res.packets_per_s == Approx(990));
    CHECK(res.throughput_bps == Approx(1980.0 * 18 * 8 / 2));
    CHECK(res.io_calls == 100);
    CHECK(res.calls_per_s == Approx(50));
    CHECK(res.ms_per_call == Approx(20));
    CHECK(res.service_demand_us_per_kb == Approx(2.0 * 1e6 / (1980.0 * 18 / 1024)));
    CHECK(res.receiver_rx_bytes == 2000 * 60);
    CHECK(res.receiver_rx_packets == 2000);
    CHECK(res.sender.cpu.sys_s == Approx(0.9));
    CHECK(res.receiver.cpu.sys_s == Approx(0.8));
}

TEST_CASE("combine_reports: reverse swaps the ends, TCP takes TCP_INFO from the sender", "[unit]") {
    auto spec = tcp();
    spec.direction = nm::Direction::Reverse;
    spec = nm::resolve_spec(spec, 2);
    nm::EndReport client, server;
    client.measurement.duration_s = 1;
    client.measurement.cpu.sys_s = 0.4;
    server.measurement.cpu.sys_s = 0.7;
    nm::StreamResult sent;
    sent.retransmits = 7;
    sent.cwnd = 10;
    sent.pmtu = 1500;
    sent.direction = nm::Direction::Reverse;
    server.sent.push_back(sent);
    nm::StreamResult got;
    got.bytes = 1448 * 1000;
    got.direction = nm::Direction::Reverse;
    client.received.push_back(got);
    const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    CHECK(res.sender.cpu.sys_s == Approx(0.7));
    CHECK(res.receiver.cpu.sys_s == Approx(0.4));
    CHECK(res.tcp_retransmits == 7);
    REQUIRE(res.streams.size() == 1);
    CHECK(res.streams[0].cwnd == 10);
    CHECK(res.packets == 1000);
    CHECK(res.throughput_bps == Approx(1448.0 * 1000 * 8));
    CHECK_FALSE(res.loss);
}

TEST_CASE("combine_reports: TCP segments from the path MTU less the headers of the family (52 bytes IPv4, 72 IPv6)", "[unit]") {
    CHECK(nm::tcp_ip_header_bytes(AF_INET) == 52);
    CHECK(nm::tcp_ip_header_bytes(AF_INET6) == 72);
    const auto spec = nm::resolve_spec(tcp(), 2);
    nm::EndReport client, server;
    client.measurement.duration_s = 1;
    nm::StreamResult sent;
    sent.pmtu = 9000;
    client.sent.push_back(sent);
    nm::StreamResult got;
    got.bytes = 8928ull * 1000;   // 1000 IPv6 segments of 9000 - 72; 997.8 IPv4 ones of 9000 - 52
    server.received.push_back(got);
    CHECK(nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "", AF_INET6).packets == 1000);
    CHECK(nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "", AF_INET).packets == 998);
}

TEST_CASE("combine_reports keeps the worse status and its error", "[unit]") {
    nm::EndReport client, server;
    server.status = nm::RunStatus::Stalled;
    server.error = "stalled: no data moved";
    const auto res = nm::combine_reports(nm::resolve_spec(tcp(), 2), client, server, nm::RunStatus::Ok, "");
    CHECK(res.status == nm::RunStatus::Stalled);
    CHECK(res.error == "stalled: no data moved");
}

TEST_CASE("combine_reports: a worker error on either end makes an ok run failed", "[unit]") {
    const auto spec = nm::resolve_spec(udp(), 2);
    for (const bool on_client : {true, false}) {
        nm::EndReport client, server;
        nm::EndReport& failed = on_client ? client : server;
        failed.status = nm::RunStatus::Failed;
        failed.error = "stream 0: sendmmsg: Invalid argument";
        const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
        CHECK(res.status == nm::RunStatus::Failed);
        CHECK(res.error == "stream 0: sendmmsg: Invalid argument");
    }
    // The control loop's own verdict comes first.
    nm::EndReport client, server;
    client.status = nm::RunStatus::Failed;
    client.error = "stream 0: send: Connection reset by peer";
    const auto lost = nm::combine_reports(spec, client, server, nm::RunStatus::PeerLost, "server lost");
    CHECK(lost.status == nm::RunStatus::PeerLost);
    CHECK(lost.error == "server lost");
}
