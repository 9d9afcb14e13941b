#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/workers/read_size_policy.hpp"

using namespace std::chrono_literals;
using nm::ReadSizePolicy;

namespace {

// /proc/net/dev with nm-b at `rx_bytes` and `rx_packets` (the format of a 6.x kernel).
std::string net_dev(uint64_t rx_bytes, uint64_t rx_packets) {
    return "Inter-|   Receive                                                |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
           "    lo:    1234      12    0    0    0     0          0         0     1234      12    0    0    0     0       0          0\n"
           "  nm-b: " +
           std::to_string(rx_bytes) + " " + std::to_string(rx_packets) +
           "    0    0    0     0          0         0  9876543    4321    0    0    0     0       0          0\n";
}

// A reader that returns the given texts one after the other (and counts its calls).
struct Readings {
    std::vector<std::string> texts;
    size_t calls = 0;
    ReadSizePolicy::NetDevReader reader() {
        return [this] { return texts.at(calls++); };
    }
};

}  // namespace

TEST_CASE("net_dev_counters finds one interface in canned /proc/net/dev text", "[unit]") {
    const auto c = nm::net_dev_counters(net_dev(3620021984, 73933), "nm-b");
    REQUIRE(c);
    CHECK(c->rx_bytes == 3620021984);
    CHECK(c->rx_packets == 73933);
    CHECK(c->tx_packets == 4321);
    CHECK_FALSE(nm::net_dev_counters(net_dev(1, 1), "nm-a"));
    CHECK_FALSE(nm::net_dev_counters("garbage\n", "nm-b"));
}

TEST_CASE("rx_aggregated: a mean received packet of 16 KiB or more means TSO/GRO aggregates", "[unit]") {
    nm::LinkCounters a, b;
    a.rx_bytes = 1000;
    a.rx_packets = 10;
    b.rx_bytes = a.rx_bytes + 100UL * 16 * 1024;
    b.rx_packets = a.rx_packets + 100;
    CHECK(nm::rx_aggregated(a, b));
    b.rx_bytes -= 1;  // just under 16 KiB per packet
    CHECK_FALSE(nm::rx_aggregated(a, b));
    b = a;
    CHECK_FALSE(nm::rx_aggregated(a, b));  // nothing arrived
    b.rx_bytes = 0;                        // counters went back (a reset): no verdict
    b.rx_packets = 0;
    CHECK_FALSE(nm::rx_aggregated(a, b));
}

TEST_CASE("ReadSizePolicy switches to big reads once, after the probe saw aggregated packets", "[unit]") {
    Readings r{{net_dev(0, 0), net_dev(64UL * 65536, 64)}};  // 64 KiB per packet: GRO on veth
    const nm::TimePoint t0{};
    ReadSizePolicy p(0, "nm-b", false, t0, r.reader());
    CHECK(r.calls == 1);
    CHECK(p.read_size() == ReadSizePolicy::kReadSize);
    CHECK(p.buffer_size() == ReadSizePolicy::kBigReadSize);
    CHECK_FALSE(p.update(t0 + 199ms));  // still probing: the interface is not read again
    CHECK(r.calls == 1);
    CHECK(p.update(t0 + ReadSizePolicy::kProbeTime));
    CHECK(p.read_size() == ReadSizePolicy::kBigReadSize);
    CHECK_FALSE(p.update(t0 + 1s));  // decided once
    CHECK(r.calls == 2);
}

TEST_CASE("ReadSizePolicy keeps iperf3's read size when segments arrive one by one", "[unit]") {
    Readings r{{net_dev(0, 0), net_dev(1000UL * 1514, 1000)}};
    const nm::TimePoint t0{};
    ReadSizePolicy p(0, "nm-b", false, t0, r.reader());
    CHECK_FALSE(p.update(t0 + 1s));
    CHECK(p.read_size() == ReadSizePolicy::kReadSize);
}

TEST_CASE("ReadSizePolicy does not probe a paced test, an unknown interface or one it cannot read", "[unit]") {
    const nm::TimePoint t0{};
    Readings paced{{net_dev(0, 0), net_dev(64UL * 65536, 64)}};
    ReadSizePolicy a(0, "nm-b", true, t0, paced.reader());
    CHECK_FALSE(a.update(t0 + 1s));
    CHECK(paced.calls == 0);

    Readings none{{net_dev(0, 0), net_dev(64UL * 65536, 64)}};
    ReadSizePolicy b(0, "", false, t0, none.reader());
    CHECK_FALSE(b.update(t0 + 1s));
    CHECK(none.calls == 0);

    Readings missing{{net_dev(0, 0)}};
    ReadSizePolicy c(0, "nm-x", false, t0, missing.reader());  // not listed: no probe
    CHECK_FALSE(c.update(t0 + 1s));
    CHECK(missing.calls == 1);

    ReadSizePolicy d(0, "nm-b", false, t0, []() -> std::string { throw nm::Error(nm::ErrorKind::Failed, "no /proc"); });
    CHECK_FALSE(d.update(t0 + 1s));
    CHECK(d.read_size() == ReadSizePolicy::kReadSize);
}

TEST_CASE("ReadSizePolicy: a write size above the read sizes is the read size and the buffer", "[unit]") {
    Readings r{{net_dev(0, 0)}};
    ReadSizePolicy p(4u << 20, "", false, {}, r.reader());
    CHECK(p.read_size() == 4u << 20);
    CHECK(p.buffer_size() == 4u << 20);
}
