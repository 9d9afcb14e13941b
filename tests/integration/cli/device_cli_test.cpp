// nicmatrix show / set / restore on a real veth, held against ethtool -k and ip -d link.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/forked_child.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nlohmann::json;
using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

// One line of `ethtool -k`: "name: on|off [suffix]", a tab before group members.
struct EthtoolLine {
    bool active = false;
    bool fixed = false;
    bool wanted = false;
    bool header = false;  ///< a group line followed by its members (printed without a suffix)
};

std::map<std::string, EthtoolLine> ethtool_k(const std::string& netns, const std::string& ifname) {
    const auto r = run_in_netns(netns, "ethtool -k " + ifname);
    REQUIRE(r.exit_status == 0);
    std::map<std::string, EthtoolLine> out;
    std::istringstream in(r.output);
    std::string line;
    std::string previous_top;
    const std::regex re(R"(^(\t?)([^:]+): (on|off)( \[(fixed|requested on|requested off)\])?$)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_match(line, m, re)) continue;
        EthtoolLine l;
        l.active = m[3] == "on";
        l.fixed = m[5] == "fixed";
        l.wanted = m[5] == "requested on" ? true : m[5] == "requested off" ? false : l.active;
        if (m[1] == "\t" && !previous_top.empty()) out[previous_top].header = true;
        if (m[1] != "\t") previous_top = m[2];
        out[m[2]] = l;
    }
    REQUIRE(out.size() > 20);
    return out;
}

uint32_t ip_mtu(const nm::LabInterface& itf) {
    const auto out = run_in_netns(itf.netns, "ip -d link show " + itf.ifname).output;
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"( mtu (\d+) )")));
    return static_cast<uint32_t>(std::stoul(m[1]));
}

std::string nm_cmd(const nm::LabInterface& itf, const std::string& verb, const std::string& args) {
    return nicmatrix_binary() + " " + verb + " " + itf.ifname + " --netns " + itf.netns + " " + args;
}

json run_json(const std::string& cmd, int expected_exit = 0) {
    const auto r = run_command(cmd);
    INFO(cmd << "\n" << r.output);
    REQUIRE(r.exit_status == expected_exit);
    // stderr (the refusal line) follows the JSON document when the exit is not 0.
    return json::parse(r.output.substr(0, r.output.rfind('}') + 1));
}

// ethtool -k prints a one-member group under the group's name: map it back to the kernel name.
std::string kernel_name_of(const std::string& printed) {
    for (const auto& g : nm::kFeatureGroups) {
        if (printed == g.long_name && g.pattern.find('*') == std::string_view::npos) return std::string(g.pattern);
    }
    return printed;
}

void check_show_matches_ethtool(const nm::LabInterface& itf, const std::string& extra) {
    const json show = run_json(nm_cmd(itf, "show", "--json" + extra));
    const auto eth = ethtool_k(itf.netns, itf.ifname);
    const auto& features = show.at("features");
    for (const auto& [name, l] : eth) {
        INFO("feature " << name << extra);
        REQUIRE(features.contains(name));
        CHECK(features.at(name).at("active") == l.active);
        if (!l.header) {
            CHECK(features.at(name).at("fixed") == l.fixed);
            if (!l.fixed) CHECK(features.at(name).at("wanted") == l.wanted);
        }
    }
    for (const auto& [name, state] : features.items()) {
        INFO("nicmatrix shows " << name << " which ethtool -k does not");
        CHECK(eth.count(name) == 1);
    }
    CHECK(show.at("mtu") == ip_mtu(itf));
    // ethtool IFACE prints "Speed: 10000Mb/s" and "Duplex: Full" for a veth.
    const auto settings = run_in_netns(itf.netns, "ethtool " + itf.ifname).output;
    CHECK_THAT(settings, Catch::Contains("Speed: " + std::to_string(show.at("speed_mbps").get<uint32_t>()) + "Mb/s"));
    CHECK_THAT(settings, Catch::Contains(show.at("duplex") == "full" ? "Duplex: Full" : "Duplex: Half"));
    const auto ipd = run_in_netns(itf.netns, "ip -d link show " + itf.ifname).output;
    CHECK_THAT(ipd, Catch::Contains("minmtu " + std::to_string(show.at("mtu_min").get<uint32_t>()) + " maxmtu " +
                                    std::to_string(show.at("mtu_max").get<uint32_t>())));
}

// Every kernel feature of an apply report against ethtool -k, one by one.
void check_report_matches_ethtool(const json& report, const nm::LabInterface& itf) {
    const auto eth = ethtool_k(itf.netns, itf.ifname);
    std::map<std::string, bool> printed;
    for (const auto& [name, l] : eth) {
        if (!l.header) printed[kernel_name_of(name)] = l.active;
    }
    size_t compared = 0;
    for (const auto& [name, active] : report.at("active_after").items()) {
        if (printed.count(name) == 0) continue;  // ethtool 6.1 prints every name it gets from the kernel; none missing here
        INFO("feature " << name);
        CHECK(printed.at(name) == active.get<bool>());
        ++compared;
    }
    CHECK(compared == printed.size());
    CHECK(report.at("mtu_after") == ip_mtu(itf));
}

// A per-test journal path, removed (with its lock file) however the test ends.
struct TempJournal {
    std::string path = "/tmp/" + nm::test::unique_name("nmj") + ".json";
    ~TempJournal() {
        ::unlink(path.c_str());
        ::unlink((path + ".lock").c_str());
    }
};

/// A test that changes the lab's client end `a` through `nicmatrix set`, with a journal of its own: the
/// test checks `unchanged` (the end as it began) where it expects it back.
struct ClientUnderChange : nm::test::NeedsNetAdmin {
    nm::test::ScopedLab lab;
    const nm::LabInterface& a = lab.client();
    const TempJournal temp_journal{};
    const std::string journal = temp_journal.path;
    const nm::test::EndsAsItBegan unchanged{a};
};

const json* change_of(const json& report, const std::string& name) {
    for (const auto& c : report.at("features")) {
        if (c.at("name") == name) return &c;
    }
    return nullptr;
}

}  // namespace

TEST_CASE("show --json matches ethtool -k for every feature and ip -d link for the MTU range", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string path = GENERATE(as<std::string>{}, "", " --ioctl");
    check_show_matches_ethtool(lab.client(), path);
    const auto text = run_command(nm_cmd(lab.client(), "show", path));
    CHECK(text.exit_status == 0);
    CHECK_THAT(text.output, Catch::Contains("driver: veth") && Catch::Contains("mtu: 1500 (min 68, max 65535)"));
    // The feature lines are ethtool -k's, line for line.
    const auto eth = run_in_netns(lab.client().netns, "ethtool -k " + lab.client().ifname).output;
    CHECK(text.output.substr(text.output.find("Features for")) == eth);
}

TEST_CASE_METHOD(ClientUnderChange, "set tx=off takes TCP segmentation along as side effects, and ethtool -k agrees", "[integration]") {
    const std::string path = GENERATE(as<std::string>{}, "", " --ioctl");

    const json report = run_json(nm_cmd(a, "set", "--feature tx=off --json --journal " + journal + path));
    CHECK(report.at("path") == (path.empty() ? "netlink" : "ioctl"));
    CHECK(report.at("all_requested_hold") == true);
    for (const char* name : {"tx-checksum-ip-generic", "tx-checksum-sctp"}) {
        INFO(name);
        REQUIRE(change_of(report, name));
        CHECK(change_of(report, name)->at("outcome") == "applied");
        CHECK(change_of(report, name)->at("requested_as") == "tx");
    }
    for (const char* name : {"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation"}) {
        INFO(name);
        REQUIRE(change_of(report, name));
        CHECK(change_of(report, name)->at("outcome") == "side_effect");
        CHECK(change_of(report, name)->at("after") == false);
        CHECK(change_of(report, name)->at("requested").is_null());
    }
    CHECK_FALSE(change_of(report, "tx-checksum-ipv4"));  // fixed member of the group: not asked
    check_report_matches_ethtool(report, a);
    check_show_matches_ethtool(a, path);
    const auto eth = ethtool_k(a.netns, a.ifname);
    CHECK_FALSE(eth.at("tx-tcp-segmentation").active);
    CHECK(eth.at("tx-tcp-segmentation").wanted);  // still wanted: ethtool shows [requested on]

    // TSO cannot come back while tx checksumming is off: the kernel keeps it off, which is a refusal.
    const json refused = run_json(nm_cmd(a, "set", "--feature tx-tcp-segmentation=on --json --journal " + journal + path), 1);
    CHECK(change_of(refused, "tx-tcp-segmentation")->at("outcome") == "unsupported");
    CHECK(refused.at("all_requested_hold") == false);
    CHECK_FALSE(ethtool_k(a.netns, a.ifname).at("tx-tcp-segmentation").active);

    const auto restored = run_command(nicmatrix_binary() + " restore --journal " + journal);
    CHECK(restored.exit_status == 0);
    unchanged.check();
}

TEST_CASE_METHOD(ClientUnderChange, "set applies several features and the MTU at once, ethtool -k and ip -d link agree", "[integration]") {
    const std::string path = GENERATE(as<std::string>{}, "", " --ioctl");

    const json report = run_json(nm_cmd(a, "set",
                                        "--mtu 9000 --feature gso=off --feature generic-receive-offload=on "
                                        "--feature rx-gro-list=on --feature sg=on --json --journal " +
                                            journal + path));
    CHECK(report.at("mtu").at("outcome") == "applied");
    CHECK(change_of(report, "tx-generic-segmentation")->at("outcome") == "applied");
    CHECK(change_of(report, "rx-gro")->at("outcome") == "applied");
    CHECK(change_of(report, "rx-gro-list")->at("outcome") == "applied");
    CHECK(change_of(report, "tx-scatter-gather")->at("outcome") == "already_set");
    CHECK(ip_mtu(a) == 9000);
    check_report_matches_ethtool(report, a);
    check_show_matches_ethtool(a, path);

    // A second set on the same interface keeps the first original in the journal.
    run_json(nm_cmd(a, "set", "--mtu 4000 --json --journal " + journal + path));
    CHECK(ip_mtu(a) == 4000);
    CHECK(run_command(nicmatrix_binary() + " restore --journal " + journal).exit_status == 0);
    unchanged.check();
    const auto again = run_command(nicmatrix_binary() + " restore --journal " + journal);
    CHECK(again.exit_status == 0);
    CHECK_THAT(again.output, Catch::Contains("nothing to restore"));
    unchanged.check();
}

TEST_CASE_METHOD(ClientUnderChange, "A process SIGKILLed after changing offloads and MTU leaves a journal that restore undoes", "[integration]") {
    // The victim: journal first, change, then wait to be killed without any chance to clean up.
    auto victim = nm::test::fork_child([&](int report) {
        nm::NetlinkDeviceControl device(a.netns);
        nm::FileSettingsJournal j(journal);
        j.remember(device.read(a.ifname));
        nm::LinkSettings change;
        change.mtu = 9000;
        change.features = {{"tx", false}, {"gro", true}, {"sg", false}};
        nm::apply_recorded(device, j, a.ifname, change);
        (void)!::write(report, "x", 1);
        for (;;) ::pause();
    });
    char byte = 0;
    REQUIRE(victim.read_report(&byte, 1));
    const int status = victim.reap(true);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);

    CHECK(ip_mtu(a) == 9000);
    CHECK_FALSE(ethtool_k(a.netns, a.ifname).at("tx-tcp-segmentation").active);
    CHECK_FALSE(unchanged.difference().empty());
    CHECK(run_command("test -s " + journal).exit_status == 0);

    const auto restored = run_command(nicmatrix_binary() + " restore --journal " + journal);
    INFO(restored.output);
    CHECK(restored.exit_status == 0);
    unchanged.check();
    CHECK(ip_mtu(a) == 1500);
    CHECK(run_command("test -e " + journal).exit_status != 0);
}

TEST_CASE_METHOD(ClientUnderChange, "Bad input gets a clear error, the right exit status, and changes nothing", "[integration]") {
    const auto expect = [&](const std::string& cmd, int status, const std::vector<std::string>& words) {
        const auto r = run_command(cmd);
        INFO(cmd << "\n" << r.output);
        CHECK(r.exit_status == status);
        for (const auto& w : words) CHECK_THAT(r.output, Catch::Contains(w));
        unchanged.check();
    };
    const std::string j = " --journal " + journal;

    expect(nicmatrix_binary() + " set nm-zz --netns " + a.netns + " --feature tso=off" + j, 2, {"nm-zz", "no such interface"});
    expect(nicmatrix_binary() + " show nm-zz --netns " + a.netns, 2, {"nm-zz"});
    expect(nm_cmd(a, "set", "--feature gso=off --feature turbo=off" + j), 2, {"turbo", a.ifname});
    expect(nm_cmd(a, "set", "--feature gso=off --feature ufo=off" + j), 2, {"ufo", a.ifname});
    expect(nm_cmd(a, "set", "--feature gso" + j), 2, {"NAME=on"});
    expect(nm_cmd(a, "set", "--mtu 70000 --feature gso=off" + j), 2, {"70000", "68..65535", a.ifname});
    expect(nm_cmd(a, "set", "--mtu 60" + j), 2, {"68..65535"});
    expect(nm_cmd(a, "set", "--mtu 60 --ioctl" + j), 2, {"68..65535"});
    expect(nicmatrix_binary() + " set nm-a --netns " + nm::test::unique_name("nope") + " --feature gso=off" + j, 2, {"does not exist"});
    // A fixed feature is refused (exit 1) and reported as fixed; nothing else moves.
    expect(nm_cmd(a, "set", "--feature lro=on" + j), 1, {"rx-lro", "fixed"});
    expect(nm_cmd(a, "set", "--feature tx-checksum-ipv4=on --ioctl" + j), 1, {"tx-checksum-ipv4", "fixed"});
    // Without CAP_NET_ADMIN the kernel refuses (exit 1), before anything changes.
    expect("capsh --drop=cap_net_admin -- -c '" + nm_cmd(a, "set", "--feature gso=off" + j) + "'", 1, {"not permitted"});
    expect("capsh --drop=cap_net_admin -- -c '" + nm_cmd(a, "set", "--mtu 9000 --feature gso=off" + j) + "'", 1, {"not permitted", "mtu"});
    expect("capsh --drop=cap_net_admin -- -c '" + nm_cmd(a, "set", "--feature gso=off --ioctl" + j) + "'", 1, {"not permitted"});
    run_command(nicmatrix_binary() + " restore --journal " + journal);
    unchanged.check();
}

TEST_CASE("DeviceControl reads link details and counters that ip -s link agrees with", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& a = lab.client();
    REQUIRE(run_in_netns(a.netns, "ping -c3 -i0.2 -W2 " + nm::strip_prefix(lab.server().ipv4)).exit_status == 0);
    nm::NetlinkDeviceControl device(a.netns);
    const auto s = device.read(a.ifname);
    CHECK(s.driver.driver == "veth");
    CHECK(s.operstate == "up");
    CHECK(s.speed_mbps == 10000u);
    CHECK(s.duplex == "full");
    CHECK(s.channels.at("rx_max") >= 1);
    CHECK(s.rings.empty());  // veth has no ring parameters: EOPNOTSUPP is an empty map
    CHECK(s.coalesce.empty());
    const auto ips = run_in_netns(a.netns, "ip -s -s link show " + a.ifname).output;
    std::smatch m;
    REQUIRE(std::regex_search(ips, m, std::regex(R"(TX:\s+bytes\s+packets.*\n\s+(\d+)\s+(\d+))")));
    const uint64_t ip_tx_packets = std::stoull(m[2]);
    CHECK(s.counters.tx_packets >= 3);
    CHECK(s.counters.tx_packets <= ip_tx_packets);
    CHECK(ip_tx_packets - s.counters.tx_packets <= 4);  // only background IPv6 traffic in between
    CHECK(s.counters.rx_crc_errors == 0);
}

TEST_CASE("DeviceControl's identity of an interface is what ip and the namespace file say", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& a = lab.client();
    nm::NetlinkDeviceControl device(a.netns);
    const auto s = device.read(a.ifname);
    const json link = json::parse(run_in_netns(a.netns, "ip -j -d link show dev " + a.ifname).output).at(0);
    CHECK(s.identity.ifindex == link.at("ifindex").get<int>());
    CHECK(s.identity.kind == link.at("linkinfo").at("info_kind").get<std::string>());
    CHECK(s.identity.perm_address.empty());  // ip prints "permaddr" only for devices that have one; a veth has none
    CHECK_FALSE(link.contains("permaddr"));
    CHECK(std::to_string(s.identity.netns_ino) + "\n" == run_command("stat -L -c %i /run/netns/" + a.netns).output);
    const auto names = device.link_names();
    CHECK(std::count(names.begin(), names.end(), a.ifname) == 1);
    CHECK(std::count(names.begin(), names.end(), "lo") == 1);
    CHECK(names.size() == json::parse(run_in_netns(a.netns, "ip -j link show").output).size());
}

TEST_CASE("restore drops the entry of a veth whose lab was taken down, saying it went with its namespace", "[integration]") {
    nm::test::require_net_admin();
    const TempJournal temp_journal;
    const std::string journal = temp_journal.path;
    std::string netns;
    {
        nm::test::ScopedLab lab;
        netns = lab.client().netns;
        run_json(nm_cmd(lab.client(), "set", "--mtu 2000 --json --journal " + journal));
    }
    const auto r = run_command(nicmatrix_binary() + " restore --json --journal " + journal);
    INFO(r.output);
    CHECK(r.exit_status == 0);
    const json reports = json::parse(r.output);
    REQUIRE(reports.size() == 1);
    CHECK(reports.at(0).at("action") == "dropped");
    CHECK_THAT(reports.at(0).at("note").get<std::string>(), Catch::Contains(netns) && Catch::Contains("veth interface nm-a went with it"));
    CHECK(run_command("test -e " + journal).exit_status != 0);
}
