// The tuning axes through the CLI on a lab: configs/queues-steering.json with real traffic, every cell ok
// under the settings it names; and a SIGKILL mid-sweep with every kind of tuning, after which
// `nicmatrix restore` puts back each kind, judged by ethtool -l, sysfs, sysctl and tc.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/base/wait_until.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

const std::string kSource = NM_SOURCE_DIR;

// Every kind the lab's veth takes, on both ends, as outside tools print them.
std::string outside(const std::string& netns, const std::string& ifname) {
    const std::string q = "/sys/class/net/" + ifname + "/queues";
    const auto r = run_in_netns(netns, "sh -c 'ethtool -l " + ifname + " | grep -E \"^(RX|TX):\"; cat " + q + "/rx-*/rps_cpus " + q +
                                           "/tx-*/xps_cpus /sys/class/net/" + ifname + "/gro_flush_timeout /sys/class/net/" + ifname +
                                           "/napi_defer_hard_irqs; sysctl -n net.ipv4.tcp_congestion_control net.ipv4.tcp_rmem; tc qdisc show dev " +
                                           ifname + " root'");
    REQUIRE(r.exit_status == 0);
    return r.output;
}

}  // namespace

TEST_CASE("configs/queues-steering.json on a lab: every cell ok, each under the channels and RPS it names", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const std::string file = dir.file("qs.json");
    const auto r =
        run_command(nicmatrix_binary() + " sweep " + kSource + "/configs/queues-steering.json --lab -o " + file + " --journal " + dir.file("j.json"),
                    std::chrono::seconds(240));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = nm::load_results(file);
    REQUIRE(results.cells.size() == 8);
    for (const auto& c : results.cells) {
        INFO(c.spec.key << ": " << c.error);
        CHECK(c.status == nm::CellStatus::Ok);
        CHECK(c.runs.size() == 1);
        for (const auto* end : {&c.applied_local, &c.applied_remote}) {
            REQUIRE(*end);
            REQUIRE((*end)->tuning);
            const auto& t = *(*end)->tuning;
            const uint64_t n = c.spec.axes.at("channels") == "ch1" ? 1 : 2;
            CHECK(t.channels.at("rx") == n);
            CHECK(t.channels.at("tx") == n);
            CHECK(t.rps.size() == n);  // the queues the channel count leaves
            for (const auto& [queue, list] : t.rps)
                CHECK(list == (c.spec.axes.at("rps") == "rps-all" ? "0-" + std::to_string(results.local.cpu_count - 1) : "none"));
        }
    }
    // The table labels rows by the axes' value names.
    const auto rep = run_command(nicmatrix_binary() + " report " + file);
    CHECK_THAT(rep.output, Catch::Contains("original / ch2 / rps-all / tcp-p10"));
}

TEST_CASE("SIGKILL mid-sweep with every kind of tuning: nicmatrix restore puts each kind back", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const std::string cfg = dir.file("t.json");
    std::ofstream(cfg) << R"({"name": "t", "offloads": [{"name": "o", "features": {}}], "mtu": [1500],
      "channels": [{"name": "ch1", "rx": 1, "tx": 1}], "rps": ["all"], "xps": ["0"],
      "napi": [{"name": "defer", "gro_flush_timeout": 200000, "napi_defer_hard_irqs": 2}],
      "sysctl": [{"name": "reno", "net.ipv4.tcp_congestion_control": "reno", "net.ipv4.tcp_rmem": "4096 131072 8388608"}],
      "qdisc": [{"name": "tbf", "kind": "tbf", "rate": "2gbit", "burst": 65536, "latency_ms": 20}, "pfifo"],
      "traffic": [{"name": "tcp", "protocol": "tcp"}], "duration_s": 30, "omit_s": 0, "repetitions": 1,
      "order": "sequential", "interference": {"sample_ms": 0}})";
    const std::string name = nm::test::unique_name("nmtu");
    const std::string file = dir.file("r.json");
    const std::string journal = dir.file("j.json");
    // The lab this sweep makes is taken before the sweep changes it: `lab up` gives the same lab.
    REQUIRE(run_command(nicmatrix_binary() + " lab up --name " + name).exit_status == 0);
    const std::string before_a = outside(name + "-a", "nm-a"), before_b = outside(name + "-b", "nm-b");
    REQUIRE(run_command(nicmatrix_binary() + " lab down --name " + name).exit_status == 0);
    nm::test::Background sweep(nicmatrix_binary() + " sweep " + cfg + " --lab --lab-name " + name + " -o " + file + " --journal " + journal,
                               dir.file("log"));
    // Kill it while the first cell measures: its settings are on both ends then.
    nm::wait_until(
        [&] {
            const auto r = run_in_netns(name + "-a", "tc qdisc show dev nm-a root");
            return r.exit_status == 0 && r.output.find("tbf") != std::string::npos;
        },
        std::chrono::seconds(60), "the first cell's tbf on nm-a");
    CHECK(outside(name + "-a", "nm-a") != before_a);
    REQUIRE(::kill(sweep.pid(), SIGKILL) == 0);
    REQUIRE(sweep.wait(std::chrono::seconds(10)) == 128 + SIGKILL);
    const auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(outside(name + "-a", "nm-a") == before_a);
    CHECK(outside(name + "-b", "nm-b") == before_b);
    run_command(nicmatrix_binary() + " lab down --name " + name);
}
