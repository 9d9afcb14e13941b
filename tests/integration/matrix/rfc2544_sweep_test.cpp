// A frame-size sweep through the bridge lab with the DUT's ports as the axes: the real device control,
// engine and lab. Oracles: `ethtool -k` and /sys on the DUT ports while each cell's settings hold (the
// observer's on_cell_done runs before the next cell changes them), and on the ends, which must not change.
#include <catch2/catch.hpp>

#include <fstream>

#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/real_backends.hpp"
#include "matrix/sweep_request.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

/// What ethtool and /sys said about each port while a cell's settings were on it.
class DutOracle final : public nm::SweepObserver {
public:
    explicit DutOracle(std::string lab) : lab_(std::move(lab)) {}
    void on_cell_done(const nm::CellProgress&, const nm::CellResult& r) override {
        for (const char* port : {"dut-a", "dut-b"}) features[r.spec.key][port] = nm::test::ethtool_features(lab_ + "-dut", port);
        end_features[r.spec.key] = nm::test::ethtool_features(lab_ + "-a", "nm-a");
        mtu[r.spec.key] = nm::test::link_mtu(lab_ + "-dut", "dut-b");
    }
    std::map<std::string, std::map<std::string, std::map<std::string, bool>>> features;
    std::map<std::string, std::map<std::string, bool>> end_features;
    std::map<std::string, std::string> mtu;

private:
    std::string lab_;
};

}  // namespace

TEST_CASE("sweep --lab --topology bridge: frame-size tables with the DUT's offloads on and off", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto config = dir.file("frames.json");
    std::ofstream(config) << R"({"name": "dut-frames",
      "offloads": [{"name": "on", "features": {"tso": "on", "gso": "on", "gro": "on"}},
                   {"name": "off", "features": {"tso": "off", "gso": "off", "gro": "off"}}],
      "mtu": [1500],
      "traffic": [{"name": "frames", "test": "rfc2544", "frames": [64, 1518, "imix"], "trial_s": 0.3,
                   "resolution_pct": 20, "max_trials": 3}],
      "repetitions": 1, "apply_to": "dut"})";
    nm::SweepRequest req;
    req.config_file = config;
    req.lab = true;
    req.topology = nm::LabTopology::Bridge;
    req.lab_name = nm::test::unique_name("nmr");
    req.output = dir.file("r.json");
    req.journal = dir.file("journal.json");
    const auto prepared = nm::prepare_sweep(req);
    DutOracle oracle(req.lab_name);
    const auto out = nm::execute_sweep(req, prepared, nm::real_backends(), &oracle, {});
    REQUIRE(out.results.cells.size() == 2);
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key << ": " << c.error);
        REQUIRE(c.status == nm::CellStatus::Ok);
        const bool on = c.spec.offloads == "on";
        for (const char* port : {"dut-a", "dut-b"}) {
            INFO(port);
            CHECK(oracle.features[c.spec.key][port].at("tx-tcp-segmentation") == on);
            CHECK(oracle.features[c.spec.key][port].at("generic-receive-offload") == on);
            CHECK(c.applied_dut.at(port).features.at("tx-tcp-segmentation") == on);
            CHECK(c.applied_dut.at(port).features.at("rx-gro") == on);
        }
        CHECK(oracle.mtu[c.spec.key] == "1500\n");
        // The sender is left as it was: veth's default has TSO on and GRO off, whatever the DUT has.
        CHECK(oracle.end_features[c.spec.key].at("tx-tcp-segmentation"));
        REQUIRE(c.rfc2544);
        CHECK(c.rfc2544->line_rate_source == "link");
        REQUIRE(c.rfc2544->rows.size() == 3);
        for (const auto& row : c.rfc2544->rows) {
            INFO(row.frame);
            CHECK(row.error.empty());
            CHECK(row.found);
            CHECK(row.confirmation.has_value());
        }
        CHECK(c.rfc2544->interfaces.size() == 4);  // sender, receiver and both DUT ports
    }
    // The report renders each cell as the frame-size table, IMIX last.
    const auto report = nm::test::run_command(nm::test::nicmatrix_binary() + " report " + req.output);
    REQUIRE(report.exit_status == 0);
    CHECK_THAT(report.output, Catch::Contains("on/mtu1500/frames (ok)"));
    CHECK_THAT(report.output, Catch::Contains("off/mtu1500/frames (ok)"));
    CHECK_THAT(report.output,
               Catch::Matches(R"([\s\S]*frame size +% of line rate +frames/s +Mbit/s +CPU \(sender/receiver/softirq\) +loss +trials[\s\S]*)"));
    CHECK(report.output.find("imix") > report.output.find("1518"));
    CHECK(nm::test::run_command("ip netns list").output.find(req.lab_name) == std::string::npos);
}
