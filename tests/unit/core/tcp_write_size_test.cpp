#include <catch2/catch.hpp>

#include "core/workers/tcp_write_size.hpp"

TEST_CASE("A send unit is the MSS times the segments a 64 KiB GSO packet holds", "[unit]") {
    // (65536 - 320 - 1) / MSS segments: 45 of 1448 (IPv4, timestamps, MTU 1500), 45 of 1428 (IPv6), 44 of
    // 1460 (no timestamps), 7 of 8948 (MTU 9000), 1 of an MSS larger than half the packet.
    CHECK(nm::tcp_send_unit(1448) == 45 * 1448);
    CHECK(nm::tcp_send_unit(1428) == 45 * 1428);
    CHECK(nm::tcp_send_unit(1460) == 44 * 1460);
    CHECK(nm::tcp_send_unit(8948) == 7 * 8948);
    CHECK(nm::tcp_send_unit(40000) == 40000);
    CHECK(nm::tcp_send_unit(65483) == 65483);
    CHECK(nm::tcp_send_unit(0) == 0);
    // Every unit fits the GSO packet the kernel builds, headers included.
    for (uint32_t mss = 88; mss <= 65495; mss += 97) {
        INFO(mss);
        const uint32_t unit = nm::tcp_send_unit(mss);
        CHECK(unit % mss == 0);
        if (mss <= nm::kLegacyGsoMaxBytes - nm::kMaxTcpHeaderBytes - 1) CHECK(unit + nm::kMaxTcpHeaderBytes < nm::kLegacyGsoMaxBytes);
    }
}

TEST_CASE("The default write is the largest whole number of send units under the cap", "[unit]") {
    constexpr uint32_t cap = 128 * 1024;
    CHECK(nm::whole_unit_write_size(1448, cap) == 130320);   // 2 x 45 x 1448
    CHECK(nm::whole_unit_write_size(1428, cap) == 128520);   // 2 x 45 x 1428
    CHECK(nm::whole_unit_write_size(1460, cap) == 128480);   // 2 x 44 x 1460, not 89 x 1460
    CHECK(nm::whole_unit_write_size(8948, cap) == 125272);   // 2 x 7 x 8948
    CHECK(nm::whole_unit_write_size(536, cap) == 129712);    // 2 x 121 x 536
    CHECK(nm::whole_unit_write_size(65483, cap) == 130966);  // 2 segments of the largest MSS veth allows
    // Below one unit: whole segments; below one segment, or with the MSS unknown: the cap itself.
    CHECK(nm::whole_unit_write_size(1448, 20000) == 13 * 1448);
    CHECK(nm::whole_unit_write_size(1448, 1000) == 1000);
    CHECK(nm::whole_unit_write_size(0, cap) == cap);
    for (uint32_t mss = 88; mss <= 65495; mss += 97) {
        INFO(mss);
        const uint32_t w = nm::whole_unit_write_size(mss, cap);
        CHECK(w <= cap);
        CHECK(w % nm::tcp_send_unit(mss) == 0);
        CHECK(cap - w < nm::tcp_send_unit(mss));  // the largest such multiple
    }
}
