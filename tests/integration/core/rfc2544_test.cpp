// RFC 2544 tables through the bridge lab's device under test, in-process: the server on a thread in the
// receiver's namespace, the generator in the sender's. Oracles: a tc shaper whose rate we set, its own
// drop counter (`tc -s qdisc`), ethtool's link speed, the kernel's softnet counters.
#include <catch2/catch.hpp>

#include <regex>

#include <nlohmann/json.hpp>

#include "core/rfc2544/rfc2544.hpp"
#include "core/session/traffic_client.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::LabServer;
using nm::test::run_command;

namespace {

nm::Rfc2544Result table_through(const nm::test::ScopedLab& lab, const LabServer& server, const nm::Rfc2544Spec& spec,
                                std::optional<double> link_bps) {
    nm::TestSpec base;
    base.host = nm::strip_prefix(lab.server().ipv4);
    base.port = server.port();
    base.iface = lab.client().ifname;
    nm::NetnsScope scope(lab.client().netns);
    nm::TrafficClient client;
    return nm::run_rfc2544(client, base, spec, link_bps, {});
}

uint64_t tc_dropped(const std::string& netns, const std::string& dev) {
    const auto r = run_command("ip netns exec " + netns + " tc -s -j qdisc show dev " + dev);
    REQUIRE(r.exit_status == 0);
    for (const auto& q : nlohmann::json::parse(r.output)) {
        if (q.value("kind", "") == "tbf") return q.at("drops").get<uint64_t>();
    }
    FAIL("no tbf qdisc on " << dev << ": " << r.output);
    return 0;
}

}  // namespace

TEST_CASE("Through a 50 Mbit/s shaper on the DUT the zero-loss rate is within 5% of the shaper's rate", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    const std::string dut_ns = lab.info().by_role("dut-server").netns;
    // tbf counts what the qdisc sees: the frame without its 4-byte FCS. A short queue (10 ms) so a rate
    // above the limit shows as loss within a one-second trial.
    REQUIRE(run_command("ip netns exec " + dut_ns + " tc qdisc add dev dut-b root tbf rate 50mbit burst 64kb latency 10ms").exit_status == 0);
    LabServer server(lab.server().netns);
    nm::Rfc2544Spec spec;
    spec.frames = {"1024"};
    spec.trial_s = 1;
    spec.resolution_pct = 1;
    spec.max_trials = 12;
    spec.line_rate_bps = 100e6;
    const auto r = table_through(lab, server, spec, std::nullopt);
    INFO(nlohmann::json(r).dump());
    REQUIRE(r.rows.size() == 1);
    const auto& row = r.rows[0];
    CHECK(r.line_rate_source == "configured");
    REQUIRE(row.error.empty());
    REQUIRE(row.found);
    const double limit_fps = 50e6 / 8 / (1024 - 4);
    CHECK(row.throughput_fps == Approx(limit_fps).epsilon(0.05));
    CHECK(row.line_rate_pct == Approx(100.0 * row.throughput_fps / (100e6 / ((1024 + 20) * 8))));
    CHECK(row.layer2_bps == Approx(row.throughput_fps * 1024 * 8));
    // The search went above the limit (the shaper dropped) and came back down.
    CHECK(tc_dropped(dut_ns, "dut-b") > 0);
    CHECK(row.trials > 2);
    CHECK(std::any_of(row.history.begin(), row.history.end(), [](const nm::TrialRecord& t) { return !t.passed; }));
    // The confirmation trial at the reported rate, shown in the result.
    REQUIRE(row.confirmation);
    CHECK(row.confirmation->offered_fps == Approx(row.run->spec.rate_pps));
    CHECK(row.confirmation->sent > 0);
    CHECK(row.confirmed);
    CHECK(row.confirmation->loss_pct <= spec.loss_tolerance_pct);
    // Loss is counted against what was sent in the trial the throughput comes from.
    REQUIRE(row.run);
    REQUIRE(row.run->loss);
    CHECK(row.run->loss->lost == 0);
    CHECK(row.run->loss->sent == row.run->loss->received);
}

TEST_CASE("Every frame size and IMIX through the bridge: line rate from the link, NAPI figures in each row", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab(nm::LabTopology::Bridge);
    LabServer server(lab.server().netns);
    // The oracle for the link speed the table uses: ethtool on the sender's veth.
    const auto eth = run_command("ip netns exec " + lab.client().netns + " ethtool " + lab.client().ifname);
    std::smatch m;
    REQUIRE(std::regex_search(eth.output, m, std::regex(R"(Speed: (\d+)Mb/s)")));
    const double speed_bps = std::stod(m[1]) * 1e6;
    nm::Rfc2544Spec spec;  // the default sizes: 64 ... 1518 and imix
    spec.trial_s = 0.3;
    spec.resolution_pct = 20;
    spec.max_trials = 3;
    const auto r = table_through(lab, server, spec, speed_bps);
    INFO(nlohmann::json(r).dump());
    CHECK(r.line_rate_source == "link");
    CHECK(r.line_rate_bps == speed_bps);
    REQUIRE(r.rows.size() == 8);
    const std::vector<std::string> frames = {"64", "128", "256", "512", "1024", "1280", "1518", "imix"};
    for (size_t i = 0; i < frames.size(); ++i) {
        const auto& row = r.rows[i];
        INFO(row.frame);
        CHECK(row.frame == frames[i]);
        CHECK(row.error.empty());
        CHECK(row.found);
        CHECK(row.throughput_fps > 0);
        CHECK(row.line_rate_fps == Approx(speed_bps / ((row.mean_frame_bytes + 20) * 8)));
        CHECK(row.trials >= 1);
        CHECK(row.trials <= 3);
        CHECK(row.generator_max_fps > 0);
        REQUIRE(row.run);
        CHECK(row.run->spec.protocol == nm::Protocol::Udp);
        // The payload the generator sent: frame - 46 (the receiver's bytes / datagrams), or the mix.
        if (row.frame != "imix") {
            CHECK(row.run->spec.write_size == std::stoul(row.frame) - 46);
            CHECK(row.run->bytes == row.run->packets * (std::stoul(row.frame) - 46));
        } else {
            CHECK(row.run->spec.payload_mix.size() == 3);
            const double mean_payload = static_cast<double>(row.run->bytes) / static_cast<double>(row.run->packets);
            CHECK(mean_payload == Approx(353.83 - 46).epsilon(0.05));
        }
        // NAPI: veth has no interrupts, but its receive path runs through softnet (NAPI) on the receiver.
        CHECK(row.run->receiver.napi.processed > 0);
        CHECK(row.run->receiver.napi.processed_per_s > 0);
        CHECK(row.run->receiver.napi.packets > 0);
        CHECK(row.run->receiver.napi.interrupts_per_packet == 0);
    }
    // On veth the generator, not the 10 Gbit/s link, is the limit: the table says so.
    CHECK(r.rows[0].generator_limited);
    CHECK(r.rows[0].line_rate_pct < 50);
}
