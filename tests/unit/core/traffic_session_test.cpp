#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <limits>
#include <thread>

#include "core/base/error.hpp"
#include "core/session/traffic_session.hpp"

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
    CHECK(t.write_size == 0);  // TCP: whole send units, chosen by the sender once it knows the MSS
    const auto plan = nm::plan_for(t, nm::Direction::Forward, "");
    CHECK(plan.whole_units);
    CHECK(plan.write_size == nm::kDefaultTcpWrite);
    auto exact = tcp();
    exact.write_size = 131072;
    CHECK(nm::resolve_spec(exact, 4).write_size == 131072);
    CHECK_FALSE(nm::plan_for(nm::resolve_spec(exact, 4), nm::Direction::Forward, "").whole_units);
    const auto u = nm::resolve_spec(udp(), 4);
    CHECK(u.streams == 4);  // unlimited UDP: one sender per core
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
        r.bytes = 990UL * 18;
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
    CHECK(res.bytes == 1980UL * 18);
    CHECK(res.packets_per_s == Approx(990));
    CHECK(res.throughput_bps == Approx(1980.0 * 18 * 8 / 2));
    CHECK(res.io_calls == 100);
    CHECK(res.calls_per_s == Approx(50));
    CHECK(res.ms_per_call == Approx(20));
    CHECK(res.engine_service_demand_us_per_kb == Approx(2.0 * 1e6 / (1980.0 * 18 / 1024)));
    CHECK(res.packets_source == "datagrams");
    CHECK(res.segments_per_packet == 0);
    CHECK(res.receiver_rx_bytes == 2000UL * 60);
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
    got.bytes = 1448UL * 1000;
    got.direction = nm::Direction::Reverse;
    client.received.push_back(got);
    const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    CHECK(res.sender.cpu.sys_s == Approx(0.7));
    CHECK(res.receiver.cpu.sys_s == Approx(0.4));
    CHECK(res.tcp_retransmits == 7);
    REQUIRE(res.streams.size() == 1);
    CHECK(res.streams[0].cwnd == 10);
    CHECK(res.packets == 1000);  // no interface counters: bytes / (PMTU - 52), named an estimate
    CHECK(res.packets_source == "estimate");
    CHECK(res.segments_per_packet == 0);
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
    got.bytes = 8928ull * 1000;  // 1000 IPv6 segments of 9000 - 72; 997.8 IPv4 ones of 9000 - 52
    server.received.push_back(got);
    CHECK(nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "", AF_INET6).packets == 1000);
    CHECK(nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "", AF_INET).packets == 998);
}

TEST_CASE("combine_reports: TCP packets from the receiving interface, segments per packet from the sender's MSS", "[unit]") {
    const auto spec = nm::resolve_spec(tcp(), 2);
    nm::EndReport client, server;
    client.measurement.duration_s = 2;
    server.measurement.duration_s = 2;
    server.measurement.iface = "nm-b";
    server.measurement.counters_before.rx_packets = 500;
    server.measurement.counters_after.rx_packets = 500 + 4000;  // 2000 packets/s on the wire
    nm::StreamResult sent;
    sent.mss = 1448;
    sent.pmtu = 1500;
    sent.retrans_bytes = 1448UL * 100;
    client.sent.push_back(sent);
    nm::StreamResult got;
    got.bytes = 1448UL * 39900;
    server.received.push_back(got);
    const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    CHECK(res.packets_source == "interface");
    CHECK(res.packets == 4000);
    CHECK(res.packets_per_s == Approx(2000));
    // (39900 + 100 retransmitted) segments of 1448 bytes arrived in 4000 packets: 10 per packet (GRO/TSO).
    CHECK(res.segments_per_packet == Approx(10.0));

    // Bidir: both interfaces' packets, and no ratio (each counts the other direction's ACKs too).
    auto bidir = tcp();
    bidir.direction = nm::Direction::Bidir;
    bidir = nm::resolve_spec(bidir, 2);
    client.measurement.iface = "nm-a";
    client.measurement.counters_after.rx_packets = 1000;
    const auto both = nm::combine_reports(bidir, client, server, nm::RunStatus::Ok, "");
    CHECK(both.packets_source == "interface");
    CHECK(both.packets == 5000);
    CHECK(both.segments_per_packet == 0);
}

TEST_CASE("combine_reports: netperf's per-end service demand is the host's busy CPU per KB, the engines' apart", "[unit]") {
    const auto spec = nm::resolve_spec(tcp(), 2);
    nm::EndReport client, server;
    client.measurement.duration_s = 1;
    server.measurement.duration_s = 1;
    client.measurement.cpu = {0.1, 0.3, 40};
    server.measurement.cpu = {0.05, 0.15, 20};
    client.measurement.system.busy_cpu_s = 1.5;  // e.g. 75 % of 2 CPUs for 1 s
    server.measurement.system.busy_cpu_s = 0.5;
    nm::StreamResult got;
    got.bytes = 1024UL * 1000;  // 1000 KB
    server.received.push_back(got);
    const auto res = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    CHECK(res.sender_service_demand_us_per_kb == Approx(1.5e6 / 1000));
    CHECK(res.receiver_service_demand_us_per_kb == Approx(0.5e6 / 1000));
    CHECK(res.engine_service_demand_us_per_kb == Approx((0.4 + 0.2) * 1e6 / 1000));
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

TEST_CASE("resolve_spec bounds every rate and time before anything converts it (review L3)", "[unit]") {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto refused = [](const nm::TestSpec& s, const std::string& field) {
        INFO(field);
        CHECK_THROWS_WITH(nm::resolve_spec(s, 2), Contains(field));
    };
    // Each field from a plain spec of its protocol, and the word the refusal names it by.
    const struct {
        nm::TestSpec (*spec)();
        double nm::TestSpec::*field;
        const char* named;
    } bounded[] = {
        {udp, &nm::TestSpec::rate_bps, "rate"},       {udp, &nm::TestSpec::rate_pps, "pps"}, {tcp, &nm::TestSpec::stall_timeout_s, "stall timeout"},
        {tcp, &nm::TestSpec::duration_s, "duration"}, {tcp, &nm::TestSpec::omit_s, "omit"},  {tcp, &nm::TestSpec::interval_s, "interval"}};
    for (double bad : {inf, nan, 3e20, -1.0}) {
        for (const auto& b : bounded) {
            auto s = b.spec();
            s.*b.field = bad;
            refused(s, b.named);
        }
    }
    auto bytes = tcp();
    bytes.bytes = 1'000'000'000'000'000'001ull;
    refused(bytes, "bytes");
    auto top = udp();
    top.rate_bps = nm::kMaxRateBps;
    const auto r = nm::resolve_spec(top, 2);
    // Whatever passes makes a per-stream pacing rate and a stall timeout that fit their integer types.
    const auto plan = nm::plan_for(r, nm::Direction::Forward, "");
    CHECK(plan.rate_per_stream < 1e11);
    auto stall = tcp();
    stall.stall_timeout_s = nm::kMaxStallTimeoutS;
    CHECK(nm::plan_for(nm::resolve_spec(stall, 2), nm::Direction::Forward, "").stall_timeout == std::chrono::hours(1));
}

TEST_CASE("resolve_spec caps window x sockets and payload-mix shares (review L14, L18)", "[unit]") {
    auto w = tcp();
    w.window = 1u << 30;
    CHECK(nm::resolve_spec(w, 2).window == 1u << 30);  // one socket of 1 GiB is allowed
    w.direction = nm::Direction::Bidir;                // two
    CHECK_THROWS_WITH(nm::resolve_spec(w, 2), Contains("window: 1073741824 bytes on each of 2 sockets") && Contains("more than 1 GiB"));
    auto many = udp();
    many.window = 8u << 20;
    many.streams = 256;
    CHECK_THROWS_WITH(nm::resolve_spec(many, 2), Contains("256 sockets"));
    many.streams = 128;
    CHECK(nm::resolve_spec(many, 2).streams == 128);

    auto mix = udp();
    for (uint32_t i = 0; i < 17; ++i) mix.payload_mix.push_back({static_cast<uint32_t>(64 + i), 1});
    CHECK_THROWS_WITH(nm::resolve_spec(mix, 2), Contains("payload mix: 17 shares; at most 16"));
    mix.payload_mix.pop_back();
    CHECK(nm::resolve_spec(mix, 2).write_size == 79);
    auto heavy = udp();
    heavy.payload_mix = {{64, 4'000'000'000u}, {128, 4'000'000'000u}};
    CHECK_THROWS_WITH(nm::resolve_spec(heavy, 2), Contains("weights add up to 8000000000"));
}

TEST_CASE("resolve_spec refuses GSO datagrams that do not fit the path MTU (review M9)", "[unit]") {
    auto g = udp();
    g.udp_gso = true;
    g.write_size = 65507;
    CHECK(nm::resolve_spec(g, 2).write_size == 65507);  // the path is not known yet
    const nm::UdpPath v4{1500, 28, "198.18.0.2"};
    CHECK_THROWS_WITH(nm::resolve_spec(g, 2, v4), Contains("gso: a UDP payload of 65507 bytes plus 28 bytes of IP and UDP headers") &&
                                                      Contains("path MTU 1500 to 198.18.0.2") && Contains("1472 bytes or less"));
    g.write_size = 1472;
    CHECK(nm::resolve_spec(g, 2, v4).write_size == 1472);
    g.write_size = 1473;
    CHECK_THROWS(nm::resolve_spec(g, 2, v4));
    CHECK_THROWS_WITH(nm::resolve_spec(g, 2, nm::UdpPath{1500, 48, "2001:2::2"}), Contains("1452 bytes or less"));
    auto plain = udp();
    plain.write_size = 65507;  // without GSO the kernel fragments: allowed
    CHECK(nm::resolve_spec(plain, 2, v4).write_size == 65507);
}

namespace {

std::vector<nm::IntervalSample> samples(size_t count, double span) {
    std::vector<nm::IntervalSample> v;
    for (size_t k = 0; k < count; ++k) {
        nm::IntervalSample s;
        s.start_s = static_cast<double>(k) * span;
        s.end_s = static_cast<double>(k + 1) * span;
        s.bytes = 1000;
        s.packets = 10;
        s.throughput_bps = 8000 / span;
        s.packets_per_s = 10 / span;
        v.push_back(s);
    }
    return v;
}

}  // namespace

TEST_CASE("Interval samples merge with their neighbours: counts add, rates are over the merged span", "[unit]") {
    const auto m = nm::merge_interval_samples(samples(5, 0.5), 2);
    REQUIRE(m.size() == 3);
    CHECK(m[0].start_s == 0);
    CHECK(m[0].end_s == 1.0);
    CHECK(m[0].bytes == 2000);
    CHECK(m[0].throughput_bps == Approx(16000));
    CHECK(m[2].bytes == 1000);  // the odd one out stays itself
    CHECK(m[2].end_s == 2.5);
    CHECK(m[2].packets_per_s == Approx(20));

    nm::EndReport r;
    r.received_intervals = samples(8000, 0.01);  // -t 80 -i 0.01
    r.sent_intervals = samples(100, 1);
    nm::cap_intervals(r);
    CHECK(r.received_intervals.size() == 2000);  // merged 4 at a time: the first power of two that fits 3600
    CHECK(r.received_intervals[0].end_s == Approx(0.04));
    CHECK(r.sent_intervals.size() == 100);
    uint64_t total = 0;
    for (const auto& s : r.received_intervals) total += s.bytes;
    CHECK(total == 8000UL * 1000);
}

TEST_CASE("combine_reports sums two directions' samples at the coarser of their spans", "[unit]") {
    nm::TestSpec spec = tcp();
    spec.direction = nm::Direction::Bidir;
    nm::EndReport client, server;
    client.received_intervals = samples(3601, 0.5);  // merged once more than ...
    server.received_intervals = samples(3600, 0.5);  // ... this one
    nm::cap_intervals(client);
    nm::cap_intervals(server);
    REQUIRE(client.received_intervals.size() == 1801);
    const auto r = nm::combine_reports(spec, client, server, nm::RunStatus::Ok, "");
    REQUIRE(r.intervals.size() == 1801);
    CHECK(r.intervals[0].end_s == 1.0);
    CHECK(r.intervals[0].bytes == 4000);  // two samples from each direction
}

TEST_CASE("A report of any size travels in parts that each fit the message cap (review M8)", "[unit]") {
    nm::EndReport big;
    big.error = "\"quotes\" and \\ backslashes, é";  // escaping and non-ASCII survive the split
    for (uint32_t id = 0; id < 512; ++id) {
        nm::StreamResult s;
        s.id = id;
        s.bytes = 123456789;
        s.loss = nm::LossStats{1, 2, 3, 4, 5, 6.5, 7.5};
        big.received.push_back(s);
    }
    big.received_intervals = samples(nm::kMaxIntervalSamples, 0.1);
    big.sent_intervals = samples(nm::kMaxIntervalSamples, 0.1);
    REQUIRE(nm::Json(big).dump().size() > 4 * nm::kMaxControlMessage);

    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    nm::ControlChannel tx{nm::UniqueFd(fds[0])};
    nm::ControlChannel rx{nm::UniqueFd(fds[1])};
    std::thread sender([&] { nm::send_report(tx, big, nm::deadline_in(std::chrono::seconds(10))); });
    const auto first = rx.expect(nm::deadline_in(std::chrono::seconds(10)), "result");  // the receiver's cap applies to every part
    CHECK(first.at("type") == "result");
    CHECK(first.at("parts").get<int>() > 4);
    const auto got = nm::receive_report(rx, first, nm::deadline_in(std::chrono::seconds(10)));
    sender.join();
    CHECK(nm::Json(got) == nm::Json(big));

    // A part missing or out of order is an error, not a partial report.
    tx.send(nm::Msg::ResultPart, nm::Json{{"part", 2}, {"data", "}"}}, nm::deadline_in(std::chrono::seconds(1)));
    const nm::Json head{{"type", "result"}, {"parts", 3}, {"data", "{"}};
    CHECK_THROWS_WITH(nm::receive_report(rx, head, nm::deadline_in(std::chrono::seconds(1))), Contains("expected part 1"));
    nm::Json forged{{"type", "result"}, {"parts", 100000}, {"data", ""}};
    CHECK_THROWS_WITH(nm::receive_report(rx, forged, nm::deadline_in(std::chrono::milliseconds(10))), Contains("parts: 100000"));
}
