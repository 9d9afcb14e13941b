// The sweep runner against the real kernel: real veth in a lab, the real DF path probe, settings changed
// with ethtool/ip (tests/support/command_device.hpp, a second path besides NetlinkDeviceControl)
// and a stand-in engine that takes `ethtool -k` while the cell "measures". What the kernel does besides
// what was asked (tx off takes TSO with it) must be what the results record.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>

#include "core/base/clock.hpp"
#include "core/base/wait_until.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/runner.hpp"
#include "tests/support/command.hpp"
#include "tests/support/command_device.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/lab_sweep.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::CellStatus;
using nm::test::run_in_netns;

namespace {

// Runs nothing; takes the oracle's view of the client end while the cell is applied.
class OracleRunner final : public nm::TrafficRunner {
public:
    OracleRunner(std::string netns, std::string ifname) : netns_(std::move(netns)), ifname_(std::move(ifname)) {}
    nm::RunResult run(const nm::TestSpec& spec, std::stop_token) override {
        seen.push_back({nm::test::ethtool_features(netns_, ifname_), nm::test::link_mtu(netns_, ifname_)});
        nm::RunResult r;
        r.spec = spec;
        r.duration_s = spec.duration_s;
        r.throughput_bps = 1e9;
        return r;
    }
    std::vector<std::pair<std::map<std::string, bool>, std::string>> seen;

private:
    std::string netns_, ifname_;
};

// A sweep on a lab of its own: stand-in devices on both ends, the real path probe, the oracle engine.
struct KernelSweep {
    nm::test::ScopedLab lab;
    const nm::LabInterface& a = lab.client();
    const nm::LabInterface& b = lab.server();
    nm::test::CommandDeviceControl dev_a{a.netns}, dev_b{b.netns};
    OracleRunner traffic{a.netns, a.ifname};

    explicit KernelSweep(nm::LabTopology topology) : lab(topology) {
        nm::test::wait_for_lab_path(lab.info());  // a lab just made may drop its first packets
    }
    nm::SweepOutcome run(const nm::SweepConfig& config) { return nm::test::run_lab_sweep(lab, config, dev_a, dev_b, traffic); }
};

}  // namespace

TEST_CASE("The runner on real veth records the kernel's side effects, finds duplicates, resets profiles and restores", "[integration]") {
    nm::test::require_net_admin();
    KernelSweep k(nm::LabTopology::Pair);
    const auto& a = k.a;
    const auto& b = k.b;
    auto& traffic = k.traffic;
    const nm::test::EndsAsItBegan a_unchanged(a), b_unchanged(b);

    const auto config = nm::parse_sweep_config_text(R"({
      "offloads": [{"name": "all-off", "features": {"tx": "off", "sg": "off", "tso": "off", "gso": "off", "gro": "off"}},
                   {"name": "tx-off", "features": {"tx": "off"}},
                   {"name": "tx-off-tcp4-off", "features": {"tx": "off", "tx-tcp-segmentation": "off"}},
                   {"name": "original", "features": {}},
                   {"name": "tso-on", "features": {"tso": "on"}},
                   {"name": "gro-on", "features": {"gro": "on"}}],
      "mtu": [1500, 9000], "traffic": [{}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1, "order": "sequential"})",
                                                    "kernel");
    const auto out = k.run(config);
    REQUIRE(out.results.cells.size() == 12);
    size_t measured = 0;
    for (const auto& cell : out.results.cells) {
        INFO(cell.spec.key << ": " << cell.error);
        CHECK(cell.overhead_s > 0);  // recorded (its size is the machine's business, not a test's)
        const std::string mtu = "/mtu" + std::to_string(cell.spec.mtu) + "/tcp-p1";
        if (cell.spec.offloads == "tx-off-tcp4-off") {
            // tx off already turned tx-tcp-segmentation off: the same effective state as tx-off.
            CHECK(cell.status == CellStatus::Duplicate);
            CHECK(cell.duplicate_of == "tx-off" + mtu);
            continue;
        }
        if (cell.spec.offloads == "tso-on") {
            // TSO is on on veth already: nothing differs from the original.
            CHECK(cell.status == CellStatus::Duplicate);
            CHECK(cell.duplicate_of == "original" + mtu);
            continue;
        }
        REQUIRE(cell.status == CellStatus::Ok);  // 9000 too: both ends of the pair get it, the probe passes
        REQUIRE(measured < traffic.seen.size());
        const auto& [oracle, seen_mtu] = traffic.seen[measured++];
        CHECK(seen_mtu == std::to_string(cell.spec.mtu) + "\n");
        CHECK(cell.applied_local->mtu == cell.spec.mtu);
        for (const auto& [feature, on] : cell.applied_local->features) {
            INFO(feature);
            if (oracle.count(feature)) CHECK(oracle.at(feature) == on);
        }
        CHECK(oracle.at("generic-receive-offload") == cell.applied_local->features.at("rx-gro"));
    }
    CHECK(measured == traffic.seen.size());
    const auto find = [&](const std::string& key) {
        return *std::find_if(out.results.cells.begin(), out.results.cells.end(), [&](const nm::CellResult& c) { return c.spec.key == key; });
    };
    CHECK(find("tx-off/mtu1500/tcp-p1").applied_local->features.at("tx-tcp-segmentation") == false);  // the side effect
    CHECK(find("tx-off/mtu1500/tcp-p1").applied_local->features.at("tx-scatter-gather") == true);     // not named: original
    CHECK(find("gro-on/mtu1500/tcp-p1").applied_local->features.at("tx-tcp-segmentation") == true);   // reset after tx-off
    CHECK(find("gro-on/mtu1500/tcp-p1").applied_remote->features.at("rx-gro") == true);

    a_unchanged.check();
    b_unchanged.check();
}

TEST_CASE("The runner on a bridge lab whose middle hop stays at 1500: jumbo cells are path_mtu_blackhole, found by the DF probe before any traffic",
          "[integration]") {
    nm::test::require_net_admin();
    KernelSweep k(nm::LabTopology::Bridge);
    const auto& a = k.a;
    const auto& b = k.b;
    const nm::test::EndsAsItBegan a_unchanged(a), b_unchanged(b);

    const auto config = nm::parse_sweep_config_text(R"({"offloads": [{"name": "original", "features": {}}],
      "mtu": [1500, 9000, 4096], "traffic": [{}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1})",
                                                    "bridge");
    const auto out = k.run(config);
    REQUIRE(out.results.cells.size() == 3);
    CHECK(out.results.cells[0].status == CellStatus::Ok);
    CHECK(out.results.cells[1].status == CellStatus::PathMtuBlackhole);
    CHECK_THAT(out.results.cells[1].error, Catch::Contains("9000-byte ICMP echo with DF set to 198.18.0.2: no echo within 1000 ms"));
    CHECK(out.results.cells[2].status == CellStatus::PathMtuBlackhole);
    // Found by the probes, not by a run that hangs: only the 1500 cell's traffic ran (no timed bound here:
    // a loaded machine stretches the probes' seconds; speed belongs to benchmarks).
    CHECK(k.traffic.seen.size() == 1);
    a_unchanged.check();
    b_unchanged.check();
}
