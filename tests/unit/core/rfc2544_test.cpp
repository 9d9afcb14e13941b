#include <catch2/catch.hpp>

#include <vector>

#include "core/base/error.hpp"
#include "core/rfc2544/rfc2544.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace {

// A device that forwards up to `limit_bps` of layer-2 bits (frame = payload + 46) and drops the rest,
// behind a generator that sends at most `generator_fps`. Records every spec it was asked to run.
class FakePathRunner final : public nm::TrafficRunner {
public:
    FakePathRunner(double limit_bps, double generator_fps) : limit_bps_(limit_bps), generator_fps_(generator_fps) {}
    nm::RunResult run(const nm::TestSpec& spec, std::stop_token) override {
        specs.push_back(spec);
        double frame = spec.write_size + 46.0;
        if (!spec.payload_mix.empty()) {
            double bytes = 0, weight = 0;
            for (const auto& m : spec.payload_mix) {
                bytes += (m.payload_bytes + 46.0) * m.weight;
                weight += m.weight;
            }
            frame = bytes / weight;
        }
        const double sent_fps = std::min(spec.rate_pps, generator_fps_);
        const double carried_fps = std::min(sent_fps, limit_bps_ / (frame * 8));
        nm::RunResult r;
        r.spec = spec;
        r.loss = nm::LossStats{};
        r.loss->sent = static_cast<uint64_t>(sent_fps * spec.duration_s);
        r.loss->received = static_cast<uint64_t>(carried_fps * spec.duration_s);
        r.sender.duration_s = spec.duration_s;
        r.sender.cpu.util_pct = 42;
        r.receiver.cpu.util_pct = 17;
        r.receiver.system.softirq_pct = 9;
        return r;
    }
    std::vector<nm::TestSpec> specs;

private:
    double limit_bps_, generator_fps_;
};

nm::TestSpec base() {
    nm::TestSpec b;
    b.host = "198.18.0.2";
    b.port = 5301;
    return b;
}

}  // namespace

TEST_CASE("The line rate comes from --line-rate, else the link, neither is a usage error", "[unit]") {
    nm::Rfc2544Spec s;
    CHECK(nm::choose_line_rate(s, 1e10) == std::pair<double, std::string>{1e10, "link"});
    s.line_rate_bps = 1e9;
    CHECK(nm::choose_line_rate(s, 1e10) == std::pair<double, std::string>{1e9, "configured"});
    s.line_rate_bps = 0;
    CHECK_THROWS_WITH(nm::choose_line_rate(s, std::nullopt), Catch::Contains("--line-rate"));
}

TEST_CASE("A trial is paced forward UDP with payload = frame - 46, or the mix's payloads", "[unit]") {
    nm::Rfc2544Spec s;
    s.trial_s = 0.5;
    s.streams = 2;
    const auto t = nm::trial_spec(base(), s, nm::single_frame(64), 12345);
    CHECK(t.protocol == nm::Protocol::Udp);
    CHECK(t.direction == nm::Direction::Forward);
    CHECK(t.write_size == 18);
    CHECK(t.rate_pps == 12345);
    CHECK(t.duration_s == 0.5);
    CHECK(t.omit_s == 0);
    CHECK(t.streams == 2);
    const auto m = nm::trial_spec(base(), s, nm::classic_imix(), 1000);
    REQUIRE(m.payload_mix.size() == 3);
    CHECK(m.payload_mix[0].payload_bytes == 18);
    CHECK(m.payload_mix[1].payload_bytes == 548);
    CHECK(m.payload_mix[2].payload_bytes == 1472);
    CHECK(m.payload_mix[0].weight == 7);
}

TEST_CASE("The table finds a device's known limit per frame size and confirms it", "[unit]") {
    // A 100 Mbit/s device (layer 2) on a 1 Gbit/s line, a generator good for 2 Mfps.
    FakePathRunner path(100e6, 2e6);
    nm::Rfc2544Spec s;
    s.frames = {"64", "1518", "imix"};
    s.trial_s = 1;
    s.resolution_pct = 0.5;
    s.max_trials = 30;
    s.line_rate_bps = 1e9;
    std::vector<std::string> seen;
    const auto r = nm::run_rfc2544(path, base(), s, 1e10, {}, [&](const nm::FrameRow& row) { seen.push_back(row.frame); });
    CHECK(r.line_rate_source == "configured");
    CHECK(r.line_rate_bps == 1e9);
    REQUIRE(r.rows.size() == 3);
    CHECK(seen == std::vector<std::string>{"64", "1518", "imix"});
    for (const auto& row : r.rows) {
        INFO(row.frame);
        const double limit_fps = 100e6 / (row.mean_frame_bytes * 8);
        REQUIRE(row.found);
        CHECK(row.throughput_fps <= limit_fps);
        CHECK(row.throughput_fps >= limit_fps * 0.99);
        CHECK(row.layer2_bps == Approx(row.throughput_fps * row.mean_frame_bytes * 8));
        CHECK(row.line_rate_pct == Approx(100.0 * row.throughput_fps / row.line_rate_fps));
        CHECK(row.loss_pct == 0);
        REQUIRE(row.confirmation);
        CHECK(row.confirmed);
        CHECK(row.confirmation->loss_pct == 0);
        CHECK(row.trials == row.history.size());
        CHECK(row.trials > 1);
        CHECK_FALSE(row.generator_limited);
        REQUIRE(row.run);
        CHECK(row.cpu_sender_pct == 42);
        CHECK(row.softirq_pct == 9);
    }
    CHECK(r.rows[0].line_rate_fps == Approx(1488095).epsilon(1e-6));
    CHECK(r.rows[1].line_rate_fps == Approx(81274).epsilon(1e-5));
    // One run per search trial and per confirmation, nothing else.
    size_t trials = 0;
    for (const auto& row : r.rows) trials += row.trials + 1;
    CHECK(path.specs.size() == trials);
}

TEST_CASE("A generator slower than the device is reported with its own maximum", "[unit]") {
    FakePathRunner path(1e12, 300000);
    nm::Rfc2544Spec s;
    s.frames = {"64"};
    const auto r = nm::run_rfc2544(path, base(), s, 1e9, {});
    REQUIRE(r.rows.size() == 1);
    CHECK(r.line_rate_source == "link");
    CHECK(r.rows[0].generator_limited);
    CHECK(r.rows[0].generator_max_fps == Approx(300000));
    CHECK(r.rows[0].throughput_fps == Approx(300000));
}

TEST_CASE("Bad table specs are usage errors", "[unit]") {
    FakePathRunner path(1e9, 1e6);
    nm::Rfc2544Spec s;
    s.frames = {"63"};
    CHECK_THROWS_AS(nm::run_rfc2544(path, base(), s, 1e9, {}), nm::Error);
    s.frames = {"64"};
    s.trial_s = 0;
    CHECK_THROWS_WITH(nm::run_rfc2544(path, base(), s, 1e9, {}), Catch::Contains("trial"));
    CHECK(path.specs.empty());
}

TEST_CASE("A frame-size result round-trips through JSON", "[unit]") {
    FakePathRunner path(100e6, 2e6);
    nm::Rfc2544Spec s;
    s.frames = {"512", "imix"};
    s.line_rate_bps = 1e9;
    const auto r = nm::run_rfc2544(path, base(), s, std::nullopt, {});
    const auto back = nm::Json(r).get<nm::Rfc2544Result>();
    CHECK(nm::Json(back) == nm::Json(r));
    CHECK(back.rows.at(1).payload_mix.size() == 3);
}
