#include <catch2/catch.hpp>

#include <cmath>

#include "core/base/error.hpp"
#include "core/rfc2544/frame_size.hpp"

TEST_CASE("Line rate matches the published RFC 2544 figures at 1 Gbit/s", "[unit]") {
    CHECK(std::floor(nm::line_rate_fps(1e9, nm::single_frame(64))) == 1488095);
    CHECK(std::floor(nm::line_rate_fps(1e9, nm::single_frame(1518))) == 81274);
    CHECK(std::floor(nm::line_rate_fps(1e9, nm::single_frame(1024))) == 119731);
    CHECK(std::floor(nm::line_rate_fps(1e8, nm::single_frame(64))) == 148809);
}

TEST_CASE("Frame and payload sizes: payload = frame - 46 for IPv4/UDP", "[unit]") {
    CHECK(nm::udp_payload_for_frame(64) == 18);
    CHECK(nm::udp_payload_for_frame(1518) == 1472);
    CHECK(nm::frame_for_udp_payload(18) == 64);
    CHECK_THROWS_WITH(nm::udp_payload_for_frame(63), Catch::Contains("frame size 63"));
}

TEST_CASE("The classic IMIX is 64/594/1518 at 7:4:1", "[unit]") {
    const auto imix = nm::classic_imix();
    CHECK(imix.is_mix());
    CHECK(imix.mean_frame_bytes() == Approx((7 * 64 + 4 * 594 + 1518) / 12.0));
    // Wire size per frame is the mean plus 20 bytes of preamble and gap.
    CHECK(nm::line_rate_fps(1e9, imix) == Approx(1e9 / ((4342.0 / 12 + 20) * 8)));
    CHECK(nm::layer2_bps(1000, imix) == Approx(1000 * 4342.0 / 12 * 8));
}

TEST_CASE("Frame sizes parse from the names people use", "[unit]") {
    const auto sizes = nm::default_frame_sizes();
    REQUIRE(sizes.size() == 8);
    CHECK(sizes.front().name == "64");
    CHECK(sizes.back().name == "imix");
    CHECK(nm::parse_frame_size("1280").shares.at(0).frame_bytes == 1280);
    const auto custom = nm::parse_frame_size("imix:64x1,1518x1");
    CHECK(custom.mean_frame_bytes() == Approx(791));
    CHECK_THROWS_WITH(nm::parse_frame_size("big"), Catch::Contains("frame size") && Catch::Contains("big"));
    CHECK_THROWS_WITH(nm::parse_frame_size("imix:64"), Catch::Contains("SIZExWEIGHT"));
    CHECK_THROWS_AS(nm::parse_frame_size("imix:32x1"), nm::Error);
}
