// Request/response traffic entries and socket knobs in a sweep config, and the RR metrics a sweep
// summarizes, reports and compares.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/base/error.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/report/report.hpp"
#include "matrix/stats.hpp"

namespace {

std::string config_with(const std::string& traffic) {
    return R"({"offloads": [{"name": "a", "features": {"tso": "off"}}], "mtu": [1500], "traffic": [)" + traffic + "]}";
}

std::string error_of(const std::string& traffic) {
    try {
        nm::parse_sweep_config_text(config_with(traffic), "configs/x.json");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        return e.what();
    }
    FAIL("no error for " << traffic);
    return "";
}

}  // namespace

TEST_CASE("Sweep: rr entries become TCP_RR, UDP_RR and TCP_CRR tests named after their sizes", "[unit]") {
    const auto c = nm::parse_sweep_config_text(config_with(R"({"test": "rr", "protocol": "tcp"},
                      {"test": "rr", "protocol": "udp", "request_size": 64, "response_size": 1024, "streams": 2, "burst": 4},
                      {"test": "rr", "protocol": "tcp", "connect_per_transaction": true, "congestion": "cubic", "dscp": "EF"},
                      {"protocol": "tcp", "nodelay": true, "mss": 1000, "skip_rx_copy": true, "zerocopy": true})"),
                                               "configs/x.json");
    REQUIRE(c.traffic.size() == 4);
    CHECK(c.traffic[0].name == "tcp-rr-1x1");
    CHECK(c.traffic[0].test.pattern == nm::TrafficPattern::Rr);
    CHECK(c.traffic[1].name == "udp-rr-64x1024-p2-burst4");
    CHECK(c.traffic[1].test.protocol == nm::Protocol::Udp);
    CHECK(c.traffic[1].test.request_size == 64);
    CHECK(c.traffic[1].test.response_size == 1024);
    CHECK(c.traffic[1].test.streams == 2);
    CHECK(c.traffic[1].test.rr_burst == 4);
    CHECK(c.traffic[2].test.pattern == nm::TrafficPattern::Crr);
    CHECK(c.traffic[2].test.socket.congestion == "cubic");
    CHECK(c.traffic[2].test.socket.dscp == 46);
    CHECK(c.traffic[2].name == "tcp-crr-1x1-Ccubic-dscp46");
    CHECK(c.traffic[3].test.pattern == nm::TrafficPattern::Stream);
    CHECK(c.traffic[3].test.socket.nodelay);
    CHECK(c.traffic[3].test.socket.mss == 1000);
    CHECK(c.traffic[3].test.socket.skip_rx_copy);
    CHECK(c.traffic[3].test.socket.zerocopy);
}

TEST_CASE("Sweep: rr entries refuse stream fields, UDP CRR, bad sizes and knobs, naming the JSON pointer", "[unit]") {
    CHECK_THAT(error_of(R"({"test": "rr", "write_size": 100})"), Catch::Contains("/traffic/0/write_size"));
    CHECK_THAT(error_of(R"({"test": "rr", "protocol": "udp", "connect_per_transaction": true})"),
               Catch::Contains("/traffic/0/connect_per_transaction"));
    CHECK_THAT(error_of(R"({"test": "rr", "protocol": "udp", "request_size": 70000})"), Catch::Contains("/traffic/0/request_size"));
    CHECK_THAT(error_of(R"({"test": "rr", "direction": "reverse"})"), Catch::Contains("/traffic/0/direction"));
    CHECK_THAT(error_of(R"({"request_size": 10})"), Catch::Contains("/traffic/0/request_size") && Catch::Contains("\"test\": \"rr\""));
    CHECK_THAT(error_of(R"({"test": "pingpong"})"), Catch::Contains("/traffic/0/test"));
    CHECK_THAT(error_of(R"({"protocol": "udp", "congestion": "bbr"})"), Catch::Contains("/traffic/0/congestion"));
    CHECK_THAT(error_of(R"({"dscp": "XX"})"), Catch::Contains("/traffic/0/dscp"));
    CHECK_THAT(error_of(R"({"dscp": 64})"), Catch::Contains("/traffic/0/dscp"));
    CHECK_THAT(error_of(R"({"mss": 10})"), Catch::Contains("/traffic/0/mss"));
    CHECK_THAT(error_of(R"({"test": "rr", "zerocopy": true})"), Catch::Contains("/traffic/0/zerocopy"));
}

TEST_CASE("Sweep: rx_spin_us in a stream entry is read, named -spin, written back, and refused on rr entries and past 10000", "[unit]") {
    const auto c =
        nm::parse_sweep_config_text(config_with(R"({"protocol": "tcp", "rx_spin_us": 10}, {"protocol": "udp", "rx_spin_us": 0})"), "configs/x.json");
    REQUIRE(c.traffic.size() == 2);
    CHECK(c.traffic[0].test.socket.rx_spin_us == 10);
    CHECK(c.traffic[0].name == "tcp-p1-spin10");
    CHECK(nlohmann::json(c.traffic[0]).at("rx_spin_us") == 10);
    CHECK(c.traffic[1].name == "udp");  // 0 is the default: nothing in the name
    CHECK_FALSE(nlohmann::json(c.traffic[1]).contains("rx_spin_us"));
    CHECK_THAT(error_of(R"({"test": "rr", "rx_spin_us": 10})"), Catch::Contains("/traffic/0/rx_spin_us"));
    CHECK_THAT(error_of(R"({"rx_spin_us": 10001})"), Catch::Contains("/traffic/0/rx_spin_us") && Catch::Contains("0 to 10000"));
    CHECK_THAT(error_of(R"({"rx_spin_us": -1})"), Catch::Contains("/traffic/0/rx_spin_us"));
}

TEST_CASE("RR metrics: a run with rr results has rr_p99_us and the rest, known_metrics lists them, units in the report", "[unit]") {
    nm::RunResult stream;
    CHECK(nm::run_metrics(stream).count("rr_p99_us") == 0);
    nm::RunResult r;
    nm::RrStats rr;
    rr.transactions_per_s = 51234;
    rr.latency_us = {16.5, 14.8, 16.0, 32.9, 49.0, 900};
    rr.cpu_us_per_transaction_sender = 7.5;
    rr.cpu_us_per_transaction_receiver = 7.2;
    r.rr = rr;
    const auto m = nm::run_metrics(r);
    CHECK(m.at("rr_transactions_per_s") == 51234);
    CHECK(m.at("rr_mean_us") == 16.5);
    CHECK(m.at("rr_p50_us") == 14.8);
    CHECK(m.at("rr_p90_us") == 16.0);
    CHECK(m.at("rr_p99_us") == 32.9);
    CHECK(m.at("rr_p999_us") == 49.0);
    CHECK(m.at("rr_max_us") == 900);
    CHECK(m.at("rr_cpu_us_per_transaction_sender") == 7.5);
    CHECK(m.at("rr_cpu_us_per_transaction_receiver") == 7.2);
    const auto names = nm::known_metrics();
    for (const char* name : {"rr_p50_us", "rr_p99_us", "rr_p999_us", "rr_transactions_per_s"}) {
        CHECK(std::find(names.begin(), names.end(), name) != names.end());
    }
    CHECK(nm::format_metric("rr_transactions_per_s", 51234) == "51.2k trans/s");
    CHECK(nm::format_metric("rr_p99_us", 32.94) == "32.9 us");
    CHECK(nm::format_metric("rr_cpu_us_per_transaction_sender", 7.5) == "7.50 us");
}
