#include <catch2/catch.hpp>

#include "core/workers/udp_tracker.hpp"

TEST_CASE("UdpHeader round-trips in 18 bytes: 48-bit sequence and time, window bit, cookie", "[unit]") {
    unsigned char buf[18] = {};
    nm::UdpHeader h{0x0000040506070809ULL, 0x0000112233445566LL, 300, true, 0xdeadbeef};
    h.write(buf);
    const auto r = nm::UdpHeader::read(buf);
    CHECK(r.seq == h.seq);
    CHECK(r.send_ns == h.send_ns);
    CHECK(r.stream == 300);
    CHECK(r.in_window);
    CHECK(r.cookie == 0xdeadbeef);
    CHECK(buf[0] == 0x09);  // little-endian, whatever the host
    CHECK(buf[14] == 0xef);
    nm::UdpHeader{1, 2, 7, false, 5}.write(buf);
    CHECK_FALSE(nm::UdpHeader::read(buf).in_window);
    CHECK(nm::UdpHeader::read(buf).stream == 7);
    CHECK(nm::UdpHeader::read(buf).cookie == 5);
    nm::UdpHeader{(uint64_t{1} << 48) + 3, 0, 0, false, 0}.write(buf);
    CHECK(nm::UdpHeader::read(buf).seq == 3);  // 48 bits: 2.8e14 datagrams, 32 days at 100 Mpps
}

TEST_CASE("UdpSequenceTracker counts unique, duplicate and reordered datagrams", "[unit]") {
    nm::UdpSequenceTracker t;
    for (uint64_t s : {0, 1, 2, 4, 5, 3, 5, 9, 6, 0}) t.on_datagram(s, 0, 0);
    CHECK(t.received() == 8);    // 0 1 2 3 4 5 6 9
    CHECK(t.duplicates() == 2);  // the second 5 and the second 0
    CHECK(t.reordered() == 2);   // 3 after 5, 6 after 9
}

TEST_CASE("UdpSequenceTracker forgets skipped numbers across a large gap", "[unit]") {
    nm::UdpSequenceTracker t;
    t.on_datagram(5, 0, 0);
    const uint64_t far = 5 + nm::UdpSequenceTracker::kWindow;  // same ring slot as 5
    t.on_datagram(far, 0, 0);
    t.on_datagram(far - 1, 0, 0);
    CHECK(t.duplicates() == 0);
    CHECK(t.reordered() == 1);
    CHECK(t.received() == 3);
}

TEST_CASE("UdpSequenceTracker counts an arrival older than its window as reordered, never a duplicate", "[unit]") {
    nm::UdpSequenceTracker t;
    t.on_datagram(0, 0, 0);
    const uint64_t far = 5 + nm::UdpSequenceTracker::kWindow;  // its ring slot is 5's
    t.on_datagram(far, 0, 0);
    t.on_datagram(5, 0, 0);  // too old: the slot it shares with `far` says nothing about it
    CHECK(t.duplicates() == 0);
    CHECK(t.reordered() == 1);
}

TEST_CASE("UdpSequenceTracker jitter follows RFC 3550", "[unit]") {
    nm::UdpSequenceTracker t;
    // Transit times 1000, 1100, 1000 ns: |D| = 100 twice. J1 = 100/16, J2 = J1 + (100 - J1)/16.
    t.on_datagram(0, 0, 1000);
    t.on_datagram(1, 10000, 11100);
    t.on_datagram(2, 20000, 21000);
    const double j1 = 100.0 / 16;
    const double j2 = j1 + (100 - j1) / 16;
    CHECK(t.jitter_ms() == Approx(j2 / 1e6));
    nm::UdpSequenceTracker steady;
    for (uint64_t s = 0; s < 100; ++s) steady.on_datagram(s, static_cast<int64_t>(s) * 1000, static_cast<int64_t>(s) * 1000 + 500);
    CHECK(steady.jitter_ms() == 0);
}
