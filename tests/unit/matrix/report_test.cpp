#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/report.hpp"
#include "matrix/stats.hpp"

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
    CHECK_THAT(nm::render_matrix(table, nm::TableFormat::Markdown), Catch::StartsWith(
          "| offloads / traffic | MTU 1500 | MTU 9000 |\n| --- | ---: | ---: |\n| all-on / tcp-p1 | 9.41 Gbit/s (95/70%) | 20.1 Gbit/s (95/70%) |\n"));
    const auto csv = nm::render_matrix(table, nm::TableFormat::Csv);
    CHECK_THAT(csv, Catch::StartsWith("profile,traffic,mtu,key,status,throughput_bps_median,throughput_bps_mean,throughput_bps_ci95,n,cpu_sender_pct_median,cpu_receiver_pct_median\n"
                                      "all-on,tcp-p1,1500,all-on/mtu1500/tcp-p1,ok,9410000000.0,"));
    CHECK_THAT(csv, Catch::Contains("all-off,tcp-p1,9000,all-off/mtu9000/tcp-p1,path_mtu_blackhole,,,,0,,\n"));
}

TEST_CASE("report --metric of a metric no cell has lists the metrics there are", "[unit]") {
    const auto r = results({{"all-on/mtu1500/tcp-p1", {1}}});
    CHECK_THROWS_WITH(nm::build_matrix(r, "goodput"), Catch::StartsWith("--metric goodput: no cell has this metric; the file has cpu_receiver_pct, cpu_sender_pct,"));
    CHECK_THROWS_AS(nm::parse_table_format("xml"), nm::Error);
    CHECK(nm::build_matrix(r, "cpu_sender_pct").rows.size() == 4);
}

TEST_CASE("compare matches cells by settings, gives B/A, flags differences beyond the spread, lists unmatched cells", "[unit]") {
    const auto a = results({{"all-on/mtu1500/tcp-p1", {9.0, 9.2, 9.4}},
                            {"all-on/mtu1500/tcp-p10", {10.0, 11.0, 12.0}},
                            {"all-off/mtu1500/tcp-p1", {1.0, 1.1}}});
    auto b = results({{"all-on/mtu1500/tcp-p1", {4.5, 4.6, 4.7}},
                      {"all-on/mtu1500/tcp-p10", {10.5, 11.0, 11.5}},
                      {"all-on/mtu9000/tcp-p1", {20}}});
    // B named its profile differently: matching is by the requested settings, not by names.
    for (auto& c : b.cells) c.spec.offloads = "everything";
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "88e8053.json", "mcp51.json");
    REQUIRE(cmp.rows.size() == 2);
    CHECK(cmp.rows[0].key_a == "all-on/mtu1500/tcp-p1");
    CHECK(*cmp.rows[0].ratio == Catch::Detail::Approx(0.5));
    CHECK(cmp.rows[0].significant);
    CHECK(*cmp.rows[1].ratio == Catch::Detail::Approx(1.0));
    CHECK_FALSE(cmp.rows[1].significant);
    CHECK(cmp.only_a == std::vector<std::string>{"all-off/mtu1500/tcp-p1"});
    CHECK(cmp.only_b == std::vector<std::string>{"all-on/mtu9000/tcp-p1"});
    CHECK(nm::render_comparison(cmp, nm::TableFormat::Text) ==
          "cell                    A: 88e8053.json  B: mcp51.json   B/A  beyond spread\n"
          "---------------------------------------------------------------------------\n"
          "all-on/mtu1500/tcp-p1       9.20 Gbit/s    4.60 Gbit/s  0.50              *\n"
          "all-on/mtu1500/tcp-p10      11.0 Gbit/s    11.0 Gbit/s  1.00\n"
          "\n"
          "  median throughput_bps; * = the difference is larger than the repetitions' spread (95% CI, or min..max)\n"
          "  only in A: all-off/mtu1500/tcp-p1\n"
          "  only in B: all-on/mtu9000/tcp-p1\n");
    const auto csv = nm::render_comparison(cmp, nm::TableFormat::Csv);
    CHECK_THAT(csv, Catch::Contains("all-on,tcp-p1,1500,all-on/mtu1500/tcp-p1,all-on/mtu1500/tcp-p1,9200000000.0,4600000000.0,0.5000,true\n"));
    CHECK_THAT(csv, Catch::Contains(",,,all-off/mtu1500/tcp-p1,,,,,only in A\n"));
}

TEST_CASE("format_metric puts human units on bits/s, packets/s and percentages", "[unit]") {
    CHECK(nm::format_metric("throughput_bps", 9.41e9) == "9.41 Gbit/s");
    CHECK(nm::format_metric("throughput_bps", 218e3) == "218 kbit/s");
    CHECK(nm::format_metric("packets_per_s", 812345) == "812 kpps");
    CHECK(nm::format_metric("cpu_sender_pct", 38.25) == "38.2%");
    CHECK(nm::format_metric("tcp_retransmits", 3) == "3.00");
}
