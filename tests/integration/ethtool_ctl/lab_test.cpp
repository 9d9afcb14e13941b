#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::run_command;
using nm::test::run_in_netns;

TEST_CASE("A pair lab passes IPv4 and IPv6 between its ends, checked with ping", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& client = lab.client();
    const auto& server = lab.server();
    // -W1: a lab returned before its qdiscs are active drops the first ARP request, and the retry
    // comes a second later; lab_up waits for operstate up, so the first request must get through.
    const auto v4 = run_in_netns(client.netns, "ping -c1 -W1 " + nm::strip_prefix(server.ipv4));
    CHECK(v4.exit_status == 0);
    const auto v6 = run_in_netns(client.netns, "ping -6 -c1 -W2 " + nm::strip_prefix(server.ipv6));
    CHECK(v6.exit_status == 0);
    const auto back = run_in_netns(server.netns, "ping -c1 -W2 " + nm::strip_prefix(client.ipv4));
    CHECK(back.exit_status == 0);
}

TEST_CASE("ip and ethtool see the lab's interfaces, addresses and loopback", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    for (const auto& end : {lab.client(), lab.server()}) {
        const auto addr = run_in_netns(end.netns, "ip -br addr show dev " + end.ifname);
        REQUIRE(addr.exit_status == 0);
        CHECK_THAT(addr.output, Catch::Contains(end.ipv4) && Catch::Contains(end.ipv6) && Catch::Contains("UP"));
        const auto kind = run_in_netns(end.netns, "ip -d link show dev " + end.ifname);
        CHECK_THAT(kind.output, Catch::Contains("veth"));
        const auto lo = run_in_netns(end.netns, "ip -br link show dev lo");
        CHECK_THAT(lo.output, Catch::Contains("UP") || Catch::Contains("UNKNOWN"));
        const auto k = run_in_netns(end.netns, "ethtool -k " + end.ifname);
        CHECK(k.exit_status == 0);
        CHECK_THAT(k.output, Catch::Contains("Features for " + end.ifname));
    }
}

TEST_CASE("A second lab up with the same name is refused and makes nothing", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto before = nm::list_netns();
    CHECK_THROWS_WITH(nm::lab_up(lab.info().name), Catch::Contains("already exists"));
    CHECK(nm::list_netns() == before);
}

TEST_CASE("lab up refuses when only one of its namespaces exists, and leaves it alone", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name();
    nm::create_netns(name + "-b");
    CHECK_THROWS_AS(nm::lab_up(name), nm::Error);
    CHECK_FALSE(nm::netns_exists(name + "-a"));
    CHECK(nm::netns_exists(name + "-b"));
    CHECK(nm::lab_down(name) == std::vector<std::string>{name + "-b"});
    CHECK(nm::lab_down(name).empty());
}

TEST_CASE("A bridge lab forwards between sender and receiver through the DUT's bridge", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    CHECK(lab.info().namespaces.size() == 3);
    const auto dut = lab.info().by_role("dut-bridge");
    const auto ports = run_in_netns(dut.netns, "ip -br link show master br0");
    CHECK_THAT(ports.output, Catch::Contains("dut-a") && Catch::Contains("dut-b"));
    CHECK(run_in_netns(lab.client().netns, "ping -c1 -W2 " + nm::strip_prefix(lab.server().ipv4)).exit_status == 0);
    CHECK(run_in_netns(lab.client().netns, "ping -6 -c1 -W2 " + nm::strip_prefix(lab.server().ipv6)).exit_status == 0);
}

TEST_CASE("NetnsScope moves only this thread and comes back", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto outside = run_command("readlink /proc/self/ns/net").output;
    std::string inside;
    {
        nm::NetnsScope scope(lab.client().netns);
        char buf[128] = {};
        const ssize_t n = ::readlink("/proc/thread-self/ns/net", buf, sizeof(buf) - 1);
        REQUIRE(n > 0);
        inside.assign(buf, static_cast<size_t>(n));
    }
    char buf[128] = {};
    const ssize_t n = ::readlink("/proc/thread-self/ns/net", buf, sizeof(buf) - 1);
    REQUIRE(n > 0);
    CHECK(std::string(buf, static_cast<size_t>(n)) + "\n" == outside);
    CHECK(inside + "\n" != outside);
    CHECK_THROWS_WITH(nm::NetnsScope("nm-no-such-netns"), Catch::Contains("does not exist"));
}
