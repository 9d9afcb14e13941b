#include <catch2/catch.hpp>

#include <sstream>

#include "core/host/cpu_affinity.hpp"
#include "core/host/cpu_layout.hpp"
#include "core/host/host_info.hpp"
#include "ethtool_ctl/interface_system.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "tests/support/command.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

TEST_CASE("read_interface_system in a lab namespace: root qdisc as tc shows it, RPS masks as sysfs shows them, no IRQs on veth", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& a = lab.client();
    // Give the interface a root qdisc and an RPS mask that are not the defaults, so a reader that made
    // them up (or read the host's namespace) would be caught.
    REQUIRE(nm::test::run_in_netns(a.netns, "tc qdisc replace dev " + a.ifname + " root handle 1234: tbf rate 1gbit burst 128k latency 50ms")
                .exit_status == 0);
    REQUIRE(nm::test::run_in_netns(a.netns, "sh -c 'echo 1 > /sys/class/net/" + a.ifname + "/queues/rx-0/rps_cpus'").exit_status == 0);

    const auto s = nm::read_interface_system(a.netns, a.ifname);
    const auto tc = nm::test::run_in_netns(a.netns, "tc qdisc show dev " + a.ifname + " root");
    INFO(tc.output);
    REQUIRE(tc.exit_status == 0);
    CHECK(s.qdisc == "tbf");
    CHECK(s.qdisc_handle == "1234:");
    CHECK(tc.output.rfind("qdisc " + s.qdisc + " " + s.qdisc_handle + " root", 0) == 0);

    // Every rx queue's rps_cpus and every tx queue's xps_cpus as cat reads them in the namespace; a mask
    // cat cannot read (xps_cpus of a single-queue veth: ENOENT) is none.
    const auto ls = nm::test::run_in_netns(a.netns, "ls /sys/class/net/" + a.ifname + "/queues");
    REQUIRE(ls.exit_status == 0);
    size_t rx = 0, txq = 0;
    std::istringstream names(ls.output);
    for (std::string q; names >> q;) (q.rfind("rx-", 0) == 0 ? rx : txq) += 1;
    REQUIRE(s.rps.size() == rx);
    REQUIRE(s.xps.size() == txq);
    for (const auto* list : {&s.rps, &s.xps}) {
        for (const auto& m : *list) {
            INFO(m.queue);
            const auto cat = nm::test::run_in_netns(
                a.netns, "cat /sys/class/net/" + a.ifname + "/queues/" + m.queue + (list == &s.rps ? "/rps_cpus" : "/xps_cpus"));
            CHECK(m.mask.has_value() == (cat.exit_status == 0));
            if (m.mask && cat.exit_status == 0) CHECK(*m.mask == trimmed(cat.output));
        }
    }
    REQUIRE_FALSE(s.rps.empty());
    REQUIRE(s.rps[0].mask.has_value());
    CHECK(s.rps[0].mask->find_last_not_of("0,") != std::string::npos);  // the 1 we wrote, not all zero
    CHECK(std::stoul(s.rps[0].mask->substr(s.rps[0].mask->rfind(',') + 1), nullptr, 16) == 1);
    // veth has no device behind it: no IRQs, no NUMA node (none, not a made-up one).
    CHECK(nm::test::run_in_netns(a.netns, "test -e /sys/class/net/" + a.ifname + "/device").exit_status != 0);
    CHECK(s.irqs.empty());
    CHECK_FALSE(s.numa_node.has_value());

    // The same through the device control the sweep uses; an unknown interface is none, not an error.
    nm::NetlinkDeviceControl device(a.netns);
    const auto d = device.describe(a.ifname);
    REQUIRE(d.has_value());
    CHECK(d->qdisc == "tbf");
    CHECK_FALSE(device.describe("nm-nosuch").has_value());
    CHECK_THROWS_AS(nm::read_interface_system(a.netns, "nm-nosuch"), nm::Error);
    // The host's own /sys still shows the host's interfaces: the namespace's sysfs was mounted privately.
    CHECK(nm::test::run_command("test -e /sys/class/net/" + a.ifname).exit_status != 0);
    CHECK(nm::test::run_command("grep -c nm-sysfs /proc/self/mountinfo").output == "0\n");
}

TEST_CASE("read_cpu_layout: cores, packages and NUMA nodes as lscpu shows them, governor and frequency as cpufreq shows them or none",
          "[integration]") {
    const auto layout = nm::read_cpu_layout();
    const auto lscpu = nm::test::run_command("lscpu -p=CPU,CORE,SOCKET,NODE | grep -v '^#'");
    REQUIRE(lscpu.exit_status == 0);
    std::istringstream lines(lscpu.output);
    size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        INFO(line);
        REQUIRE(n < layout.cpus.size());
        const auto& c = layout.cpus[n];
        std::istringstream fields(line);
        std::string cpu, core, socket, node;
        std::getline(fields, cpu, ',');
        std::getline(fields, core, ',');
        std::getline(fields, socket, ',');
        std::getline(fields, node, ',');
        CHECK(std::to_string(c.cpu) == cpu);
        CHECK((c.core ? std::to_string(*c.core) : "") == core);
        CHECK((c.package ? std::to_string(*c.package) : "") == socket);
        CHECK((c.node ? std::to_string(*c.node) : "") == node);
        const std::string freq = "/sys/devices/system/cpu/cpu" + cpu + "/cpufreq/";
        const auto gov = nm::test::run_command("cat " + freq + "scaling_governor");
        CHECK(c.governor.has_value() == (gov.exit_status == 0));
        if (c.governor && gov.exit_status == 0) CHECK(*c.governor == trimmed(gov.output));
        CHECK(c.freq_khz.has_value() == (nm::test::run_command("cat " + freq + "scaling_cur_freq").exit_status == 0));
    }
    CHECK(n == layout.cpus.size());
    const auto smt = nm::test::run_command("cat /sys/devices/system/cpu/smt/active");
    CHECK(layout.smt_active.has_value() == (smt.exit_status == 0));
    if (layout.smt_active && smt.exit_status == 0) CHECK((*layout.smt_active ? "1" : "0") == trimmed(smt.output));
    // lscpu's "NUMA nodeN CPU(s):" lines name the same CPUs as the nodes' cpulists (lscpu writes "0,1"
    // where sysfs writes "0-1").
    const auto nodes = nm::test::run_command("lscpu | grep -c '^NUMA node[0-9]* CPU(s):'");
    CHECK(std::to_string(layout.numa_nodes.size()) == trimmed(nodes.output));
    for (const auto& [node, list] : layout.numa_nodes) {
        const auto l = nm::test::run_command("lscpu | sed -n 's/^NUMA node" + std::to_string(node) + " CPU(s): *//p'");
        CHECK(nm::parse_cpu_list(trimmed(l.output), "lscpu") == nm::parse_cpu_list(list, "sysfs"));
    }
    CHECK(nm::read_host_info().cpu_layout.cpus.size() == layout.cpus.size());
}
