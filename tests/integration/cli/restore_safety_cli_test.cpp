// Nothing left changed whatever happens to a sweep: another nicmatrix restoring or sweeping at the same
// time, a closed stdout, foreign and repeated signals, a same-named interface in another namespace, an
// interface renamed while its owner was dead. Every check is made from outside with ip and ethtool.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/lab_fixture.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/served_lab.hpp"

using nm::test::Background;
using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

// What ip and ethtool say about an interface: every feature ethtool -k prints, and the MTU.
struct Seen {
    std::map<std::string, bool> features;
    std::string mtu;
    bool operator==(const Seen& o) const { return features == o.features && mtu == o.mtu; }
};

Seen seen(const std::string& netns, const std::string& ifname) {
    return Seen{nm::test::ethtool_features(netns, ifname), nm::test::link_mtu(netns, ifname)};
}

// A peer-mode sweep of the local end only: two cells at MTU 1400 and 1300 with offloads changed, each
// measured for `duration` s against a `nicmatrix serve` in the lab's server namespace.
std::string local_config(const nm::test::TempDir& dir, int duration, const std::string& mtus = "[1400, 1300]") {
    std::string path = dir.file("local.json");
    std::ofstream(path) << R"({"name": "local", "offloads": [{"name": "off", "features": {"tso": "off", "sg": "off", "gro": "on"}}],
      "mtu": )" << mtus << R"(, "traffic": [{"name": "tcp-p1", "streams": 1}], "duration_s": )"
                        << duration << R"(, "omit_s": 0.2, "repetitions": 1, "order": "sequential", "cooldown_s": 0, "apply_to": "local"})";
    return path;
}

std::string sweep_cmd(const nm::test::ScopedLab& lab, const std::string& cfg, const nm::test::TempDir& dir, const std::string& out,
                      const std::string& extra = "") {
    return "ip netns exec " + lab.client().netns + " " + nicmatrix_binary() + " sweep " + cfg + " --iface " + lab.client().ifname + " --peer " +
           nm::strip_prefix(lab.server().ipv4) + " -o " + dir.file(out) + " --journal " + dir.file("j.json") + extra;
}

void wait_for_mtu(const nm::LabInterface& itf, const std::string& mtu, const std::string& what) {
    nm::wait_until([&] { return nm::test::link_mtu(itf.netns, itf.ifname) == mtu + "\n"; }, std::chrono::seconds(20), what);
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

TEST_CASE_METHOD(nm::test::ServedLab, "restore during a running sweep leaves the sweep's entries alone, the sweep restores its interface at the end",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    const Seen before = seen(a.netns, a.ifname);
    Background sweep(sweep_cmd(lab, local_config(dir, 2), dir, "r.json"), dir.file("sweep.log"));
    wait_for_mtu(a, "1400", "the first cell's MTU on " + a.ifname);
    const Seen during = seen(a.netns, a.ifname);
    REQUIRE_FALSE(during == before);

    // From the sweep's namespace and from the root namespace: both see a live owner and touch nothing.
    for (const std::string& prefix : {"ip netns exec " + a.netns + " ", std::string()}) {
        const auto r = run_command(prefix + nicmatrix_binary() + " restore --journal " + dir.file("j.json"));
        INFO(r.output);
        CHECK(r.exit_status == 0);
        CHECK_THAT(r.output, Catch::Contains("left alone: held by pid " + std::to_string(sweep.pid())));
        CHECK(exists(dir.file("j.json")));
    }
    // Still the cell's settings (the cell being measured is measured as labelled).
    CHECK(nm::test::ethtool_features(a.netns, a.ifname) == during.features);
    CHECK(nm::test::link_mtu(a.netns, a.ifname) != before.mtu);

    const auto status = sweep.wait(std::chrono::seconds(60));
    INFO(sweep.output());
    REQUIRE(status);
    CHECK(*status == 0);
    unchanged.check();
    CHECK_FALSE(exists(dir.file("j.json")));
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 2);
    for (const auto& c : results.cells) {
        INFO(c.spec.key);
        CHECK(c.status == nm::CellStatus::Ok);
        CHECK(c.applied_local->features.at("tx-tcp-segmentation") == false);
    }
}

TEST_CASE_METHOD(nm::test::ServedLab,
                 "A second sweep or set on an interface a running sweep holds is refused before it changes anything, naming the owner",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    Background first(sweep_cmd(lab, local_config(dir, 2), dir, "r1.json"), dir.file("first.log"));
    wait_for_mtu(a, "1400", "the first sweep's first cell on " + a.ifname);

    // The second sweep would set MTU 1280, which the first never does: any sight of it is a change.
    nm::test::TempDir dir2;
    const auto second = run_command(sweep_cmd(lab, local_config(dir2, 1, "[1280]"), dir, "r2.json"), std::chrono::seconds(60));
    INFO(second.output);
    CHECK(second.exit_status == 1);
    CHECK_THAT(second.output, Catch::Contains("is held by pid " + std::to_string(first.pid())) && Catch::Contains("still running"));
    CHECK_FALSE(exists(dir.file("r2.json")));
    const auto set =
        run_command("ip netns exec " + a.netns + " " + nicmatrix_binary() + " set " + a.ifname + " --mtu 1280 --journal " + dir.file("j.json"));
    INFO(set.output);
    CHECK(set.exit_status == 1);
    CHECK_THAT(set.output, Catch::Contains("is held by pid " + std::to_string(first.pid())));
    CHECK(nm::test::link_mtu(a.netns, a.ifname) != "1280\n");

    const auto status = first.wait(std::chrono::seconds(60));
    INFO(first.output());
    REQUIRE(status);
    CHECK(*status == 0);
    unchanged.check();
    CHECK(nm::load_results(dir.file("r1.json")).cells.size() == 2);
    CHECK_FALSE(exists(dir.file("j.json")));
}

TEST_CASE_METHOD(nm::test::ServedLab, "sweep | head -1: the closed stdout stops the printing, the sweep finishes and restores (exit 0, not 141)",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    const auto r = run_command(
        "bash -c '" + sweep_cmd(lab, local_config(dir, 1), dir, "r.json") + " 2>" + dir.file("err") + " | head -1; exit ${PIPESTATUS[0]}'",
        std::chrono::seconds(90));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::StartsWith("[1/2] off/mtu1400/tcp-p1"));
    CHECK_THAT(run_command("cat " + dir.file("err")).output, Catch::Contains("standard output was closed"));
    unchanged.check();
    const auto results = nm::load_results(dir.file("r.json"));
    CHECK(results.cells.size() == 2);
    CHECK_FALSE(results.run.finished.empty());
    CHECK_FALSE(exists(dir.file("j.json")));
}

TEST_CASE_METHOD(nm::test::ServedLab,
                 "A foreign SIGUSR2 does not disable the stop: SIGTERM after it still stops and restores, a second SIGINT never cuts the restore",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    // Four cells of 3 s: a stop in the first ends the sweep long before its natural end.
    const std::string cfg = local_config(dir, 3, "[1400, 1300, 1420, 1320]");

    SECTION("SIGUSR2 then SIGTERM") {
        Background sweep(sweep_cmd(lab, cfg, dir, "r.json"), dir.file("sweep.log"));
        wait_for_mtu(a, "1400", "the first cell on " + a.ifname);
        REQUIRE(::kill(sweep.pid(), SIGUSR2) == 0);
        REQUIRE(::kill(sweep.pid(), SIGUSR2) == 0);
        REQUIRE(::kill(sweep.pid(), SIGTERM) == 0);
        const auto status = sweep.wait(std::chrono::seconds(15));
        INFO(sweep.output());
        REQUIRE(status);
        CHECK(*status == 1);
        CHECK_THAT(sweep.output(), Catch::Contains("sweep interrupted") && Catch::Contains("interfaces restored"));
    }
    SECTION("SIGINT twice") {
        Background sweep(sweep_cmd(lab, cfg, dir, "r.json"), dir.file("sweep.log"));
        wait_for_mtu(a, "1400", "the first cell on " + a.ifname);
        REQUIRE(::kill(sweep.pid(), SIGINT) == 0);
        REQUIRE(::kill(sweep.pid(), SIGINT) == 0);
        const auto status = sweep.wait(std::chrono::seconds(15));
        INFO(sweep.output());
        REQUIRE(status);
        CHECK(*status == 1);  // not 130: the second Ctrl-C did not kill it
        CHECK_THAT(sweep.output(), Catch::Contains("sweep interrupted"));
    }
    unchanged.check();
    CHECK(nm::load_results(dir.file("r.json")).cells.size() < 4);
    CHECK_FALSE(exists(dir.file("j.json")));
}

TEST_CASE("restore run from another namespace acts on the journalled interface, never on a same-named one there", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab x;
    nm::test::ScopedLab y;  // its client end is also called nm-a
    nm::test::TempDir dir;
    const auto& xa = x.client();
    const auto& ya = y.client();
    REQUIRE(xa.ifname == ya.ifname);
    REQUIRE(run_in_netns(ya.netns, "ip link set " + ya.ifname + " mtu 1400").exit_status == 0);
    REQUIRE(run_in_netns(ya.netns, "ethtool -K " + ya.ifname + " gso off").exit_status == 0);
    const nm::test::EndsAsItBegan x_unchanged(xa), y_unchanged(ya);
    const std::string journal = " --journal " + dir.file("j.json");

    // `set` run inside X's namespace with no --netns: the entry's namespace is "whatever I run in".
    auto r = run_in_netns(xa.netns, nicmatrix_binary() + " set " + xa.ifname + " --mtu 9000 --feature tso=off" + journal);
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    REQUIRE(nm::test::link_mtu(xa.netns, xa.ifname) == "9000\n");

    r = run_in_netns(ya.netns, nicmatrix_binary() + " restore" + journal);
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains(xa.ifname + " (netns " + xa.netns + ")"));
    y_unchanged.check();
    x_unchanged.check();
    CHECK_FALSE(exists(dir.file("j.json")));
}

TEST_CASE_METHOD(nm::test::ServedLab, "An interface renamed while its owner was killed is still restored under its new name", "[integration]") {
    const Seen before = seen(a.netns, a.ifname);
    {
        Background sweep(sweep_cmd(lab, local_config(dir, 3), dir, "r.json"), dir.file("sweep.log"));
        wait_for_mtu(a, "1400", "the first cell on " + a.ifname);
        REQUIRE(::kill(sweep.pid(), SIGKILL) == 0);
        REQUIRE(sweep.wait(std::chrono::seconds(10)));
    }
    const std::string renamed = "nmx" + std::to_string(::getpid() % 100000);
    REQUIRE(run_in_netns(a.netns, "ip link set " + a.ifname + " down").exit_status == 0);
    REQUIRE(run_in_netns(a.netns, "ip link set " + a.ifname + " name " + renamed).exit_status == 0);
    REQUIRE(run_in_netns(a.netns, "ip link set " + renamed + " up").exit_status == 0);
    REQUIRE(nm::test::link_mtu(a.netns, renamed) == "1400\n");

    const auto r = run_command(nicmatrix_binary() + " restore --journal " + dir.file("j.json"));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("is now named " + renamed));
    CHECK(seen(a.netns, renamed) == before);
    CHECK_FALSE(exists(dir.file("j.json")));
    run_in_netns(a.netns, "ip link set " + renamed + " name " + a.ifname);
}

TEST_CASE_METHOD(nm::test::LabFixture, "An interface whose name is not UTF-8 is set, journalled and restored, not an abort", "[integration]") {
    const std::string odd = "\"$(printf 'nm\\377')\"";  // "nm" and the byte 0xff, made by the shell
    REQUIRE(run_in_netns(a.netns, "ip link add " + odd + " type veth peer name nmpeer").exit_status == 0);
    const auto mtu = [&] { return run_in_netns(a.netns, "cat /sys/class/net/" + odd + "/mtu").output; };
    REQUIRE(mtu() == "1500\n");
    const nm::test::EndsAsItBegan unchanged(a.netns, odd);
    auto r = run_in_netns(a.netns, nicmatrix_binary() + " set " + odd + " --mtu 1400 --json --journal " + dir.file("j.json"));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(mtu() == "1400\n");
    r = run_command(nicmatrix_binary() + " restore --journal " + dir.file("j.json"));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, !Catch::Contains("now named"));
    unchanged.check();
    CHECK_FALSE(exists(dir.file("j.json")));
}

TEST_CASE_METHOD(nm::test::LabFixture, "The agent's start restores the entries of an agent that is gone and leaves those of one that runs",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(b);
    const std::string journal = dir.file("agent.json");
    REQUIRE(run_command("head -c 32 /dev/urandom > " + dir.file("key") + " && chmod 600 " + dir.file("key")).exit_status == 0);
    // An agent that changed nm-b and still runs: a live process (here a sleep) owns the entry `set` wrote.
    REQUIRE(run_in_netns(b.netns, nicmatrix_binary() + " set " + b.ifname + " --mtu 2000 --journal " + journal).exit_status == 0);
    Background owner("sleep 100", dir.file("sleep.log"));
    std::ifstream stat("/proc/" + std::to_string(owner.pid()) + "/stat");
    std::string stat_line;
    std::getline(stat, stat_line);
    std::istringstream fields(stat_line.substr(stat_line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 22; ++i) fields >> field;
    std::ifstream journal_in(journal);
    auto doc = nm::Json::parse(journal_in);
    doc["entries"][0]["owner"]["pid"] = owner.pid();
    doc["entries"][0]["owner"]["start_time"] = std::stoull(field);
    std::ofstream(journal) << doc.dump();

    const std::string serve = "ip netns exec " + b.netns + " " + nicmatrix_binary() + " serve --once -p 5399 --allow-control " + b.ifname +
                              " --key-file " + dir.file("key") + " --journal " + journal;
    {
        Background agent(serve, dir.file("agent1.log"));
        nm::test::wait_for_output(agent, "listening");
        CHECK_THAT(agent.output(), Catch::Contains("left alone: held by pid " + std::to_string(owner.pid())));
        CHECK(nm::test::link_mtu(b.netns, b.ifname) == "2000\n");
    }
    ::kill(owner.pid(), SIGKILL);
    REQUIRE(owner.wait(std::chrono::seconds(5)));
    {
        Background agent(serve, dir.file("agent2.log"));
        nm::test::wait_for_output(agent, "listening");
        CHECK_THAT(agent.output(), Catch::Contains("restored " + b.ifname));
    }
    unchanged.check();
    CHECK_FALSE(exists(journal));
}
