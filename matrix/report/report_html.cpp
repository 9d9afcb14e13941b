#include "matrix/report/report_html.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "core/base/version.hpp"
#include "matrix/model/comparison_codec.hpp"
#include "matrix/report/frame_table.hpp"
#include "matrix/report/report.hpp"
#include "matrix/report/report_page.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.fff]Z", the form a results file writes.
std::optional<double> utc_seconds(const std::string& iso) {
    std::tm tm{};
    double seconds = 0;
    if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &seconds) != 6)
        return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_sec = 0;
    return static_cast<double>(::timegm(&tm)) + seconds;
}

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// A summary with every figure also in human units, as the text report prints it.
Json summary_json(const std::string& metric, const MetricSummary& s) {
    Json j = s;
    j["median_text"] = format_metric(metric, s.median);
    j["min_text"] = format_metric(metric, s.min);
    j["max_text"] = format_metric(metric, s.max);
    if (s.median_ci_low && s.median_ci_high && s.median_ci_confidence) {
        char conf[32];
        std::snprintf(conf, sizeof conf, "%.3g", *s.median_ci_confidence);
        j["interval_text"] = format_metric(metric, *s.median_ci_low) + " .. " + format_metric(metric, *s.median_ci_high);
        j["interval_note"] = std::string(conf) + "% distribution-free interval of the median over " + std::to_string(s.n) + " repetitions";
    } else {
        j["interval_text"] = nullptr;
        j["interval_note"] = s.n < 2 ? "one repetition: no interval" : "no interval recorded";
    }
    return j;
}

Json row_ratio_json(const CompareRow& r) {
    return Json{{"ratio_text", comparison_ratio_text(r, 3)},
                {"interval_text", comparison_interval_text(r)},
                {"ratio", optional_number(r.ratio)},
                {"ratio_ci_low", optional_number(r.ratio_ci_low)},
                {"ratio_ci_high", optional_number(r.ratio_ci_high)},
                {"ratio_ci_confidence", optional_number(r.ratio_ci_confidence)},
                {"verdict", r.verdict},
                {"mark", comparison_mark(r)},
                {"p_value", optional_number(r.p_value)},
                {"p_adjusted", optional_number(r.p_adjusted)},
                {"equivalence_p_adjusted", optional_number(r.equivalence_p_adjusted)},
                {"why", r.why}};
}

Json matrix_json(const ResultsFile& results, const std::string& metric, const std::optional<Comparison>& against) {
    const MatrixTable t = build_matrix(results, metric);
    std::map<std::string, const CompareRow*> ratio_of;
    if (against) {
        for (const auto& r : against->rows) ratio_of[r.key_b] = &r;
    }
    Json rows = Json::array();
    for (const auto& row : t.rows) {
        Json entries = Json::array();
        for (size_t i = 0; i < row.entries.size(); ++i) {
            const auto& e = row.entries[i];
            Json j{{"present", e.present}, {"key", e.key}, {"mtu", t.mtus[i]}, {"text", matrix_entry_text(e, metric)}};
            if (e.present) {
                j["status"] = status_name(e.status);
                j["note"] = e.note;
                j["precision_met"] = e.precision_met ? Json(*e.precision_met) : Json(nullptr);
                j["disturbed_runs"] = e.disturbed_runs;
                j["value"] = e.value ? summary_json(metric, *e.value) : Json(nullptr);
                j["cpu_sender"] = e.cpu_sender ? summary_json("cpu_sender_pct", *e.cpu_sender) : Json(nullptr);
                j["cpu_receiver"] = e.cpu_receiver ? summary_json("cpu_receiver_pct", *e.cpu_receiver) : Json(nullptr);
                if (const auto it = ratio_of.find(e.key); it != ratio_of.end()) j["against"] = row_ratio_json(*it->second);
            }
            entries.push_back(std::move(j));
        }
        rows.push_back(Json{{"profile", row.profile}, {"traffic", row.traffic}, {"entries", std::move(entries)}});
    }
    return Json{{"metric", metric}, {"mtus", t.mtus}, {"rows", std::move(rows)}, {"notes", matrix_notes(t)}};
}

// Each repetition's figures (run_metrics, the numbers the summaries are of) with their human text.
Json runs_figures(const CellResult& c) {
    Json out = Json::array();
    for (const auto& run : c.runs) {
        Json figures = Json::object();
        for (const auto& [name, value] : run_metrics(run)) figures[name] = Json{{"value", value}, {"text", format_metric(name, value)}};
        out.push_back(std::move(figures));
    }
    return out;
}

Json frame_tables_json(const ResultsFile& results) {
    Json out = Json::array();
    for (const auto& c : results.cells) {
        if (!c.spec.traffic.rfc2544) continue;
        Json j{{"key", c.spec.key}, {"status", status_name(c.status)}, {"error", c.error}, {"rows", Json::array()}, {"notes", Json::array()}};
        if (c.rfc2544) {
            const FrameTable t = build_frame_table(*c.rfc2544);
            for (const auto& r : t.rows) {
                j["rows"].push_back(Json{{"frame", r.frame},
                                         {"line_pct", r.line_pct},
                                         {"fps", r.fps},
                                         {"mbps", r.mbps},
                                         {"cpu", r.cpu},
                                         {"loss", r.loss},
                                         {"trials", r.trials}});
            }
            j["notes"] = t.notes;
        }
        out.push_back(std::move(j));
    }
    return out;
}

Json file_json(const HtmlReportFile& f, const HtmlReportRequest& request) {
    const ResultsFile& r = f.results;
    const Json whole = r;
    std::optional<Comparison> against;
    if (!request.against.empty()) against = compare_to_profile(r, request.metric, request.against, f.label, request.comparison);

    Json statuses = Json::object();
    size_t repetitions = 0;
    for (const auto& c : r.cells) {
        const std::string s = status_name(c.status);
        statuses[s] = statuses.value(s, 0) + 1;
        repetitions += c.runs.size();
    }
    Json header = whole["run"];
    header.erase("config");
    header["tool"] = whole["tool"];
    header["schema"] = r.schema;
    header["cells"] = r.cells.size();
    header["statuses"] = std::move(statuses);
    header["repetitions"] = repetitions;
    const auto t0 = utc_seconds(r.run.started), t1 = utc_seconds(r.run.finished);
    header["duration_s"] = t0 && t1 ? Json(*t1 - *t0) : Json(nullptr);

    const bool ordinary = std::any_of(r.run.config.traffic.begin(), r.run.config.traffic.end(), [](const TrafficEntry& t) { return !t.rfc2544; });
    Json cells = Json::object();
    for (size_t i = 0; i < r.cells.size(); ++i) {
        Json summary = Json::object();
        for (const auto& [metric, s] : r.cells[i].summary) summary[metric] = summary_json(metric, s);
        cells[r.cells[i].spec.key] = Json{{"cell", whole["cells"][i]}, {"runs", runs_figures(r.cells[i])}, {"summary", std::move(summary)}};
    }
    Json j{{"label", f.label},
           {"header", std::move(header)},
           {"hosts", whole["hosts"]},
           {"config", whole["run"]["config"]},
           {"matrix", ordinary || r.cells.empty() ? matrix_json(r, request.metric, against) : Json(nullptr)},
           {"cells", std::move(cells)},
           {"frame_tables", frame_tables_json(r)},
           {"text_report", render_results(r, request.metric, TableFormat::Text)},
           {"against", nullptr}};
    if (against) {
        j["against"] = Json{{"reference", against->reference},
                            {"notes", comparison_notes(*against)},
                            {"only", against->only_b},
                            {"text_report", render_against(*against, TableFormat::Text)}};
    }
    return j;
}

Json comparison_json(const HtmlReportFile& a, const HtmlReportFile& b, const HtmlReportRequest& request) {
    const Comparison cmp = compare_results(a.results, b.results, request.metric, a.label, b.label, request.comparison);
    Json rows = Json::array();
    for (const auto& r : cmp.rows) {
        Json j = row_ratio_json(r);
        j["key_a"] = r.key_a;
        j["key_b"] = r.key_b;
        j["profile"] = r.profile;
        j["traffic"] = r.traffic;
        j["mtu"] = r.mtu;
        j["status_a"] = status_name(r.status_a);
        j["status_b"] = status_name(r.status_b);
        j["a"] = r.a ? summary_json(cmp.metric, *r.a) : Json(nullptr);
        j["b"] = r.b ? summary_json(cmp.metric, *r.b) : Json(nullptr);
        j["precision_met_a"] = r.precision_met_a ? Json(*r.precision_met_a) : Json(nullptr);
        j["precision_met_b"] = r.precision_met_b ? Json(*r.precision_met_b) : Json(nullptr);
        j["disturbed_a"] = r.disturbed_a;
        j["disturbed_b"] = r.disturbed_b;
        rows.push_back(std::move(j));
    }
    return Json{{"metric", cmp.metric},         {"label_a", cmp.label_a},         {"label_b", cmp.label_b},
                {"confidence", cmp.confidence}, {"rows", std::move(rows)},        {"only_a", cmp.only_a},
                {"only_b", cmp.only_b},         {"notes", comparison_notes(cmp)}, {"text_report", render_comparison(cmp, TableFormat::Text)}};
}

// JSON inside <script type="application/json">: "</script>" or "<!--" in a string (a hostname, an error
// message) must not end the element, so every '<' is written as its escape, which JSON.parse reads back.
std::string script_safe(const std::string& json) {
    std::string out;
    out.reserve(json.size());
    for (char c : json) {
        if (c == '<') out += "\\u003c";
        else out += c;
    }
    return out;
}

}  // namespace

Json html_report_data(const HtmlReportFile& a, const HtmlReportFile* b, const HtmlReportRequest& request) {
    Json files = Json::array({file_json(a, request)});
    if (b) files.push_back(file_json(*b, request));
    return Json{{"generator", version_line()},
                {"metric", request.metric},
                {"confidence", request.comparison.confidence},
                {"files", std::move(files)},
                {"compare", b ? comparison_json(a, *b, request) : Json(nullptr)}};
}

std::string render_html_report(const HtmlReportFile& a, const HtmlReportFile* b, const HtmlReportRequest& request) {
    const Json data = html_report_data(a, b, request);
    // The title is set by the script from the data; this one is for a page whose script does not run.
    std::string page =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>nicmatrix report</title>\n<style>\n";
    page += kReportPageCss;
    page +=
        "</style>\n</head>\n<body>\n<noscript>This report draws itself with JavaScript; its data is the JSON in the element "
        "nm-data below.</noscript>\n<div id=\"nm-root\"></div>\n<script type=\"application/json\" id=\"nm-data\">";
    page += script_safe(data.dump());
    page += "</script>\n<script>\n";
    page += kReportPageJs;
    page += "</script>\n</body>\n</html>\n";
    return page;
}

}  // namespace nm
