#include <catch2/catch.hpp>

#include <chrono>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "tests/support/command.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::run_in_netns;

namespace {

void set_mtu(const std::string& netns, const std::string& ifname, uint32_t mtu) {
    const auto r = run_in_netns(netns, "ip link set dev " + ifname + " mtu " + std::to_string(mtu));
    REQUIRE(r.exit_status == 0);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A probe from the lab's client end to `to` larger than the client's MTU (1500) fails at once, saying so;
/// one that fits passes.
void check_oversized_probe_fails_at_once(const nm::test::ScopedLab& lab, const std::string& to) {
    nm::IcmpPathProbe probe(lab.client().netns, to);
    nm::test::wait_for_lab_path(lab.info());
    // "At once": well before the probe's own timeout, which is long here so that a loaded machine cannot
    // make waiting for it look like an immediate answer.
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = probe.probe(9000, std::chrono::milliseconds(10000), {});
    CHECK_FALSE(r.passed);
    CHECK_THAT(r.detail, Catch::EndsWith("larger than the sending interface's MTU"));
    CHECK(seconds_since(t0) < 5.0);
    CHECK(probe.probe(1500, std::chrono::milliseconds(1500), {}).passed);
}

/// check_peer_reachable from the lab's client end: against `to`, the server end (which it names `shown`),
/// with nothing listening on port 5301, then against `nobody` (an address no one has), then against `to`
/// once an iperf3 listens there.
void check_peer_checks(const nm::test::ScopedLab& lab, const std::string& to, const std::string& shown, const std::string& nobody) {
    const auto& a = lab.client();
    nm::test::wait_for_lab_path(lab.info());  // this test is about the checks, not a lab coming up
    CHECK_THROWS_WITH(nm::check_peer_reachable(a.netns, to, 5301, std::chrono::milliseconds(1000)),
                      Catch::StartsWith("peer " + shown + " port 5301: cannot connect (Connection refused)") ||
                          Catch::StartsWith("peer " + shown + " port 5301: no traffic server answers"));
    CHECK_THROWS_WITH(nm::check_peer_reachable(a.netns, nobody, 5301, std::chrono::milliseconds(500)),
                      "peer " + nobody + " is unreachable: no answer to ping within 500 ms");
    // With something listening on the server end, both checks pass.
    const auto listen = nm::test::run_command("ip netns exec " + lab.server().netns + " timeout 5 iperf3 -s -1 -p 5301 >/dev/null 2>&1 & sleep 0");
    REQUIRE(listen.exit_status == 0);
    nm::wait_until([&] { return run_in_netns(lab.server().netns, "ss -ltn 'sport = :5301' | grep -q 5301").exit_status == 0; },
                   std::chrono::seconds(3), "iperf3 listening in the server namespace");
    CHECK_NOTHROW(nm::check_peer_reachable(a.netns, to, 5301, std::chrono::milliseconds(1000)));
}

}  // namespace

TEST_CASE("The path probe finds a middle hop that drops jumbo frames within its timeout, and passes when it carries them", "[integration]") {
    nm::test::require_net_admin();
    // sender 9000 -> bridge ports at 1500 -> receiver 9000: frames above 1500 bytes vanish in the middle.
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    const auto& a = lab.client();
    const auto& b = lab.server();
    const std::string dut = lab.info().by_role("dut-client").netns;
    set_mtu(a.netns, a.ifname, 9000);
    set_mtu(b.netns, b.ifname, 9000);

    nm::IcmpPathProbe probe(a.netns, nm::strip_prefix(b.ipv4));
    // A bridge just made may take a moment to forward: wait for a full 1500-byte frame to cross.
    nm::wait_until([&] { return probe.probe(1500, std::chrono::milliseconds(300), {}).passed; }, std::chrono::seconds(5),
                   "a 1500-byte DF probe across the bridge");
    auto t0 = std::chrono::steady_clock::now();
    const auto jumbo = probe.probe(9000, std::chrono::milliseconds(1500), {});
    CHECK_FALSE(jumbo.passed);
    CHECK(seconds_since(t0) < 2.5);
    CHECK_THAT(jumbo.detail, Catch::Contains("9000-byte ICMP echo with DF set to 198.18.0.2: no echo within 1500 ms"));
    // The oracle agrees: ping with DF set at the same size gets no answer either.
    CHECK(run_in_netns(a.netns, "ping -c1 -W1 -M do -s 8972 " + nm::strip_prefix(b.ipv4)).exit_status != 0);
    CHECK(run_in_netns(a.netns, "ping -c1 -W1 -M do -s 1472 " + nm::strip_prefix(b.ipv4)).exit_status == 0);

    // The middle hop raised to 9000: the same probe passes, and a hop a little below does not
    // (veth lets frames up to MTU + 4 bytes of VLAN slack through, so 8990 and not 8999).
    for (const char* port : {"dut-a", "dut-b", "br0"}) set_mtu(dut, port, 9000);
    CHECK(probe.probe(9000, std::chrono::milliseconds(1500), {}).passed);
    set_mtu(dut, "dut-a", 8990);
    CHECK_FALSE(probe.probe(9000, std::chrono::milliseconds(500), {}).passed);
}

TEST_CASE("A probe larger than the sending interface's MTU fails at once, saying so", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    check_oversized_probe_fails_at_once(lab, nm::strip_prefix(lab.server().ipv4));
}

TEST_CASE("check_peer_reachable: a peer that answers ping but has no server, and one that does not answer", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    check_peer_checks(lab, nm::strip_prefix(lab.server().ipv4), "198.18.0.2", "198.18.0.77");
}

TEST_CASE("Over IPv6 the probe is ICMPv6 with don't-fragment: a 1500-byte bridge drops jumbo probes, a 9000-byte one carries them", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    const auto& a = lab.client();
    const auto& b = lab.server();
    const std::string dut = lab.info().by_role("dut-client").netns;
    const std::string to = nm::strip_prefix(b.ipv6);
    set_mtu(a.netns, a.ifname, 9000);
    set_mtu(b.netns, b.ifname, 9000);

    nm::IcmpPathProbe probe(a.netns, to);
    CHECK(probe.family() == AF_INET6);
    nm::wait_until([&] { return probe.probe(1500, std::chrono::milliseconds(300), {}).passed; }, std::chrono::seconds(5),
                   "a 1500-byte ICMPv6 probe across the bridge");
    const auto t0 = std::chrono::steady_clock::now();
    const auto jumbo = probe.probe(9000, std::chrono::milliseconds(1500), {});
    CHECK_FALSE(jumbo.passed);
    CHECK(seconds_since(t0) < 2.5);
    CHECK_THAT(jumbo.detail, Catch::Contains("9000-byte ICMPv6 echo, don't-fragment, to 2001:2::2: no echo within 1500 ms"));
    // The oracle: ping -6 with fragmentation forbidden (40 IPv6 + 8 ICMPv6 header bytes on top of -s).
    CHECK(run_in_netns(a.netns, "ping -6 -c1 -W1 -M do -s 8952 " + to).exit_status != 0);
    CHECK(run_in_netns(a.netns, "ping -6 -c1 -W1 -M do -s 1452 " + to).exit_status == 0);

    for (const char* port : {"dut-a", "dut-b", "br0"}) set_mtu(dut, port, 9000);
    CHECK(probe.probe(9000, std::chrono::milliseconds(1500), {}).passed);
    CHECK(run_in_netns(a.netns, "ping -6 -c1 -W1 -M do -s 8952 " + to).exit_status == 0);
    set_mtu(dut, "dut-a", 8990);
    CHECK_FALSE(probe.probe(9000, std::chrono::milliseconds(500), {}).passed);
    CHECK(probe.probe(8990, std::chrono::milliseconds(1500), {}).passed);
}

TEST_CASE("Over IPv6 a probe larger than the sending interface's MTU fails at once, and a bad target is named", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    check_oversized_probe_fails_at_once(lab, nm::strip_prefix(lab.server().ipv6));
    CHECK_THROWS_WITH(nm::IcmpPathProbe(lab.client().netns, "peer.example"),
                      "path probe target: expected an IPv4 or IPv6 address like 198.18.0.2 or 2001:2::2, got \"peer.example\"");
}

TEST_CASE("check_peer_reachable over IPv6: no server, no answer, and a listener found", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    check_peer_checks(lab, nm::strip_prefix(lab.server().ipv6), "2001:2::2", "2001:2::77");
}
