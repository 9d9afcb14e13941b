// The helper that checks an interface ends as it began: every view it reads sees a change, its undoing
// leaves no difference, a bridge's running timers are not state, and it names what differs.
#include <catch2/catch.hpp>

#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::interface_state;
using nm::test::run_in_netns;
using nm::test::state_difference;

TEST_CASE("EndsAsItBegan: each oracle's change shows as a difference, its undoing as none, and a bridge's timers are not state", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    const auto& a = lab.client();
    const auto& bridge = lab.info().by_role("dut-bridge");
    const auto& port = lab.info().by_role("dut-client");
    const nm::test::EndsAsItBegan bridge_unchanged(bridge);
    const nm::test::EndsAsItBegan port_unchanged(port);
    const std::vector<std::string> sysctls{"net.ipv4.tcp_rmem"};
    const nm::test::EndsAsItBegan unchanged(a, sysctls);
    const auto& before = unchanged.before();
    CHECK_THAT(before.at("ip -d link"), Catch::Contains(" mtu 1500 "));
    CHECK_THAT(before.at("ethtool -k"), Catch::Contains("tcp-segmentation-offload: on"));
    CHECK_THAT(before.at("ethtool -l"), Catch::Contains("Current hardware settings"));
    const std::string rmem = before.at("sysctl net.ipv4.tcp_rmem").substr(0, before.at("sysctl net.ipv4.tcp_rmem").find('\n'));
    const std::string channels = nm::test::ethtool_channels(a.netns, a.ifname);  // "RX: 2 TX: 2"
    const bool two = channels == "RX: 2 TX: 2";
    REQUIRE((two || channels == "RX: 1 TX: 1"));

    const std::string dev = " dev " + a.ifname;
    const struct {
        const char* view;
        std::string change, undo, shown;
    } changes[] = {
        {"ip -d link", "ip link set" + dev + " mtu 1400", "ip link set" + dev + " mtu 1500", "mtu 1400"},
        {"ethtool -k", "ethtool -K " + a.ifname + " tso off", "ethtool -K " + a.ifname + " tso on", "tcp-segmentation-offload: off"},
        {"ethtool -l", std::string("ethtool -L ") + a.ifname + (two ? " rx 1 tx 1" : " rx 2 tx 2"),
         std::string("ethtool -L ") + a.ifname + (two ? " rx 2 tx 2" : " rx 1 tx 1"), two ? "RX:\t\t1" : "RX:\t\t2"},
        {"tc qdisc", "tc qdisc replace" + dev + " root pfifo limit 100", "tc qdisc del" + dev + " root", "qdisc pfifo"},
        {"rps_cpus", "sh -c 'echo 1 > /sys/class/net/" + a.ifname + "/queues/rx-0/rps_cpus'",
         "sh -c 'echo 0 > /sys/class/net/" + a.ifname + "/queues/rx-0/rps_cpus'", "1"},
        {"sysctl net.ipv4.tcp_rmem", "sysctl -qw 'net.ipv4.tcp_rmem=4096 65536 1000000'", "sysctl -qw 'net.ipv4.tcp_rmem=" + rmem + "'", "1000000"},
    };
    for (const auto& c : changes) {
        INFO(c.view);
        REQUIRE(run_in_netns(a.netns, c.change).exit_status == 0);
        const auto changed = state_difference(before, interface_state(a.netns, a.ifname, sysctls));
        CHECK_THAT(changed, Catch::Contains(std::string(c.view) + ":\n  - "));  // another view may show it too (ip link: the qdisc)
        CHECK_THAT(changed, Catch::Contains("\n  + ") && Catch::Contains(c.shown));
        REQUIRE(run_in_netns(a.netns, c.undo).exit_status == 0);
        CHECK(state_difference(before, interface_state(a.netns, a.ifname, sysctls)).empty());
        CHECK(unchanged.check());
    }
    CHECK_THAT(bridge_unchanged.before().at("ip -d link"), Catch::Contains("bridge forward_delay") && !Catch::Contains("_timer"));
    CHECK_THAT(port_unchanged.before().at("ip -d link"), Catch::Contains("bridge_slave") && !Catch::Contains("_timer"));
}
