#include <catch2/catch.hpp>

#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_types.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/report/frame_table.hpp"

namespace {

nm::FrameRow row(const std::string& frame, double fps, double pct, bool mix = false) {
    nm::FrameRow r;
    r.frame = frame;
    r.found = fps > 0;
    r.throughput_fps = fps;
    r.line_rate_pct = pct;
    r.line_rate_fps = pct > 0 ? fps * 100 / pct : 1e6;
    r.layer2_bps = fps * (mix ? 353.8 : std::stod(frame)) * 8;
    r.payload_mix = mix ? std::vector<nm::PayloadShare>{{18, 7}, {548, 4}, {1472, 1}} : std::vector<nm::PayloadShare>{{0, 1}};
    r.trials = 7;
    r.confirmation = nm::TrialRecord{fps, fps, 1000, 1000, 0, true};
    r.confirmed = true;
    r.cpu_sender_pct = 86;
    r.cpu_receiver_pct = 40;
    r.softirq_pct = 12;
    return r;
}

nm::Rfc2544Result table() {
    nm::Rfc2544Result t;
    t.line_rate_bps = 1e9;
    t.line_rate_source = "configured";
    t.rows = {row("64", 259875, 17.46), row("imix", 239825, 43.97, true), row("1518", 81274, 100)};
    return t;
}

}  // namespace

TEST_CASE("The frame-size table has one row per size, IMIX last, and the posted columns", "[unit]") {
    const auto t = nm::build_frame_table(table());
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].frame == "64");
    CHECK(t.rows[1].frame == "1518");
    CHECK(t.rows[2].frame == "imix");
    CHECK(t.rows[0].line_pct == "17.5%");
    CHECK(t.rows[0].fps == "259875");
    CHECK(t.rows[0].mbps == "133.06");  // 259875 x 64 x 8
    CHECK(t.rows[0].cpu == "86/40/12%");
    CHECK(t.rows[0].loss == "0.00% (confirmed 0.00%)");
    CHECK(t.rows[0].trials == "7+1");
    CHECK(t.rows[1].line_pct == "100.0%");
    REQUIRE_FALSE(t.notes.empty());
    CHECK_THAT(t.notes[0], Catch::Contains("1000 Mbit/s (configured)"));

    const auto text = nm::render_frame_table(t, nm::TableFormat::Text);
    CHECK_THAT(text, Catch::StartsWith("frame size  % of line rate  frames/s"));
    CHECK_THAT(text, Catch::Contains("CPU (sender/receiver/softirq)"));
    CHECK(text.find("imix") > text.find("1518"));
    const auto md = nm::render_frame_table(t, nm::TableFormat::Markdown);
    CHECK_THAT(md, Catch::StartsWith("| frame size | % of line rate | frames/s | Mbit/s | CPU (sender/receiver/softirq) | loss | trials |"));
    CHECK_THAT(md, Catch::Contains("| 64 | 17.5% | 259875 | 133.06 | 86/40/12% |"));
    const auto csv = nm::render_frame_table(t, nm::TableFormat::Csv);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
}

TEST_CASE("The table says when the generator limited a row, a row failed or did not confirm", "[unit]") {
    auto t = table();
    t.rows[0].generator_limited = true;
    t.rows[0].generator_max_fps = 300000;
    t.rows[0].line_rate_fps = 1488095;
    t.rows[2].confirmed = false;
    t.rows[2].confirmation->loss_pct = 0.5;
    t.rows[1].error = "trial at 1000 frames/s: peer lost";
    t.line_rate_source = "link";
    const auto ft = nm::build_frame_table(t);
    const auto text = nm::render_frame_table(ft, nm::TableFormat::Text);
    CHECK_THAT(text, Catch::Contains("(link speed)"));
    CHECK_THAT(text, Catch::Contains("64: limited by the generator, which sent at most 300000 frames/s (20.2% of line rate)"));
    CHECK_THAT(text, Catch::Contains("1518: the confirmation trial at the reported rate lost more than the tolerance"));
    CHECK_THAT(text, Catch::Contains("NOT confirmed 0.50%"));
    CHECK_THAT(text, Catch::Contains("imix: failed: trial at 1000 frames/s: peer lost"));
}

TEST_CASE("report renders the frame table of every rfc2544 cell", "[unit]") {
    nm::ResultsFile f;
    f.run.config.name = "bridge-frames";
    f.run.config.offloads = {{"on", {}}};
    f.run.config.mtu = {1500};
    nm::TrafficEntry e;
    e.name = "frames";
    e.rfc2544 = nm::Rfc2544Spec{};
    f.run.config.traffic = {e};
    nm::CellResult c;
    c.spec.key = "on/mtu1500/frames";
    c.spec.traffic = e;
    c.rfc2544 = table();
    f.cells = {c};
    const auto text = nm::render_results(f, "throughput_bps", nm::TableFormat::Text);
    CHECK_THAT(text, Catch::StartsWith("on/mtu1500/frames (ok)"));
    CHECK_THAT(text, Catch::Contains("259875"));
    CHECK(text.find("MTU 1500") == std::string::npos);  // no matrix when every test is a table
    // And it survives the results file's JSON.
    const auto back = nm::Json(f).get<nm::ResultsFile>();
    REQUIRE(back.cells.at(0).rfc2544);
    CHECK(nm::render_results(back, "throughput_bps", nm::TableFormat::Text) == text);
}
