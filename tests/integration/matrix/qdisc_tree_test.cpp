// Whole qdisc trees (issue 36): an htb tree with classes, leaf qdiscs and u32 filters on a lab veth, a sweep
// whose qdisc axis (tbf) replaces its root, and tc as the oracle that the tree is back afterwards; a tree
// nicmatrix cannot rebuild (a cls_bpf filter, a kind off the allow-list) makes the qdisc cell infeasible
// before anything changes. Then the same tree through the journal's own restore path (put_back).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "core/base/clock.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/restore_settings.hpp"
#include "matrix/config.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/runner.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_sweep.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::CellStatus;
using nm::test::run_in_netns;

namespace {

std::string tc(const std::string& netns, const std::string& args) {
    const auto r = run_in_netns(netns, "timeout 10 tc " + args, std::chrono::seconds(15));
    INFO("tc " << args << ": " << r.output);
    REQUIRE(r.exit_status == 0);
    return r.output;
}

// Lines sorted, "refcnt N" dropped: what tc prints of a tree without counters (no -s).
std::string lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (const auto at = l.find(" refcnt "); at != std::string::npos) l.erase(at, l.find(' ', at + 8) - at);
        while (!l.empty() && l.back() == ' ') l.pop_back();
        if (!l.empty()) out.push_back(l);
    }
    std::sort(out.begin(), out.end());
    std::string s;
    for (const auto& l : out) s += l + "\n";
    return s;
}

// The tree as tc sees it: `tc -j qdisc show` without refcnt and counters, `tc -d class show` (tc 6.1 prints htb classes
// as text even with -j), and `tc -j filter show` of the root plus the filters of every class.
std::string tree_view(const std::string& netns, const std::string& dev) {
    auto q = nm::Json::parse(tc(netns, "-j -d qdisc show dev " + dev));
    for (auto& e : q) {
        e.erase("refcnt");
        if (e.contains("options")) e["options"].erase("direct_packets_stat");  // htb's counter of unclassified packets
    }
    std::string view = "qdiscs " + q.dump() + "\nclasses\n" + lines(tc(netns, "-d class show dev " + dev));
    view += "filters " + tc(netns, "-j filter show dev " + dev) + "\n";
    std::istringstream classes(tc(netns, "class show dev " + dev));
    for (std::string l; std::getline(classes, l);) {
        std::istringstream words(l);
        std::string cls, kind, id;
        words >> cls >> kind >> id;
        // A leaf class has no filter block: tc says so and fails, the same before and after.
        if (cls == "class")
            view += "filters of " + id + "\n" + lines(run_in_netns(netns, "timeout 10 tc filter show dev " + dev + " parent " + id).output);
    }
    return view;
}

// An htb tree as an administrator might have it: three classes, two leaf qdiscs, u32 rules on the root
// (two priorities, so two hash tables) and one on an inner class.
void build_htb_tree(const std::string& netns, const std::string& dev) {
    const std::string d = " dev " + dev + " ";
    for (const std::string& cmd :
         {"qdisc add" + d + "root handle 1: htb default 20 r2q 100", "class add" + d + "parent 1: classid 1:1 htb rate 200mbit ceil 400mbit",
          "class add" + d + "parent 1:1 classid 1:10 htb rate 50mbit ceil 200mbit prio 1",
          "class add" + d + "parent 1:1 classid 1:20 htb rate 20mbit ceil 100mbit burst 15k",
          "qdisc add" + d + "parent 1:10 handle 10: pfifo limit 300", "qdisc add" + d + "parent 1:20 handle 20: bfifo limit 150000",
          "filter add" + d + "parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.2/32 match ip dport 5201 0xffff flowid 1:10",
          "filter add" + d + "parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff flowid 1:20",
          "filter add" + d + "parent 1: protocol all prio 5 u32 match u32 0 0 flowid 1:20",
          "filter add" + d + "parent 1:1 protocol ip prio 3 u32 match ip tos 0x10 0xff flowid 1:10"}) {
        tc(netns, cmd);
    }
}

// Runs nothing; looks at the root qdisc while each cell is applied.
class RootWatcher final : public nm::TrafficRunner {
public:
    explicit RootWatcher(const nm::LabInterface& a) : a_(a) {}
    nm::RunResult run(const nm::TestSpec& spec, std::stop_token) override {
        seen.push_back(tc(a_.netns, "qdisc show dev " + a_.ifname + " root"));
        nm::RunResult r;
        r.spec = spec;
        r.duration_s = spec.duration_s;
        r.throughput_bps = 1e9;
        return r;
    }
    std::vector<std::string> seen;

private:
    const nm::LabInterface& a_;
};

const char* kTbfAxis = R"({"offloads": [{"name": "o", "features": {}}], "mtu": [1500],
  "qdisc": [{"name": "tbf", "kind": "tbf", "rate": "1gbit", "burst": 65536, "latency_ms": 20}],
  "traffic": [{"name": "tcp", "protocol": "tcp"}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1,
  "order": "sequential", "interference": {"sample_ms": 0}, "apply_to": {"offloads": "both", "mtu": "both", "qdisc": "local"}})";

/// Skips the test without CAP_NET_ADMIN before the lab is made.
struct TreeSweep : nm::test::NeedsNetAdmin {
    nm::test::ScopedLab lab;
    const nm::LabInterface& a = lab.client();
    const nm::LabInterface& b = lab.server();
    nm::NetlinkDeviceControl dev_a{a.netns}, dev_b{b.netns};
    RootWatcher traffic{a};

    TreeSweep() { nm::test::wait_for_lab_path(lab.info()); }
    nm::SweepOutcome run(const char* config_text) {
        return nm::test::run_lab_sweep(lab, nm::parse_sweep_config_text(config_text, "trees"), dev_a, dev_b, traffic);
    }
};

}  // namespace

TEST_CASE("An htb tree (classes, leaf qdiscs, u32 filters) replaced by the sweep's tbf is back afterwards, as tc shows it", "[integration]") {
    TreeSweep k;
    build_htb_tree(k.a.netns, k.a.ifname);
    const std::string before = tree_view(k.a.netns, k.a.ifname);
    INFO("before:\n" << before);
    REQUIRE(before.find("\"kind\":\"htb\"") != std::string::npos);
    REQUIRE(before.find("class htb 1:20 parent 1:1") != std::string::npos);
    REQUIRE(before.find("800::801") != std::string::npos);  // two rules in one hash table
    REQUIRE(before.find("801::800") != std::string::npos);  // a second priority, a second table

    // nicmatrix's own reading of it: every node, nothing refused.
    const auto t = k.dev_a.read(k.a.ifname).tuning;
    REQUIRE(t.qdisc_tree);
    CHECK(t.qdisc_tree->refused.empty());
    CHECK(t.qdisc_tree->qdiscs.size() == 3);
    CHECK(t.qdisc_tree->classes.size() == 3);
    CHECK(t.qdisc_tree->filters.size() == 4);
    CHECK_FALSE(t.unsupported.count("qdisc"));

    const auto outcome = k.run(kTbfAxis);
    REQUIRE(outcome.results.cells.size() == 1);
    INFO(outcome.results.cells[0].error);
    REQUIRE(outcome.results.cells[0].status == CellStatus::Ok);
    REQUIRE(k.traffic.seen.size() == 1);
    CHECK(k.traffic.seen[0].rfind("qdisc tbf", 0) == 0);  // the axis did replace the root
    CHECK(tree_view(k.a.netns, k.a.ifname) == before);
    // The results file's originals carry the tree, in the canonical form the journal keeps.
    REQUIRE(outcome.results.local.interface->tuning->qdisc_tree);
    CHECK(*outcome.results.local.interface->tuning->qdisc_tree == *t.qdisc_tree);
}

TEST_CASE("put_back rebuilds an htb tree from the journal's JSON after its root was replaced by hand, and only when it moved", "[integration]") {
    TreeSweep k;
    build_htb_tree(k.a.netns, k.a.ifname);
    const std::string before = tree_view(k.a.netns, k.a.ifname);
    // The journal's round trip: what restore reads back is JSON, not the reading itself.
    const nm::LinkState original = nm::Json(k.dev_a.read(k.a.ifname)).get<nm::LinkState>();
    REQUIRE(original.tuning.qdisc_tree);
    CHECK(nm::Json(*original.tuning.qdisc_tree).dump().find("hex") == std::string::npos);

    tc(k.a.netns, "qdisc replace dev " + k.a.ifname + " root handle 9: pfifo limit 7");
    CHECK(tree_view(k.a.netns, k.a.ifname) != before);
    const nm::PutBack back = nm::put_back(k.dev_a, k.a.ifname, original);
    INFO(back.differences);
    CHECK(back.differences.empty());
    CHECK(tree_view(k.a.netns, k.a.ifname) == before);
    // Nothing moved now: a second restore sends nothing (the tree is what it was).
    const nm::LinkSettings again = nm::settings_to_restore(original, k.dev_a.read(k.a.ifname));
    CHECK_FALSE(again.tuning.qdisc_original);
    // And the "is it still ours" comparison the journal's written value uses.
    const auto now = k.dev_a.read(k.a.ifname).tuning.qdisc_tree;
    CHECK(nm::qdisc_tree_back(*original.tuning.qdisc_tree, now));
    CHECK(nm::qdisc_root_is(*original.tuning.qdisc_tree->root(), now));
    tc(k.a.netns, "qdisc replace dev " + k.a.ifname + " root handle 9: pfifo limit 7");
    CHECK_FALSE(nm::qdisc_root_is(*original.tuning.qdisc_tree->root(), k.dev_a.read(k.a.ifname).tuning.qdisc_tree));
}

TEST_CASE("A tree nicmatrix cannot rebuild (a cls_bpf filter, a kind off the allow-list) makes the qdisc axis refuse the interface before any change",
          "[integration]") {
    TreeSweep k;
    const std::string dev = " dev " + k.a.ifname + " ";
    std::string expect;
    SECTION("a bpf filter under htb") {
        tc(k.a.netns, "qdisc add" + dev + "root handle 1: htb default 10");
        tc(k.a.netns, "class add" + dev + "parent 1: classid 1:10 htb rate 10mbit");
        tc(k.a.netns, "filter add" + dev + "parent 1: protocol ip prio 1 bpf bytecode '1,6 0 0 0' classid 1:10");
        expect = "filter bpf parent 1: pref 1";
    }
    SECTION("a root qdisc kind off the allow-list") {
        tc(k.a.netns, "qdisc add" + dev + "root handle 3: pfifo_head_drop limit 50");
        expect = "qdisc pfifo_head_drop 3: root";
    }
    SECTION("a u32 hash table of 256 buckets") {
        tc(k.a.netns, "qdisc add" + dev + "root handle 1: htb default 10");
        tc(k.a.netns, "filter add" + dev + "parent 1: prio 2 handle 2: protocol ip u32 divisor 256");
        tc(k.a.netns, "filter add" + dev + "parent 1: prio 2 protocol ip u32 ht 2:7: match ip dst 198.18.0.7/32 flowid 1:10");
        expect = "a hash table of divisor 256";
    }
    const std::string before = tree_view(k.a.netns, k.a.ifname);
    const auto outcome = k.run(kTbfAxis);
    REQUIRE(outcome.results.cells.size() == 1);
    const auto& c = outcome.results.cells[0];
    CHECK(c.status == CellStatus::Infeasible);
    CHECK_THAT(c.error, Catch::Contains(k.a.ifname) && Catch::Contains("qdisc tree cannot be put back exactly") && Catch::Contains(expect));
    CHECK(k.traffic.seen.empty());
    CHECK(tree_view(k.a.netns, k.a.ifname) == before);
    // The device refuses it too when asked directly (nicmatrix set, the agent), before any change.
    nm::LinkSettings tbf;
    tbf.mtu = 1400;
    tbf.tuning.qdisc = nm::QdiscSpec{"tbf", std::nullopt, 1000000000ULL, 65536, 20.0, std::nullopt};
    CHECK_THROWS_WITH(k.dev_a.apply(k.a.ifname, tbf), Catch::Contains(k.a.ifname) && Catch::Contains(expect));
    CHECK(tree_view(k.a.netns, k.a.ifname) == before);
    CHECK(k.dev_a.read(k.a.ifname).mtu == 1500);
}
