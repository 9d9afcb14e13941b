#include <catch2/catch.hpp>

#include <string>

#include "core/base/error.hpp"
#include "core/base/json.hpp"
#include "matrix/report/report.hpp"
#include "matrix/report/report_html.hpp"
#include "matrix/results_store.hpp"

namespace {

const std::string kSource = NM_SOURCE_DIR;

// The page's <script type="application/json"> element: what JSON.parse in the page reads.
nm::Json embedded_data(const std::string& page) {
    const std::string open = "<script type=\"application/json\" id=\"nm-data\">";
    const auto begin = page.find(open);
    REQUIRE(begin != std::string::npos);
    const auto end = page.find("</script>", begin);
    REQUIRE(end != std::string::npos);
    return nm::Json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

}  // namespace

TEST_CASE("html report: the page's matrix entries are the text report's, with the intervals of the medians", "[unit]") {
    const auto results = nm::load_results(kSource + "/tests/fixtures/results/fake-lab.json");
    const nm::HtmlReportFile file{results, "fake-lab.json"};
    const auto page = nm::render_html_report(file, nullptr, {});
    const auto data = embedded_data(page);
    CHECK(data == nm::html_report_data(file, nullptr, {}));
    const auto table = nm::build_matrix(results, "throughput_bps");
    const auto& rows = data["files"][0]["matrix"]["rows"];
    REQUIRE(rows.size() == table.rows.size());
    size_t with_interval = 0;
    for (size_t r = 0; r < table.rows.size(); ++r) {
        for (size_t i = 0; i < table.rows[r].entries.size(); ++i) {
            const auto& e = table.rows[r].entries[i];
            const auto& shown = rows[r]["entries"][i];
            CHECK(shown["text"] == nm::matrix_entry_text(e, "throughput_bps"));
            if (!e.present || !e.value) continue;
            CHECK(shown["value"]["median"].get<double>() == e.value->median);
            if (e.value->median_ci_low) {
                ++with_interval;
                CHECK(shown["value"]["interval_text"] == nm::format_metric("throughput_bps", *e.value->median_ci_low) + " .. " +
                                                             nm::format_metric("throughput_bps", *e.value->median_ci_high));
            }
        }
    }
    CHECK(with_interval > 0);
    CHECK(data["compare"].is_null());
    CHECK(data["files"][0]["cells"].size() == results.cells.size());
}

TEST_CASE("html report: a string that closes the script element stays inside the data", "[unit]") {
    auto results = nm::load_results(kSource + "/tests/fixtures/results/fake-lab.json");
    results.local.hostname = "</script><script>alert(1)</script><!--";
    const nm::HtmlReportFile file{results, "x.json"};
    const auto page = nm::render_html_report(file, nullptr, {});
    CHECK(page.find(results.local.hostname) == std::string::npos);
    CHECK(embedded_data(page)["files"][0]["hosts"]["local"]["hostname"] == results.local.hostname);
    // Nothing on the page points elsewhere: no URL but the SVG namespace's name (an identifier, never
    // fetched), and a policy that forbids loading anything.
    std::string rest = page;
    for (size_t at; (at = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;) rest.erase(at, 26);
    CHECK(rest.find("http://") == std::string::npos);
    CHECK(rest.find("https://") == std::string::npos);
    CHECK(page.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("html report: unknown metric or reference profile is refused as report refuses it", "[unit]") {
    const auto results = nm::load_results(kSource + "/tests/fixtures/results/fake-lab.json");
    const nm::HtmlReportFile file{results, "x.json"};
    nm::HtmlReportRequest bad_metric;
    bad_metric.metric = "nope";
    CHECK_THROWS_WITH(nm::html_report_data(file, nullptr, bad_metric), Catch::Contains("--metric nope"));
    nm::HtmlReportRequest bad_profile;
    bad_profile.against = "nope";
    CHECK_THROWS_WITH(nm::html_report_data(file, nullptr, bad_profile), Catch::Contains("--against nope: no such offload profile"));
}

TEST_CASE("html report: two files carry the comparison compare_results makes", "[unit]") {
    const auto a = nm::load_results(kSource + "/results/offload-mtu-lab.json");
    const auto b = nm::load_results(kSource + "/results/example-gro-lab.json");
    const nm::HtmlReportFile fa{a, "a.json"}, fb{b, "b.json"};
    const auto data = nm::html_report_data(fa, &fb, {});
    const auto cmp = nm::compare_results(a, b, "throughput_bps", "a.json", "b.json");
    REQUIRE(data["compare"]["rows"].size() == cmp.rows.size());
    for (size_t i = 0; i < cmp.rows.size(); ++i) {
        CHECK(data["compare"]["rows"][i]["key_a"] == cmp.rows[i].key_a);
        CHECK(data["compare"]["rows"][i]["ratio_text"] == nm::comparison_ratio_text(cmp.rows[i], 3));
    }
    CHECK(data["compare"]["only_b"] == cmp.only_b);
    CHECK(data["files"].size() == 2);
}
