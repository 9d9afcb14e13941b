// Issue 36 on the real kernel, judged from outside with ip, ethtool and sysctl: an interface named like
// a host device's interrupt handler has no interrupts of its own; an MTU below 1280 is refused while the
// interface has IPv6 addresses; `nicmatrix restore` takes back only what nicmatrix wrote and reports what an
// administrator changed meanwhile; a journal writable by others is refused; namespace-wide sysctls have one
// entry per namespace, so two interfaces of one namespace put the sysctl back to what it was before either.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/forked_child.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

/// A namespace of the test's own with a veth pair in it (both ends up), deleted on scope exit.
struct OwnNetns {
    std::string name = nm::test::unique_name("nmtr");
    OwnNetns(const std::string& a, const std::string& b) {
        REQUIRE(run_command("ip netns add " + name).exit_status == 0);
        REQUIRE(run_command("ip -n " + name + " link add " + a + " type veth peer name " + b).exit_status == 0);
        REQUIRE(run_command("ip -n " + name + " link set " + a + " up && ip -n " + name + " link set " + b + " up").exit_status == 0);
    }
    ~OwnNetns() { run_command("ip netns del " + name); }
    OwnNetns(const OwnNetns&) = delete;
    OwnNetns& operator=(const OwnNetns&) = delete;
    std::string sh(const std::string& command) const { return run_in_netns(name, command).output; }
};

/// A test's own namespace with the veth pair nmtr-a/nmtr-b and a journal file in a scratch directory; the
/// test is skipped without CAP_NET_ADMIN.
struct NetnsWithJournal : nm::test::NeedsNetAdmin {
    OwnNetns ns{"nmtr-a", "nmtr-b"};
    nm::test::TempDir dir;
    const std::string journal = dir.file("j.json");
};

/// The name of a host interrupt handler of the form NAME-SOMETHING ("virtio2-input.0", "eth0-TxRx-0"): a
/// device name an interface in a namespace may take. "" when this host has none.
std::string host_irq_device_name() {
    std::ifstream in("/proc/interrupts");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || line.substr(0, colon).find_first_not_of(" 0123456789") != std::string::npos) continue;
        const std::string handler = line.substr(line.find_last_of(' ') + 1);
        const auto dash = handler.find('-');
        if (dash != std::string::npos && dash > 0 && dash <= 15) return handler.substr(0, dash);
    }
    return {};
}

}  // namespace

TEST_CASE("A veth named like a host device's interrupt handler has no interrupts of its own, none read, the axis says why", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = host_irq_device_name();
    if (name.empty()) {
        WARN("this host has no interrupt handler named DEVICE-...; nothing to impersonate");
        return;
    }
    OwnNetns ns(name, "nmtr-peer");
    const auto r = run_command(nicmatrix_binary() + " show " + name + " --netns " + ns.name + " --json");
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto j = nlohmann::json::parse(r.output);
    CHECK(j.at("tuning").at("irq_affinity").empty());
    CHECK_THAT(j.at("tuning").at("unsupported").at("irq_affinity").get<std::string>(), Catch::Contains("virtual device"));
}

TEST_CASE("set --mtu 1200 on an interface with IPv6 addresses is refused before anything changes, ip -6 addr keeps them", "[integration]") {
    nm::test::require_net_admin();
    OwnNetns ns("nmtr-a", "nmtr-b");
    REQUIRE(run_in_netns(ns.name, "ip -6 addr add 2001:2:0:36::1/64 dev nmtr-a nodad").exit_status == 0);
    // The addresses and the MTU, without the flags: the link-local address's DAD ("tentative") may end
    // while the test runs, which is the kernel's doing, not a change.
    const auto state = [&] { return ns.sh("ip -6 -o addr show dev nmtr-a | awk '{print $4}'") + ns.sh("cat /sys/class/net/nmtr-a/mtu"); };
    const std::string before = state();
    nm::test::TempDir dir;
    const auto r = run_command(nicmatrix_binary() + " set nmtr-a --netns " + ns.name + " --mtu 1200 --journal " + dir.file("j.json"));
    INFO(r.output);
    CHECK(r.exit_status != 0);
    CHECK_THAT(r.output, Catch::Contains("nmtr-a") && Catch::Contains("IPv6 address") && Catch::Contains("1280"));
    CHECK(state() == before);
    CHECK_THAT(before, Catch::Contains("2001:2:0:36::1/64"));
    // Without IPv6 addresses the same MTU is fine.
    REQUIRE(run_in_netns(ns.name, "ip -6 addr flush dev nmtr-a").exit_status == 0);
    CHECK(run_command(nicmatrix_binary() + " set nmtr-a --netns " + ns.name + " --mtu 1200 --journal " + dir.file("j.json")).exit_status == 0);
    CHECK(ns.sh("cat /sys/class/net/nmtr-a/mtu") == "1200\n");
    CHECK(run_command(nicmatrix_binary() + " restore --journal " + dir.file("j.json")).exit_status == 0);
    CHECK(ns.sh("cat /sys/class/net/nmtr-a/mtu") == "1500\n");
}

TEST_CASE_METHOD(NetnsWithJournal,
                 "restore takes back only what nicmatrix wrote, an administrator's MTU change after `set` is reported and kept, "
                 "the offload put back",
                 "[integration]") {
    REQUIRE(nm::test::ethtool_features(ns.name, "nmtr-a").at("tcp-segmentation-offload"));
    const auto set = run_command(nicmatrix_binary() + " set nmtr-a --netns " + ns.name + " --mtu 9000 --feature tso=off --journal " + journal);
    INFO(set.output);
    REQUIRE(set.exit_status == 0);
    REQUIRE_FALSE(nm::test::ethtool_features(ns.name, "nmtr-a").at("tcp-segmentation-offload"));
    REQUIRE(run_in_netns(ns.name, "ip link set dev nmtr-a mtu 4000").exit_status == 0);  // the administrator
    const auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("mtu is 4000 (nicmatrix wrote 9000; it was 1500 before)"));
    CHECK(ns.sh("cat /sys/class/net/nmtr-a/mtu") == "4000\n");
    CHECK(nm::test::ethtool_features(ns.name, "nmtr-a").at("tcp-segmentation-offload"));
    CHECK_FALSE(std::ifstream(journal).good());  // nothing more to do: the entry is gone
}

TEST_CASE_METHOD(NetnsWithJournal, "restore refuses a journal writable by others (it names files root writes), and changes nothing",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(ns.name, "nmtr-a");
    REQUIRE(run_command(nicmatrix_binary() + " set nmtr-a --netns " + ns.name + " --mtu 9000 --journal " + journal).exit_status == 0);
    REQUIRE(::chmod(journal.c_str(), 0666) == 0);
    const auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    INFO(r.output);
    CHECK(r.exit_status != 0);
    CHECK_THAT(r.output, Catch::Contains(journal) && Catch::Contains("writable by group or others"));
    CHECK(ns.sh("cat /sys/class/net/nmtr-a/mtu") == "9000\n");
    REQUIRE(::chmod(journal.c_str(), 0600) == 0);
    CHECK(run_command(nicmatrix_binary() + " restore --journal " + journal).exit_status == 0);
    unchanged.check();
}

TEST_CASE_METHOD(NetnsWithJournal,
                 "Two interfaces of one namespace change a sysctl, one namespace entry keeps the value from before either, and a "
                 "restore after the process died puts that back (sysctl judges)",
                 "[integration]") {
    const std::string original = ns.sh("sysctl -n net.ipv4.tcp_rmem");
    // A process that changes both interfaces and the namespace's tcp_rmem twice, then dies without restoring.
    auto child = nm::test::fork_child([&](int) {
        nm::NetlinkDeviceControl device(ns.name);
        nm::FileSettingsJournal j(journal);
        nm::LinkSettings first;
        first.tuning.sysctl["net.ipv4.tcp_rmem"] = "4096 100000 200000";
        nm::apply_recorded(device, j, "nmtr-a", first);
        nm::LinkSettings second;
        second.mtu = 9000;
        second.tuning.sysctl["net.ipv4.tcp_rmem"] = "4096 300000 400000";
        nm::apply_recorded(device, j, "nmtr-b", second);
    });
    const int status = child.reap();
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK(ns.sh("sysctl -n net.ipv4.tcp_rmem") == "4096\t300000\t400000\n");
    const auto entries = nm::FileSettingsJournal(journal).entries();
    int netns_entries = 0;
    for (const auto& e : entries) {
        if (e.scope != nm::JournalScope::Netns) {
            CHECK(e.writes.count("sysctl.net.ipv4.tcp_rmem") == 0);
            continue;
        }
        ++netns_entries;
        CHECK(e.writes.at("sysctl.net.ipv4.tcp_rmem").before + "\n" ==
              std::string(original).replace(original.find('\t'), 1, " ").replace(original.rfind('\t'), 1, " "));
    }
    CHECK(netns_entries == 1);
    const auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(ns.sh("sysctl -n net.ipv4.tcp_rmem") == original);
    CHECK(ns.sh("cat /sys/class/net/nmtr-b/mtu") == "1500\n");
}
