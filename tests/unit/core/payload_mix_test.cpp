#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "core/base/error.hpp"
#include "core/engine/engine.hpp"
#include "core/session/traffic_session.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "core/workers/payload_mix.hpp"

TEST_CASE("The IMIX send pattern has every share its weight's times and spreads them evenly", "[unit]") {
    // 64/594/1518-byte frames at 7:4:1 are 18/548/1472-byte payloads.
    const std::vector<nm::PayloadShare> imix = {{18, 7}, {548, 4}, {1472, 1}};
    const auto p = nm::payload_pattern(imix);
    REQUIRE(p.size() == 12);
    std::map<uint32_t, int> count;
    for (uint32_t b : p) ++count[b];
    CHECK(count[18] == 7);
    CHECK(count[548] == 4);
    CHECK(count[1472] == 1);
    // Interleaved, not grouped: never more than two small datagrams in a row, and the 548s are apart.
    int run = 0, longest = 0;
    for (uint32_t b : p) {
        run = b == 18 ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    CHECK(longest <= 2);
    for (size_t i = 0; i + 1 < p.size(); ++i) CHECK_FALSE((p[i] == 548 && p[i + 1] == 548));
    CHECK(nm::max_payload(imix) == 1472);
}

TEST_CASE("A payload mix without datagrams is a usage error, zero weights drop out", "[unit]") {
    CHECK_THROWS_AS(nm::payload_pattern({}), nm::Error);
    CHECK_THROWS_AS(nm::payload_pattern({{18, 0}}), nm::Error);
    const auto p = nm::payload_pattern({{18, 0}, {100, 3}});
    CHECK(p == std::vector<uint32_t>{100, 100, 100});
}

TEST_CASE("resolve_spec takes a payload mix: write size is its largest payload, GSO and TCP refused", "[unit]") {
    nm::TestSpec s;
    s.host = "198.18.0.2";
    s.protocol = nm::Protocol::Udp;
    s.payload_mix = {{18, 7}, {548, 4}, {1472, 1}};
    const auto r = nm::resolve_spec(s, 2);
    CHECK(r.write_size == 1472);
    auto gso = s;
    gso.udp_gso = true;
    CHECK_THROWS_WITH(nm::resolve_spec(gso, 2), Catch::Contains("GSO"));
    auto tcp = s;
    tcp.protocol = nm::Protocol::Tcp;
    CHECK_THROWS_WITH(nm::resolve_spec(tcp, 2), Catch::Contains("payload mix"));
    auto tiny = s;
    tiny.payload_mix = {{10, 1}};
    CHECK_THROWS_WITH(nm::resolve_spec(tiny, 2), Catch::Contains("18..65507"));
}

TEST_CASE("plan_for paces a mix in datagrams per second and carries the pattern", "[unit]") {
    nm::TestSpec s;
    s.host = "198.18.0.2";
    s.protocol = nm::Protocol::Udp;
    s.payload_mix = {{100, 1}, {300, 1}};
    s.rate_bps = 8 * 200 * 1000;  // mean payload 200 bytes -> 1000 datagrams/s
    const auto r = nm::resolve_spec(s, 2);
    const auto plan = nm::plan_for(r, nm::Direction::Forward, "");
    CHECK(plan.payload_pattern.size() == 2);
    CHECK(plan.rate_per_stream == Approx(1000));
    CHECK(plan.write_size == 300);
}

TEST_CASE("A payload mix survives the control channel's JSON", "[unit]") {
    nm::TestSpec s;
    s.payload_mix = {{18, 7}, {548, 4}};
    const auto back = nm::Json(s).get<nm::TestSpec>();
    REQUIRE(back.payload_mix.size() == 2);
    CHECK(back.payload_mix[1].payload_bytes == 548);
    CHECK(back.payload_mix[1].weight == 4);
    CHECK_FALSE(nm::Json(nm::TestSpec{}).contains("payload_mix"));
}

TEST_CASE("NAPI rates: interrupts per second and per packet, packets per interrupt", "[unit]") {
    nm::NapiStats n;
    n.interrupts = 500;
    n.packets = 10000;
    n.processed = 9000;
    nm::napi_rates(n, 2.0);
    CHECK(n.interrupts_per_s == Approx(250));
    CHECK(n.interrupts_per_packet == Approx(0.05));
    CHECK(n.processed_per_s == Approx(4500));
    CHECK(n.processed_per_interrupt == Approx(18));
    nm::NapiStats none;  // veth: no interrupts, no division by zero
    none.processed = 10;
    nm::napi_rates(none, 0);
    CHECK(none.interrupts_per_packet == 0);
    CHECK(none.processed_per_s == 0);
    CHECK(none.processed_per_interrupt == 0);
}
