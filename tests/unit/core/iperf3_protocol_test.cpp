// iperf3's control protocol, pure parts: the messages this end sends and how it reads a server's results.
// The server results below are iperf3 3.12's own (Debian's, captured with `iperf3 -s -d` on the lab).
#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/stats.hpp"

namespace {

namespace ip3 = nm::iperf3;
using nm::Json;

// iperf3 3.12's server results of a 1 s forward TCP test (one stream; -1 retransmits as it prints them).
constexpr const char* kForward = R"({"cpu_util_total":17.355949363130151,"cpu_util_user":1.0479963568347461,
 "cpu_util_system":16.307855281905546,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr",
 "server_output_text":"Accepted connection from 198.18.99.1, port 43140\n",
 "streams":[{"id":1,"bytes":1153957888,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,
 "start_time":0,"end_time":1.02327}]})";

// The same server's results of -P 3 --bidir: ids 1, 3, 4 received by the server, 5, 6, 7 sent by it.
constexpr const char* kBidir = R"({"cpu_util_total":32.660324490441546,"cpu_util_user":0.4990132718699628,
 "cpu_util_system":32.160275530648832,"sender_has_retransmits":1,"congestion_used":"bbr",
 "streams":[{"id":1,"bytes":214564864,"retransmits":1.8446744073709552e+19,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.05603},
 {"id":3,"bytes":214564864,"retransmits":1.8446744073709552e+19,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.05604},
 {"id":4,"bytes":214564864,"retransmits":1.8446744073709552e+19,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.056042},
 {"id":5,"bytes":424673280,"retransmits":2,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.056043},
 {"id":6,"bytes":422051840,"retransmits":3,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.056045},
 {"id":7,"bytes":424673280,"retransmits":4,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.056046}]})";

nm::TestSpec tcp(nm::Direction d, uint32_t streams) {
    nm::TestSpec s;
    s.host = "198.18.0.2";
    s.port = 5201;
    s.direction = d;
    s.streams = streams;
    s.duration_s = 1;
    return s;
}

}  // namespace

TEST_CASE("iperf3 states are named, other bytes shown as hex with their character", "[unit]") {
    CHECK(ip3::describe_state_byte(9) == "PARAM_EXCHANGE (9)");
    CHECK(ip3::describe_state_byte(0xff) == "ACCESS_DENIED (-1)");
    CHECK(ip3::describe_state_byte(0xfe) == "SERVER_ERROR (-2)");
    CHECK(ip3::describe_state_byte(0x7b) == "0x7b ('{')");
    CHECK(ip3::describe_state_byte(0x03) == "0x03");
}

TEST_CASE("iperf3 cookie, length prefix and stream ids", "[unit]") {
    const auto cookie = ip3::make_cookie();
    REQUIRE(cookie.size() == 37);
    CHECK(cookie.back() == '\0');
    for (size_t i = 0; i + 1 < cookie.size(); ++i) CHECK(std::string("abcdefghijklmnopqrstuvwxyz234567").find(cookie[i]) != std::string::npos);
    CHECK(ip3::make_cookie() != cookie);
    const auto prefix = ip3::length_prefix(0x01020304);
    REQUIRE(prefix.size() == 4);
    CHECK(prefix == std::string("\x01\x02\x03\x04", 4));
    const unsigned char bytes[4] = {0x00, 0x01, 0x00, 0xff};
    CHECK(ip3::read_length(bytes) == 65791);
    // Both of iperf3's ends skip id 2.
    CHECK(ip3::stream_id(0) == 1);
    CHECK(ip3::stream_id(1) == 3);
    CHECK(ip3::stream_id(5) == 7);
}

TEST_CASE("iperf3 is told whole seconds and its timer never ends a test before this end", "[unit]") {
    auto s = tcp(nm::Direction::Forward, 1);
    s.omit_s = 0.5;
    s.duration_s = 1;
    CHECK(ip3::told_times(s).omit_s == 0);
    CHECK(ip3::told_times(s).time_s == 2);
    s.omit_s = 2;
    s.duration_s = 1.5;
    CHECK(ip3::told_times(s).omit_s == 2);
    CHECK(ip3::told_times(s).time_s == 2);
    s.omit_s = 0;
    s.duration_s = 3;
    CHECK(ip3::told_times(s).time_s == 3);
}

TEST_CASE("iperf3 parameters follow the spec", "[unit]") {
    auto s = tcp(nm::Direction::Forward, 4);
    const Json fwd = ip3::parameters(s, {0, 2}, "nicmatrix test");
    CHECK(fwd.at("tcp") == true);
    CHECK(fwd.at("parallel") == 4);
    CHECK(fwd.at("time") == 2);
    CHECK(fwd.at("omit") == 0);
    CHECK(fwd.at("len") == 131072);
    CHECK(fwd.at("get_server_output") == 1);
    CHECK_FALSE(fwd.contains("reverse"));
    CHECK_FALSE(fwd.contains("bidirectional"));
    CHECK_FALSE(fwd.contains("window"));
    s.direction = nm::Direction::Reverse;
    s.window = 262144;
    s.write_size = 65536;
    s.socket.congestion = "cubic";
    s.socket.dscp = 46;
    s.rate_bps = 4e9;
    const Json rev = ip3::parameters(s, {1, 1}, "x");
    CHECK(rev.at("reverse") == 1);
    CHECK(rev.at("window") == 262144);
    CHECK(rev.at("len") == 65536);
    CHECK(rev.at("congestion") == "cubic");
    CHECK(rev.at("TOS") == 184);
    CHECK(rev.at("bandwidth") == 1000000000);  // per stream, for the sending server
    s.direction = nm::Direction::Bidir;
    CHECK(ip3::parameters(s, {0, 1}, "x").at("bidirectional") == true);
}

TEST_CASE("What a stock iperf3 far end cannot run is refused naming the option", "[unit]") {
    auto s = tcp(nm::Direction::Forward, 1);
    CHECK_NOTHROW(ip3::check_supported(s));
    s.protocol = nm::Protocol::Udp;
    CHECK_THROWS_WITH(ip3::check_supported(s), Catch::Contains("-u (UDP)") && Catch::Contains("iperf3"));
    s.protocol = nm::Protocol::Tcp;
    s.bytes = 1000;
    CHECK_THROWS_WITH(ip3::check_supported(s), Catch::Contains("-n"));
    s.bytes = 0;
    s.pattern = nm::TrafficPattern::Rr;
    CHECK_THROWS_WITH(ip3::check_supported(s), Catch::Contains("--rr"));
    s.pattern = nm::TrafficPattern::Stream;
    s.server_cpus = {1};
    CHECK_THROWS_WITH(ip3::check_supported(s), Catch::Contains("-A SERVER_CPUS"));
}

TEST_CASE("iperf3 3.12 server results of a forward test read as the peer's figures", "[unit]") {
    const auto f = ip3::parse_server_results(Json::parse(kForward), tcp(nm::Direction::Forward, 1), {0, 2});
    CHECK(f.bytes_received == 1153957888);
    CHECK(f.bytes_sent == 0);
    CHECK(f.duration_s == Approx(1.02327));
    CHECK(f.received_bps == Approx(1153957888.0 * 8 / 1.02327));
    CHECK(f.cpu_total_pct == Approx(17.355949363130151));
    CHECK(f.cpu_system_pct == Approx(16.307855281905546));
    CHECK_FALSE(f.retransmits.has_value());  // iperf3's -1: not measured
    CHECK(f.congestion == "bbr");
    CHECK(f.version.empty());  // a text-mode server tells no version
    CHECK(f.time_s == 2);
    REQUIRE(f.streams.size() == 1);
    CHECK(f.streams[0].id == 1);
    CHECK(f.streams[0].stream == 0);
    CHECK_FALSE(f.streams[0].peer_sent);
}

TEST_CASE("iperf3 3.12 server results of --bidir -P 3 split into received and sent streams", "[unit]") {
    const auto f = ip3::parse_server_results(Json::parse(kBidir), tcp(nm::Direction::Bidir, 3), {0, 1});
    CHECK(f.bytes_received == 3ull * 214564864);
    CHECK(f.bytes_sent == 424673280ull + 422051840 + 424673280);
    REQUIRE(f.retransmits.has_value());
    CHECK(*f.retransmits == 9);
    REQUIRE(f.streams.size() == 6);
    for (uint32_t k = 0; k < 6; ++k) {
        CHECK(f.streams[k].stream == k);
        CHECK(f.streams[k].peer_sent == (k >= 3));
    }
}

TEST_CASE("A server run with --json tells its version in its output", "[unit]") {
    Json r = Json::parse(kForward);
    r.erase("server_output_text");
    r["server_output_json"] = Json{{"start", {{"version", "iperf 3.12"}, {"system_info", "Linux lab 6.1 x86_64"}}}};
    const auto f = ip3::parse_server_results(r, tcp(nm::Direction::Forward, 1), {0, 1});
    CHECK(f.version == "iperf 3.12");
    CHECK(f.system_info == "Linux lab 6.1 x86_64");
}

TEST_CASE("Server results that are not iperf3's are refused naming what is wrong", "[unit]") {
    const auto spec = tcp(nm::Direction::Forward, 1);
    Json r = Json::parse(kForward);
    r.erase("cpu_util_total");
    CHECK_THROWS_WITH(ip3::parse_server_results(r, spec, {}), Catch::Contains("cpu_util_total"));
    r = Json::parse(kForward);
    r["streams"][0]["id"] = 2;
    CHECK_THROWS_WITH(ip3::parse_server_results(r, spec, {}), Catch::Contains("id 2"));
    r = Json::parse(kForward);
    CHECK_THROWS_WITH(ip3::parse_server_results(r, tcp(nm::Direction::Forward, 2), {}), Catch::Contains("1 streams, but the test has 2"));
    r["streams"][0]["bytes"] = -5;
    CHECK_THROWS_WITH(ip3::parse_server_results(r, spec, {}), Catch::Contains("bytes"));
    CHECK_THROWS(ip3::parse_server_results(Json::array(), spec, {}));
}

TEST_CASE("The client's results name each connection by iperf3's id with what this end moved", "[unit]") {
    nm::EndReport mine;
    mine.measurement.duration_s = 2;
    mine.measurement.cpu.user_s = 0.1;
    mine.measurement.cpu.sys_s = 0.5;
    for (uint32_t id = 0; id < 2; ++id) {
        nm::StreamResult s;
        s.id = id;
        s.bytes = 1000 + id;
        s.retransmits = 7 + id;
        mine.sent.push_back(s);
    }
    const Json fwd = ip3::client_results(tcp(nm::Direction::Forward, 2), mine);
    CHECK(fwd.at("cpu_util_total").get<double>() == Approx(30));
    CHECK(fwd.at("cpu_util_user").get<double>() == Approx(5));
    CHECK(fwd.at("sender_has_retransmits") == 1);
    REQUIRE(fwd.at("streams").size() == 2);
    CHECK(fwd.at("streams")[0].at("id") == 1);
    CHECK(fwd.at("streams")[1].at("id") == 3);
    CHECK(fwd.at("streams")[1].at("bytes") == 1001);
    CHECK(fwd.at("streams")[1].at("retransmits") == 8);
    CHECK(fwd.at("streams")[1].at("end_time") == 2);
    nm::EndReport rx;
    rx.received = mine.sent;
    const Json rev = ip3::client_results(tcp(nm::Direction::Reverse, 2), rx);
    CHECK(rev.at("sender_has_retransmits") == 0);
    CHECK(rev.at("streams")[0].at("retransmits") == -1);
    CHECK(rev.at("streams")[0].at("bytes") == 1000);
}

TEST_CASE("A run against iperf3 writes the far end as null and keeps the peer's figures through the codec", "[unit]") {
    nm::RunResult r;
    r.spec = tcp(nm::Direction::Forward, 1);
    r.throughput_bps = 9e9;
    r.sender.cpu.util_pct = 40;
    r.receiver.cpu.util_pct = 0;
    r.iperf3_peer = ip3::parse_server_results(Json::parse(kForward), r.spec, {0, 2});
    r.iperf3_peer->version = "iperf 3.12";
    const Json j = r;
    CHECK(j.at("cpu").at("receiver").is_null());
    CHECK(j.at("cpu").at("system").at("receiver").is_null());
    CHECK(j.at("nic").at("receiver").is_null());
    CHECK(j.at("napi").at("receiver").is_null());
    CHECK(j.at("cpu").at("service_demand_us_per_kb").at("receiver").is_null());
    CHECK(j.at("engine_service_demand_us_per_kb").is_null());
    CHECK(j.at("cpu").at("sender").at("util_pct") == 40);
    CHECK(j.at("peer").at("kind") == "iperf3");
    CHECK(j.at("peer").at("version") == "iperf 3.12");
    CHECK(j.at("peer").at("bytes_received") == 1153957888);
    CHECK(j.at("peer").at("retransmits").is_null());
    const auto back = j.get<nm::RunResult>();
    REQUIRE(back.iperf3_peer.has_value());
    CHECK(back.iperf3_peer->bytes_received == 1153957888);
    CHECK(back.iperf3_peer->version == "iperf 3.12");
    CHECK(Json(back) == j);
    // Metrics: the far end's are absent, not zero; the peer's CPU is its own metric.
    const auto m = nm::run_metrics(back);
    CHECK(m.count("cpu_receiver_pct") == 0);
    CHECK(m.count("receiver_service_demand_us_per_kb") == 0);
    CHECK(m.count("engine_service_demand_us_per_kb") == 0);
    CHECK(m.at("cpu_sender_pct") == 40);
    CHECK(m.at("peer_cpu_pct") == Approx(17.355949363130151));
    nm::RunResult own;
    CHECK(Json(own).at("cpu").at("receiver").is_object());
    CHECK_FALSE(Json(own).contains("peer"));
}

TEST_CASE("A server message nested too deep is refused before it is parsed", "[unit]") {
    CHECK(ip3::parse_message(kForward, "results").at("streams").size() == 1);
    CHECK_THROWS_WITH(ip3::parse_message(std::string(100000, '['), "results"), Catch::Contains("nested deeper than 32"));
    CHECK_THROWS_WITH(ip3::parse_message("{\"a\": ", "results"), Catch::Contains("results is not JSON"));
    // Brackets inside strings do not count.
    CHECK_NOTHROW(ip3::parse_message("{\"text\": \"" + std::string(100, '[') + "\"}", "results"));
}
