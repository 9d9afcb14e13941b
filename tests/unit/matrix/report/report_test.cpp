#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/cpu_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/comparison_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/report/report.hpp"
#include "matrix/stats.hpp"

using Catch::Detail::Approx;

namespace {

nm::SweepConfig config() {
    return nm::parse_sweep_config_text(R"({"name": "t",
      "offloads": [{"name": "all-on", "features": {"tso": "on"}}, {"name": "all-off", "features": {"tso": "off"}}],
      "mtu": [1500, 9000], "traffic": [{"streams": 1}, {"streams": 10}]})",
                                       "t");
}

// A results file of config() where each ok cell's runs have the given throughputs (Gbit/s) and 40% CPU.
nm::ResultsFile results(const std::map<std::string, std::vector<double>>& gbps, const std::map<std::string, nm::CellStatus>& other = {}) {
    nm::ResultsFile r;
    r.run.config = config();
    for (const auto& spec : nm::expand_cells(r.run.config)) {
        nm::CellResult c;
        c.spec = spec;
        if (const auto it = other.find(spec.key); it != other.end()) {
            c.status = it->second;
            c.error = "why " + spec.key;
            if (c.status == nm::CellStatus::Duplicate) c.duplicate_of = "all-on/mtu1500/tcp-p1";
        } else if (const auto g = gbps.find(spec.key); g != gbps.end()) {
            for (double v : g->second) {
                nm::RunResult run;
                run.throughput_bps = v * 1e9;
                run.sender.system.busy_pct = 40;
                run.sender.cpu.util_pct = 95;
                run.receiver.cpu.util_pct = 70;
                c.runs.push_back(run);
            }
        } else {
            continue;
        }
        c.summary = nm::summarize_runs(c.runs);
        r.cells.push_back(c);
    }
    return r;
}

const nm::ComparisonOptions kEachOnItsOwn{95, nm::PAdjustment::None, std::nullopt};

}  // namespace

TEST_CASE("The matrix: rows profile x traffic, columns MTU, median and CPU, statuses and notes", "[unit]") {
    const auto r = results({{"all-on/mtu1500/tcp-p1", {9.3, 9.41, 9.5}},
                            {"all-on/mtu9000/tcp-p1", {20.1, 20.2}},
                            {"all-on/mtu1500/tcp-p10", {12.0}},
                            {"all-off/mtu1500/tcp-p1", {0.912, 0.95}}},
                           {{"all-off/mtu9000/tcp-p1", nm::CellStatus::PathMtuBlackhole}, {"all-on/mtu9000/tcp-p10", nm::CellStatus::Duplicate}});
    const auto table = nm::build_matrix(r, "throughput_bps");
    REQUIRE(table.rows.size() == 4);
    CHECK(table.rows[1].traffic == "tcp-p10");
    CHECK(nm::render_matrix(table, nm::TableFormat::Text) ==
          "offloads / traffic              MTU 1500              MTU 9000\n"
          "--------------------------------------------------------------\n"
          "all-on / tcp-p1     9.41 Gbit/s (95/70%)  20.1 Gbit/s (95/70%)\n"
          "all-on / tcp-p10    12.0 Gbit/s (95/70%)             duplicate\n"
          "all-off / tcp-p1     931 Mbit/s (95/70%)    path_mtu_blackhole\n"
          "all-off / tcp-p10                      -                     -\n"
          "\n"
          "  median throughput_bps (sender/receiver engine CPU, % of one core); - = not run\n"
          "  all-on/mtu9000/tcp-p10: duplicate: same effective settings as all-on/mtu1500/tcp-p1\n"
          "  all-off/mtu9000/tcp-p1: path_mtu_blackhole: why all-off/mtu9000/tcp-p1\n");
    CHECK_THAT(nm::render_matrix(table, nm::TableFormat::Markdown),
               Catch::StartsWith("| offloads / traffic | MTU 1500 | MTU 9000 |\n| --- | ---: | ---: |\n| all-on / tcp-p1 | 9.41 Gbit/s (95/70%) | "
                                 "20.1 Gbit/s (95/70%) |\n"));
    const auto csv = nm::render_matrix(table, nm::TableFormat::Csv);
    CHECK_THAT(csv,
               Catch::StartsWith(
                   "profile,traffic,mtu,key,status,throughput_bps_median,throughput_bps_mean,throughput_bps_ci95,n,cpu_sender_pct_median,cpu_"
                   "receiver_pct_median,"
                   "throughput_bps_median_ci_low,throughput_bps_median_ci_high,throughput_bps_median_ci_confidence,precision_met,disturbed_runs\n"
                   "all-on,tcp-p1,1500,all-on/mtu1500/tcp-p1,ok,9410000000.0,"));
    // [min, max] of 3 at 75%; no precision was asked; no run was disturbed.
    CHECK_THAT(csv, Catch::Contains(",3,95.0,70.0,9300000000.0,9500000000.0,75.0,,0\n"));
    CHECK_THAT(csv, Catch::Contains("all-off,tcp-p1,9000,all-off/mtu9000/tcp-p1,path_mtu_blackhole,,,,0,,,,,,,0\n"));
}

TEST_CASE("report --metric of a metric no cell has lists the metrics there are", "[unit]") {
    const auto r = results({{"all-on/mtu1500/tcp-p1", {1}}});
    CHECK_THROWS_WITH(
        nm::build_matrix(r, "goodput"),
        Catch::StartsWith("--metric goodput: no cell has this metric; the file has busiest_cpu_busy_pct, cpu_receiver_pct, cpu_sender_pct,"));
    CHECK_THROWS_AS(nm::parse_table_format("xml"), nm::Error);
    CHECK(nm::build_matrix(r, "cpu_sender_pct").rows.size() == 4);
}

TEST_CASE("compare matches cells by settings, gives B/A with its interval, marks * and ≈, claims nothing from too few runs", "[unit]") {
    const auto a = results({{"all-on/mtu1500/tcp-p1", {9.0, 9.2, 9.4, 9.3}},
                            {"all-on/mtu1500/tcp-p10", {10.0, 11.0, 12.0}},
                            {"all-on/mtu9000/tcp-p10", {5.0, 5.2, 5.4, 5.1}},
                            {"all-off/mtu1500/tcp-p1", {1.0, 1.1}}});
    auto b = results({{"all-on/mtu1500/tcp-p1", {4.5, 4.6, 4.7, 4.62}},
                      {"all-on/mtu1500/tcp-p10", {10.5, 11.0, 11.5}},
                      {"all-on/mtu9000/tcp-p10", {5.1, 5.3, 5.0, 5.2}},
                      {"all-on/mtu9000/tcp-p1", {20}}});
    // B named its profile differently: matching is by the requested settings, not by names.
    for (auto& c : b.cells) c.spec.offloads = "everything";
    // Each cell on its own here; the adjustment over cells has a test of its own below.
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "88e8053.json", "mcp51.json", kEachOnItsOwn);
    REQUIRE(cmp.rows.size() == 3);
    const auto& half = cmp.rows[0];
    CHECK(half.key_a == "all-on/mtu1500/tcp-p1");
    CHECK(*half.ratio == Catch::Detail::Approx(4.61 / 9.25));
    // 4 and 4: k = 1, [min B / max A, max B / min A] at 1 - 2/C(8,4) = 97.1%.
    CHECK(*half.ratio_ci_low == Catch::Detail::Approx(4.5 / 9.4));
    CHECK(*half.ratio_ci_high == Catch::Detail::Approx(4.7 / 9.0));
    CHECK(*half.ratio_ci_confidence == Catch::Detail::Approx(100 * (1 - 2.0 / 70)));
    CHECK(half.significant);
    CHECK(half.verdict == nm::RatioVerdict::Significant);
    CHECK(half.features_requested == std::map<std::string, bool>{{"tso", true}});
    CHECK(cmp.rows[1].verdict == nm::RatioVerdict::TooFew);  // 3 and 3 reach 90% at most
    CHECK_FALSE(cmp.rows[1].significant);
    CHECK(cmp.rows[2].verdict == nm::RatioVerdict::NotSignificant);
    CHECK(cmp.only_a == std::vector<std::string>{"all-off/mtu1500/tcp-p1"});
    CHECK(cmp.only_b == std::vector<std::string>{"all-on/mtu9000/tcp-p1"});
    CHECK(nm::render_comparison(cmp, nm::TableFormat::Text) ==
          "cell                    A: 88e8053.json  B: mcp51.json      B/A                              95% interval of B/A\n"
          "----------------------------------------------------------------------------------------------------------------\n"
          "all-on/mtu1500/tcp-p1       9.25 Gbit/s    4.61 Gbit/s  0.50 *                                      0.479..0.522\n"
          "all-on/mtu1500/tcp-p10      11.0 Gbit/s    11.0 Gbit/s  1.00     3+3 runs: at most 90.0% confidence, 95.0% asked\n"
          "all-on/mtu9000/tcp-p10      5.15 Gbit/s    5.15 Gbit/s  1.00 ≈                                      0.926..1.060\n"
          "\n"
          "  B/A = median B / median A of throughput_bps; interval: the 95% Hodges-Lehmann/Mann-Whitney interval of B/A (exact, distribution-free, "
          "on log values; it assumes B is A scaled)\n"
          "  * = a difference: the cell's exact Mann-Whitney p-value (the test its interval inverts), not adjusted for the number of cells, is at "
          "most 0.05; ≈ = no difference shown; no mark = too few repetitions to claim anything at 95% (each side needs at least 4)\n"
          "  2 cells tested: even if nothing differed, about 0.1 of them would be marked * by chance\n"
          "  only in A: all-off/mtu1500/tcp-p1\n"
          "  only in B: all-on/mtu9000/tcp-p1\n");
    const auto csv = nm::render_comparison(cmp, nm::TableFormat::Csv);
    CHECK_THAT(csv, Catch::StartsWith("profile,traffic,mtu,key_a,key_b,a,b,ratio,significant,ratio_ci_low,ratio_ci_high,ratio_ci_confidence,verdict,"
                                      "p_value,p_adjusted,equivalent,equivalence_p_value,equivalence_p_adjusted,verdict_unadjusted\n"));
    CHECK_THAT(csv, Catch::Contains("all-on,tcp-p1,1500,all-on/mtu1500/tcp-p1,all-on/mtu1500/tcp-p1,9250000000.0,4610000000.0,0.4984,true,"));
    // Too few for 95%: the widest interval is there, with the 90% it covers, and it claims nothing.
    CHECK_THAT(csv, Catch::Contains(",1.0000,false,0.87"));
    CHECK_THAT(csv, Catch::Contains(",90.0,too_few,,,false,,,too_few\n"));
    CHECK_THAT(csv, Catch::Contains(",,,all-off/mtu1500/tcp-p1,,,,,only in A,,,,,,,,,,,,\n"));
    // The JSON rows are the codec's, the same Python's nicmatrix.compare reads.
    const auto json = nm::Json::parse(nm::render_comparison(cmp, nm::TableFormat::JsonDocument));
    CHECK(json.at("confidence") == 95.0);
    CHECK(json.at("rows").size() == 3);
    CHECK(json.at("rows")[0].at("significant") == true);
    CHECK(json.at("rows")[0].at("ratio_ci_low") == *half.ratio_ci_low);
    CHECK(json.at("rows")[1].at("verdict") == "too_few");
    CHECK(json.at("rows")[1].at("ratio_ci_confidence") == Catch::Detail::Approx(90));
    CHECK(json.at("rows")[1].at("why") == "3+3 runs: at most 90.0% confidence, 95.0% asked");
    CHECK(json.at("only_b") == nm::Json::array({"all-on/mtu9000/tcp-p1"}));
}

TEST_CASE("compare marks a figure whose precision was not met (?) or that was measured under interference (!)", "[unit]") {
    const auto a = results({{"all-on/mtu1500/tcp-p1", {9.0, 9.2, 9.4, 9.3}}});
    auto b = results({{"all-on/mtu1500/tcp-p1", {4.5, 4.6, 4.7, 4.62}}});
    b.cells[0].precision_met = false;
    b.cells[0].runs[2].disturbed = true;
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "a", "b", kEachOnItsOwn);
    REQUIRE(cmp.rows.size() == 1);
    CHECK_FALSE(cmp.rows[0].precision_met_a);
    CHECK(cmp.rows[0].precision_met_b == false);
    CHECK(cmp.rows[0].disturbed_b == 1);
    const auto text = nm::render_comparison(cmp, nm::TableFormat::Text);
    CHECK_THAT(text, Catch::Contains("all-on/mtu1500/tcp-p1  9.25 Gbit/s  4.61 Gbit/s ?!  0.50 *"));
    CHECK_THAT(text, Catch::Contains("  ? after a figure: its cell's asked precision was not met; ! : it was measured under interference\n"));
    const auto json = nm::Json::parse(nm::render_comparison(cmp, nm::TableFormat::JsonDocument));
    CHECK(json.at("rows")[0].at("precision_met_a").is_null());
    CHECK(json.at("rows")[0].at("precision_met_b") == false);
    CHECK(json.at("rows")[0].at("disturbed_b") == 1);
}

TEST_CASE("compare adjusts the cells' p-values together (Holm by default, BH, none), names the method and the family, and marks = within a margin",
          "[unit]") {
    // Eight cells of 6+6 runs: two with B 20% faster, six the same figures shuffled (A/A).
    const std::vector<double> base{10.0, 10.1, 10.2, 10.3, 10.4, 10.5};
    const std::vector<double> shuffled{10.25, 10.05, 10.45, 10.15, 10.35, 10.12};
    std::map<std::string, std::vector<double>> ga, gb;
    std::vector<std::string> keys;
    for (const char* p : {"all-on", "all-off"}) {
        for (const char* m : {"1500", "9000"}) {
            for (const char* t : {"tcp-p1", "tcp-p10"}) keys.push_back(std::string(p) + "/mtu" + m + "/" + t);
        }
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        ga[keys[i]] = base;
        gb[keys[i]] = shuffled;
        if (i < 2) {
            for (double& v : gb[keys[i]]) v *= 1.2;
        }
    }
    const auto a = results(ga), b = results(gb);
    // 6+6: the smallest two-sided p-value is 2/924 = 0.00216, under Holm's first step 0.05/8 = 0.00625.
    const auto holm = nm::compare_results(a, b, "throughput_bps", "a", "b");
    CHECK(holm.adjustment == nm::PAdjustment::Holm);
    CHECK(holm.tested_cells == 8);
    REQUIRE(holm.rows.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
        INFO(keys[i]);
        REQUIRE(holm.rows[i].p_value);
        CHECK(holm.rows[i].significant == (i < 2));
    }
    // The two differing cells: p = 2/924 each; Holm multiplies the smallest by 8, the next by 7, and keeps
    // the adjusted values in order (the larger of the two).
    CHECK(*holm.rows[0].p_value == Approx(2.0 / 924));
    CHECK(*holm.rows[0].p_adjusted == Approx(8 * 2.0 / 924));
    CHECK(*holm.rows[1].p_adjusted == Approx(8 * 2.0 / 924));
    const auto text = nm::render_comparison(holm, nm::TableFormat::Text);
    CHECK_THAT(
        text, Catch::Contains("adjusted by Holm (family-wise error rate) over the 8 cells tested, is at most 0.05 (each cell on its own: 2 marked)"));
    const auto json = nm::Json::parse(nm::render_comparison(holm, nm::TableFormat::JsonDocument));
    CHECK(json.at("adjustment") == "holm");
    CHECK(json.at("tested_cells") == 8);
    CHECK(json.at("margin_pct").is_null());
    CHECK(json.at("rows")[0].at("p_adjusted") == Approx(8 * 2.0 / 924));
    CHECK(json.at("rows")[0].at("verdict") == "significant");

    // Benjamini-Hochberg: the two smallest p-values times 8/2.
    const auto bh = nm::compare_results(a, b, "throughput_bps", "a", "b", {95, nm::PAdjustment::BenjaminiHochberg, std::nullopt});
    CHECK(*bh.rows[0].p_adjusted == Approx(4 * 2.0 / 924));
    CHECK(bh.rows[0].significant);
    CHECK_FALSE(bh.rows[2].significant);
    CHECK_THAT(nm::render_comparison(bh, nm::TableFormat::Text),
               Catch::Contains("Benjamini-Hochberg (false discovery rate) over the 8 cells tested"));

    // A margin of 5%: the A/A cells are the same within it, the 20% cells are not.
    const auto eq = nm::compare_results(a, b, "throughput_bps", "a", "b", {95, nm::PAdjustment::Holm, 5.0});
    for (size_t i = 0; i < 8; ++i) {
        INFO(keys[i]);
        REQUIRE(eq.rows[i].equivalence_p_value);
        CHECK(eq.rows[i].equivalent == (i >= 2));
        CHECK(eq.rows[i].verdict == (i < 2 ? nm::RatioVerdict::Significant : nm::RatioVerdict::Equivalent));
        CHECK(nm::comparison_mark(eq.rows[i]) == (i < 2 ? "*" : "="));
    }
    const auto eq_text = nm::render_comparison(eq, nm::TableFormat::Text);
    CHECK_THAT(eq_text, Catch::Contains("1.19 * "));
    CHECK_THAT(eq_text, Catch::Contains("= = the same within ±5%: two one-sided Mann-Whitney tests that B/A lies inside [0.950, 1.050] (each at "
                                        "0.05: the 90% interval inside the margin)"));
    const auto eq_json = nm::Json::parse(nm::render_comparison(eq, nm::TableFormat::JsonDocument));
    CHECK(eq_json.at("margin_pct") == 5.0);
    CHECK(eq_json.at("rows")[2].at("verdict") == "equivalent");
    CHECK(eq_json.at("rows")[2].at("equivalent") == true);
    // report --against with the same options: the same verdicts.
    const auto against = nm::compare_to_profile(b, "throughput_bps", "all-off", "b", {95, nm::PAdjustment::Holm, 5.0});
    CHECK(against.tested_cells == 4);
    CHECK_THAT(nm::render_against(against, nm::TableFormat::Text), Catch::Contains("over the 4 cells tested"));

    // With 4+4 runs Holm cannot mark any of 8 cells: the notes say so.
    std::map<std::string, std::vector<double>> fa, fb;
    for (const auto& k : keys) {
        fa[k] = {10.0, 10.1, 10.2, 10.3};
        fb[k] = {20.0, 20.1, 20.2, 20.3};
    }
    const auto few = nm::compare_results(results(fa), results(fb), "throughput_bps", "a", "b");
    for (const auto& r : few.rows) CHECK_FALSE(r.significant);
    CHECK_THAT(nm::render_comparison(few, nm::TableFormat::Text),
               Catch::Contains("8 of the 8 cells have too few repetitions to be marked * under Holm"));
}

TEST_CASE("repetitions: 1 claims nothing: no interval, no mark, however far apart", "[unit]") {
    const auto a = results({{"all-on/mtu1500/tcp-p1", {9.0}}, {"all-on/mtu9000/tcp-p1", {9.0}}});
    const auto b = results({{"all-on/mtu1500/tcp-p1", {1.0}}, {"all-on/mtu9000/tcp-p1", {9.0}}});
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "a", "b");
    REQUIRE(cmp.rows.size() == 2);
    for (const auto& r : cmp.rows) {
        CHECK(r.verdict == nm::RatioVerdict::TooFew);
        CHECK_FALSE(r.significant);
        CHECK_FALSE(r.ratio_ci_low);
    }
    const auto text = nm::render_comparison(cmp, nm::TableFormat::Text);
    CHECK(text.find("0.11 *") == std::string::npos);
    CHECK(text.find("1.00 ≈") == std::string::npos);
    CHECK_THAT(text, Catch::Contains("0.11     1+1 runs: one run on a side claims nothing"));
    CHECK(text.find("cells tested") == std::string::npos);
}

TEST_CASE("report --against: every cell relative to the reference profile at the same MTU and traffic, with the same marks", "[unit]") {
    const auto r = results({{"all-on/mtu1500/tcp-p1", {9.0, 9.2, 9.4, 9.3}},
                            {"all-off/mtu1500/tcp-p1", {3.0, 3.1, 3.2, 3.05}},
                            {"all-on/mtu9000/tcp-p1", {20.0, 20.2, 20.1}},
                            {"all-off/mtu9000/tcp-p1", {10.0, 10.1}},
                            {"all-on/mtu1500/tcp-p10", {5.0, 5.2, 5.4, 5.1}},
                            {"all-off/mtu1500/tcp-p10", {5.1, 5.3, 5.0, 5.2}}},
                           {{"all-off/mtu9000/tcp-p10", nm::CellStatus::PathMtuBlackhole}, {"all-on/mtu9000/tcp-p10", nm::CellStatus::Failed}});
    const auto cmp = nm::compare_to_profile(r, "throughput_bps", "all-off", "r.json", kEachOnItsOwn);
    CHECK(cmp.reference == "all-off");
    REQUIRE(cmp.rows.size() == 4);  // the all-on cells, each against all-off
    CHECK(cmp.rows[0].key_a == "all-off/mtu1500/tcp-p1");
    CHECK(cmp.rows[0].key_b == "all-on/mtu1500/tcp-p1");
    CHECK(cmp.rows[0].profile == "all-on");
    CHECK(cmp.rows[0].significant);
    CHECK(cmp.rows[1].key_b == "all-on/mtu1500/tcp-p10");
    CHECK(cmp.rows[1].verdict == nm::RatioVerdict::NotSignificant);  // the same figures, shuffled
    CHECK(cmp.rows[2].verdict == nm::RatioVerdict::TooFew);          // 3 against 2 runs
    const auto text = nm::render_against(cmp, nm::TableFormat::Text);
    CHECK(text.substr(0, text.find("\n\n")) ==
          "offloads / traffic               MTU 1500  MTU 9000\n"
          "---------------------------------------------------\n"
          "all-on / tcp-p1     3.01 * [2.813..3.133]   2.00\n"
          "all-on / tcp-p10    1.00 ≈ [0.943..1.080]    failed");
    CHECK_THAT(text, Catch::Contains("  each cell against all-off at the same MTU and traffic (A = all-off, B = the cell)\n"));
    CHECK_THAT(text, Catch::Contains("  all-on/mtu9000/tcp-p1: 2+3 runs: at most 80.0% confidence, 95.0% asked\n"));
    const auto json = nm::Json::parse(nm::render_against(cmp, nm::TableFormat::JsonDocument));
    CHECK(json.at("reference") == "all-off");
    CHECK_THROWS_WITH(nm::compare_to_profile(r, "throughput_bps", "none", "r.json"),
                      "--against none: no such offload profile; the file has all-on, all-off");
}

TEST_CASE("The matrix marks cells whose precision was not met (?) and cells measured under interference (!), and counts them", "[unit]") {
    auto r = results({{"all-on/mtu1500/tcp-p1", {9.3, 9.41, 9.5}}, {"all-on/mtu9000/tcp-p1", {20.1, 20.2}}, {"all-off/mtu1500/tcp-p1", {1, 1.1}}});
    r.run.config.precision = nm::PrecisionSpec{};
    r.cells[0].precision_met = true;
    r.cells[1].precision_met = false;
    r.cells[2].precision_met = false;
    r.cells[2].runs[1].disturbed = true;
    const auto text = nm::render_matrix(nm::build_matrix(r, "throughput_bps"), nm::TableFormat::Text);
    CHECK_THAT(text, Catch::Contains("9.41 Gbit/s (95/70%)"));
    CHECK_THAT(text, Catch::Contains("20.1 Gbit/s (95/70%) ?"));
    CHECK_THAT(text, Catch::Contains("1.05 Gbit/s (95/70%) ?!"));
    CHECK_THAT(text, Catch::Contains("  ? = desired precision not achieved (the 95% interval of the median throughput_bps within ±5%, in 12 "
                                     "repetitions at most): 2 of 3 cells\n"));
    CHECK_THAT(text, Catch::Contains("  ! = measured under interference (before a repetition, busy above 20% or steal above 5% of all CPUs, for "
                                     "longer than the sweep waited): 1 of 3 cells\n"));
    CHECK_THROWS_AS(nm::render_matrix(nm::build_matrix(r, "throughput_bps"), nm::TableFormat::JsonDocument), nm::Error);
}

TEST_CASE("format_metric puts human units on bits/s, packets/s and percentages", "[unit]") {
    CHECK(nm::format_metric("throughput_bps", 9.41e9) == "9.41 Gbit/s");
    CHECK(nm::format_metric("throughput_bps", 218e3) == "218 kbit/s");
    CHECK(nm::format_metric("packets_per_s", 812345) == "812 kpps");
    CHECK(nm::format_metric("cpu_sender_pct", 38.25) == "38.2%");
    CHECK(nm::format_metric("tcp_retransmits", 3) == "3.00");
}

TEST_CASE(
    "compare warns when the files' hosts differ in kernel, CPU model, driver, firmware, congestion control, CPU mitigations, idle policy or "
    "nicmatrix build, naming which",
    "[unit]") {
    auto a = results({{"all-on/mtu1500/tcp-p1", {9.0, 9.2, 9.3, 9.4}}});
    auto b = results({{"all-on/mtu1500/tcp-p1", {9.1, 9.2, 9.3, 9.4}}});
    for (auto* r : {&a, &b}) {
        r->local.kernel = "6.1.0-13-amd64";
        r->local.cpu_model = "Intel(R) Xeon(R) Gold 6338";
        r->local.interface = nm::InterfaceInfo{};
        r->local.interface->driver = "ice";
        r->local.interface->firmware = "4.20";
        r->local.sysctls["net.ipv4.tcp_congestion_control"] = "cubic";
    }
    CHECK(nm::host_differences(a, b).empty());
    CHECK_THAT(nm::render_comparison(nm::compare_results(a, b, "throughput_bps", "a", "b"), nm::TableFormat::Text), !Catch::Contains("warning"));
    b.local.kernel = "6.5.0-1-amd64";
    CHECK(nm::host_differences(a, b) == std::vector<std::string>{"local kernel: 6.1.0-13-amd64 vs 6.5.0-1-amd64"});
    b.local.interface->firmware = "4.40";
    a.local.interface->driver_version = "1.2.3";
    b.local.interface->driver_version = "1.3.0";
    b.local.sysctls["net.ipv4.tcp_congestion_control"] = "bbr";
    b.local.cpu_model = "AMD EPYC 7763";
    b.remote.kernel = "6.1.0";  // A knows nothing of its remote: not compared
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "a", "b");
    CHECK(cmp.host_differences ==
          std::vector<std::string>{"local kernel: 6.1.0-13-amd64 vs 6.5.0-1-amd64", "local CPU model: Intel(R) Xeon(R) Gold 6338 vs AMD EPYC 7763",
                                   "local driver version: 1.2.3 vs 1.3.0", "local firmware: 4.20 vs 4.40", "local congestion control: cubic vs bbr"});
    const auto text = nm::render_comparison(cmp, nm::TableFormat::Text);
    CHECK_THAT(text, Catch::Contains("warning: the files' hosts differ: local kernel: 6.1.0-13-amd64 vs 6.5.0-1-amd64"));
    CHECK_THAT(text, Catch::Contains("warning: the files' hosts differ: local congestion control: cubic vs bbr"));
    CHECK(nm::Json::parse(nm::render_comparison(cmp, nm::TableFormat::JsonDocument)).at("host_differences").size() == 5);
    // The CPU mitigations (where both list them) and the nicmatrix build (where both know it).
    a.local.cpu_vulnerabilities = {{"meltdown", "Not affected"}, {"spectre_v2", "Mitigation: Retpolines"}};
    b.local.cpu_vulnerabilities = {{"meltdown", "Not affected"}, {"spectre_v2", "Mitigation: Enhanced IBRS"}, {"gds", "Vulnerable"}};
    a.local.tool = {.version = "0.1.0", .commit = "0ba10a8d8d1e"};
    b.local.tool = {.version = "0.1.0", .commit = "0ba10a8d8d1e-dirty"};
    b.remote.tool = {.version = "0.1.0", .commit = ""};  // A's remote was not read: not compared
    const auto differences = nm::host_differences(a, b);
    REQUIRE(differences.size() == 8);
    CHECK(std::vector<std::string>(differences.begin() + 5, differences.end()) ==
          std::vector<std::string>{"local CPU vulnerability gds: (not listed) vs Vulnerable",
                                   "local CPU vulnerability spectre_v2: Mitigation: Retpolines vs Mitigation: Enhanced IBRS",
                                   "local nicmatrix build: 0.1.0 (0ba10a8d8d1e) vs 0.1.0 (0ba10a8d8d1e-dirty)"});
    b.local.cpu_vulnerabilities.clear();  // B's not read: not compared
    CHECK(nm::host_differences(a, b).size() == 6);
    // The idle policy (where both files read it): driver, governor, states, and the same driver's parameters.
    nm::CpuIdle halting{
        .driver = "haltpoll",
        .governor = "haltpoll",
        .states = {{.name = "POLL", .latency_us = 0, .disabled_cpus = {}}, {.name = "haltpoll idle", .latency_us = 1, .disabled_cpus = {}}},
        .driver_parameters = {{"guest_halt_poll_ns", "0"}}};
    a.local.cpu_idle = halting;
    CHECK(nm::host_differences(a, b).size() == 6);  // B's not read: not compared
    b.local.cpu_idle = halting;
    CHECK(nm::host_differences(a, b).size() == 6);  // the same: nothing to say
    b.local.cpu_idle->driver_parameters["guest_halt_poll_ns"] = "200000";
    b.local.cpu_idle->states[0].disabled_cpus = {0, 1};
    auto idle_differences = nm::host_differences(a, b);
    REQUIRE(idle_differences.size() == 8);
    CHECK(std::vector<std::string>(idle_differences.begin() + 5, idle_differences.begin() + 7) ==
          std::vector<std::string>{"local idle states: POLL (0 us), haltpoll idle (1 us) vs POLL (0 us, disabled on 0-1), haltpoll idle (1 us)",
                                   "local haltpoll parameter guest_halt_poll_ns: 0 vs 200000"});
    b.local.cpu_idle = nm::CpuIdle{.driver = "intel_idle",
                                   .governor = "menu",
                                   .states = {{.name = "C1", .latency_us = std::nullopt, .disabled_cpus = {}}},
                                   .driver_parameters = {{"max_cstate", "9"}}};
    idle_differences = nm::host_differences(a, b);
    REQUIRE(idle_differences.size() == 9);  // another driver's parameters are not compared one by one
    CHECK(std::vector<std::string>(idle_differences.begin() + 5, idle_differences.begin() + 8) ==
          std::vector<std::string>{"local cpuidle driver: haltpoll vs intel_idle", "local cpuidle governor: haltpoll vs menu",
                                   "local idle states: POLL (0 us), haltpoll idle (1 us) vs C1 (latency unknown)"});
    a.local.cpu_idle.reset();
    b.local.cpu_idle.reset();
    // The host's sysctls and kernel command line go through the codec and back.
    const auto back = nm::Json(b.local).get<nm::HostInfo>();
    CHECK(back.sysctls == b.local.sysctls);
    b.local.kernel_cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet";
    CHECK(nm::Json(b.local).get<nm::HostInfo>().kernel_cmdline == b.local.kernel_cmdline);
    CHECK_FALSE(nm::Json(a.remote).contains("sysctls"));
}

TEST_CASE("The matrix notes when the local kernel may hide softirq in the engines' CPU", "[unit]") {
    auto r = results({{"all-on/mtu1500/tcp-p1", {9.3, 9.41, 9.5}}});
    CHECK_THAT(nm::render_matrix(nm::build_matrix(r, "throughput_bps"), nm::TableFormat::Text),
               !Catch::Contains("may include softirq"));  // unknown accounting: no claim
    r.local.cpu_accounting.irq_time = nm::KernelOption::No;
    r.local.cpu_accounting.source = "/proc/config.gz";
    CHECK_THAT(
        nm::render_matrix(nm::build_matrix(r, "throughput_bps"), nm::TableFormat::Text),
        Catch::Contains("engine CPU may include softirq: this kernel does not account IRQ time (CONFIG_IRQ_TIME_ACCOUNTING off, /proc/config.gz)"));
    r.local.cpu_accounting.irq_time = nm::KernelOption::Yes;
    CHECK_THAT(nm::render_matrix(nm::build_matrix(r, "throughput_bps"), nm::TableFormat::Text), !Catch::Contains("may include softirq"));
}

TEST_CASE("The default metric: transactions/s when every cell is a request/response test, throughput otherwise", "[unit]") {
    const auto rr = nm::parse_sweep_config_text(R"({"name": "rr", "offloads": [{"name": "on", "features": {}}], "mtu": [1500],
      "traffic": [{"test": "rr", "protocol": "tcp"}, {"test": "rr", "protocol": "udp"}, {"test": "rr", "connect_per_transaction": true},
                  {"test": "rfc2544", "frames": [64]}]})",
                                                "rr");
    nm::ResultsFile r;
    r.run.config = rr;
    const auto cell_of = [](const nm::CellSpec& spec) {
        nm::CellResult c;
        c.spec = spec;
        return c;
    };
    for (const auto& spec : nm::expand_cells(rr)) r.cells.push_back(cell_of(spec));
    REQUIRE(r.cells.size() == 4);
    CHECK(nm::headline_metric(r.cells[0].spec.traffic.test) == "rr_transactions_per_s");
    CHECK(nm::headline_metric(r.cells[2].spec.traffic.test) == "rr_transactions_per_s");  // CRR
    CHECK(nm::default_metric(r) == "rr_transactions_per_s");                              // the rfc2544 table does not count
    const auto stream = nm::expand_cells(config()).front();
    CHECK(nm::headline_metric(stream.traffic.test) == "throughput_bps");
    r.cells.push_back(cell_of(stream));
    CHECK(nm::default_metric(r) == "throughput_bps");  // one stream cell among them
    CHECK(nm::default_metric(nm::ResultsFile{}) == "throughput_bps");
    r.cells = {r.cells[3]};  // an rfc2544 table alone
    CHECK(nm::default_metric(r) == "throughput_bps");
}
