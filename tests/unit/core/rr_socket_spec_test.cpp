// The request/response and socket-knob parts of a test: checks with their messages, DSCP names, the
// kernel's congestion-control list, both ends' counts combined, and JSON round trips.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/base/error.hpp"
#include "core/host/socket_options.hpp"
#include "core/session/traffic_session.hpp"
#include "core/traffic/dscp.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace {

std::string usage_message(const nm::TestSpec& spec) {
    try {
        nm::resolve_spec(spec, 2);
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        return e.what();
    }
    FAIL("no usage error");
    return "";
}

nm::TestSpec rr_spec() {
    nm::TestSpec s;
    s.host = "198.18.0.2";
    s.pattern = nm::TrafficPattern::Rr;
    return s;
}

}  // namespace

TEST_CASE("DSCP: names and numbers, case-insensitive, anything else names the field and the choices", "[unit]") {
    CHECK(nm::parse_dscp("EF", "--dscp") == 46);
    CHECK(nm::parse_dscp("af41", "--dscp") == 34);
    CHECK(nm::parse_dscp("cs1", "--dscp") == 8);
    CHECK(nm::parse_dscp("46", "--dscp") == 46);
    CHECK(nm::parse_dscp("0x2e", "--dscp") == 46);
    CHECK(nm::parse_dscp("0", "--dscp") == 0);
    CHECK(nm::dscp_name(46) == "EF");
    CHECK_FALSE(nm::dscp_name(1).has_value());
    for (const char* bad : {"64", "-1", "EF1", "", "0x40", "af5"}) {
        INFO(bad);
        CHECK_THROWS_WITH(nm::parse_dscp(bad, "/traffic/0/dscp"), Catch::Contains("/traffic/0/dscp") && Catch::Contains("0..63"));
    }
}

TEST_CASE("RR spec: one flow of 1-byte messages by default, what does not fit a transaction is refused by name", "[unit]") {
    const auto s = nm::resolve_spec(rr_spec(), 2);
    CHECK(s.streams == 1);
    CHECK(s.request_size == 1);
    CHECK(s.response_size == 1);
    CHECK(s.rr_burst == 1);

    // A default RR spec with one change: the words the usage error must hold.
    using Change = void (*)(nm::TestSpec&);
    const std::vector<std::pair<Change, std::vector<std::string>>> refused{
        {[](nm::TestSpec& t) { t.direction = nm::Direction::Reverse; }, {"--rr", "-R"}},
        {[](nm::TestSpec& t) { t.bytes = 1000; }, {"-n"}},
        {[](nm::TestSpec& t) { t.rate_bps = 1e6; }, {"-b"}},
        {[](nm::TestSpec& t) {
             t.protocol = nm::Protocol::Udp;
             t.request_size = 65508;
         },
         {"rr-size", "65507"}},
        {[](nm::TestSpec& t) { t.response_size = 0; }, {"rr-size"}},
        {[](nm::TestSpec& t) { t.rr_burst = 129; }, {"rr-burst", "1..128"}},
        {[](nm::TestSpec& t) {
             t.pattern = nm::TrafficPattern::Crr;
             t.protocol = nm::Protocol::Udp;
         },
         {"--crr", "-u"}},
        {[](nm::TestSpec& t) {
             t.pattern = nm::TrafficPattern::Crr;
             t.protocol = nm::Protocol::Tcp;
             t.rr_burst = 2;
         },
         {"--crr"}},
    };
    for (size_t i = 0; i < refused.size(); ++i) {
        auto t = rr_spec();
        refused[i].first(t);
        const auto message = usage_message(t);
        INFO("change " << i << ": " << message);
        for (const auto& word : refused[i].second) CHECK_THAT(message, Catch::Contains(word));
    }
}

TEST_CASE("Socket knobs: TCP-only knobs with -u, -Z with RR, MSS and names out of range are usage errors", "[unit]") {
    nm::TestSpec t;
    t.host = "198.18.0.2";
    t.protocol = nm::Protocol::Udp;
    for (auto set : {+[](nm::SocketOptions& o) { o.congestion = "cubic"; }, +[](nm::SocketOptions& o) { o.nodelay = true; },
                     +[](nm::SocketOptions& o) { o.mss = 1000; }, +[](nm::SocketOptions& o) { o.zerocopy = true; },
                     +[](nm::SocketOptions& o) { o.skip_rx_copy = true; }}) {
        auto u = t;
        set(u.socket);
        CHECK_THAT(usage_message(u), Catch::Contains("drop -u"));
    }
    t.protocol = nm::Protocol::Tcp;
    t.socket.mss = 50;
    CHECK_THAT(usage_message(t), Catch::Contains("-M") && Catch::Contains("88..65495"));
    t.socket.mss = 0;
    t.socket.congestion = "cu bic";
    CHECK_THAT(usage_message(t), Catch::Contains("-C"));
    t.socket.congestion.clear();
    t.socket.bind_dev = "a-name-that-is-too-long";
    CHECK_THAT(usage_message(t), Catch::Contains("bind-dev"));
    auto z = rr_spec();
    z.socket.zerocopy = true;
    CHECK_THAT(usage_message(z), Catch::Contains("-Z"));
}

TEST_CASE("The kernel's congestion-control list parses by whitespace", "[unit]") {
    CHECK(nm::parse_congestion_list("reno cubic bbr\n") == std::vector<std::string>{"reno", "cubic", "bbr"});
    CHECK(nm::parse_congestion_list("").empty());
}

TEST_CASE("combine_rr: the client's transactions and latencies, the server's count beside them, CPU per transaction", "[unit]") {
    nm::TestSpec spec = rr_spec();
    spec.duration_s = 2;
    nm::EndReport client, server;
    client.measurement.duration_s = 2.01;
    client.measurement.cpu.user_s = 0.5;
    client.measurement.cpu.sys_s = 0.5;
    server.measurement.cpu.user_s = 0.1;
    server.measurement.cpu.sys_s = 0.3;
    nm::RrEndCounts c;
    c.transactions = 100000;
    for (int i = 0; i < 100; ++i) c.latency.record(10000 + static_cast<uint64_t>(i) * 100);
    c.intervals = {{0, 1, 50000, 50000}, {1, 2, 50000, 50000}};
    client.rr = c;
    nm::RrEndCounts s;
    s.transactions = 100000;
    server.rr = s;
    const auto rr = nm::combine_rr(spec, client, server);
    CHECK(rr.transactions == 100000);
    CHECK(rr.responder_transactions == 100000);
    CHECK(rr.transactions_per_s == Approx(50000));  // over the window, not the 2.01 s the client measured
    CHECK(rr.cpu_us_per_transaction_sender == Approx(10));
    CHECK(rr.cpu_us_per_transaction_receiver == Approx(4));
    CHECK(rr.latency_us.p50 == Approx(14.95).epsilon(0.005));
    CHECK(rr.intervals.size() == 2);
    CHECK(rr.histogram.count() == 100);
}

TEST_CASE("effective_knobs: each knob from the end it concerns", "[unit]") {
    nm::TestSpec spec;
    nm::SocketKnobs client, server;
    client.congestion = "bbr";
    client.mss = 1000;
    client.bind_dev = "nm-a";
    client.zerocopy.sends = 5;
    server.congestion = "cubic";
    server.skip_rx_copy = true;
    server.zerocopy.sends = 7;
    auto k = nm::effective_knobs(spec, client, server);
    CHECK(k.congestion == "bbr");
    CHECK(k.skip_rx_copy);
    CHECK(k.bind_dev == "nm-a");
    CHECK(k.zerocopy.sends == 5);
    spec.direction = nm::Direction::Reverse;
    k = nm::effective_knobs(spec, client, server);
    CHECK(k.congestion == "cubic");
    CHECK_FALSE(k.skip_rx_copy);
    CHECK(k.bind_dev == "nm-a");
    spec.direction = nm::Direction::Bidir;
    CHECK(nm::effective_knobs(spec, client, server).zerocopy.sends == 12);
}

TEST_CASE("RR results, socket knobs and an RR spec round-trip through JSON, old results without them load", "[unit]") {
    nm::RunResult r;
    r.spec = rr_spec();
    r.spec.pattern = nm::TrafficPattern::Crr;
    r.spec.request_size = 64;
    r.spec.response_size = 1024;
    r.spec.socket.congestion = "cubic";
    r.spec.socket.dscp = 46;
    r.spec.socket.nodelay = true;
    nm::RrStats rr;
    rr.transactions = 42;
    rr.transactions_per_s = 21;
    rr.responder_transactions = 42;
    rr.histogram.record(15000);
    rr.latency_us = nm::summarize_latency(rr.histogram);
    rr.intervals = {{0, 1, 42, 42}};
    rr.cpu_us_per_transaction_sender = 3.5;
    r.rr = rr;
    r.socket.congestion = "cubic";
    r.socket.tos = 46 << 2;
    r.socket.mss = 1448;
    r.socket.zerocopy.requested = true;
    r.socket.zerocopy.completions = 9;
    r.sender.socket = r.socket;
    const nm::Json j = r;
    CHECK(j.at("socket").at("dscp") == 46);
    CHECK(j.at("rr").at("latency_us").at("p50").get<double>() == Approx(15).epsilon(0.004));
    const auto back = j.get<nm::RunResult>();
    CHECK(back.spec.pattern == nm::TrafficPattern::Crr);
    CHECK(back.spec.request_size == 64);
    CHECK(back.spec.response_size == 1024);
    CHECK(back.spec.socket.dscp == 46);
    CHECK(back.spec.socket.nodelay);
    REQUIRE(back.rr.has_value());
    CHECK(back.rr->transactions == 42);
    CHECK(back.rr->histogram.count() == 1);
    CHECK(back.rr->cpu_us_per_transaction_sender == 3.5);
    CHECK(back.socket.tos == 184);
    CHECK(back.socket.zerocopy.completions == 9);
    CHECK(back.sender.socket.mss == 1448);
    CHECK(nm::Json(back) == j);

    nm::Json old = j;
    old.erase("rr");
    old.erase("socket");
    old.at("spec").erase("test");
    old.at("spec").erase("dscp");
    const auto o = old.get<nm::RunResult>();
    CHECK_FALSE(o.rr.has_value());
    CHECK(o.spec.pattern == nm::TrafficPattern::Stream);
    CHECK(o.spec.socket.dscp == -1);
    CHECK(o.socket.tos == -1);
}
