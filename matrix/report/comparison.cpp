#include "matrix/report/comparison.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/error.hpp"
#include "core/base/number_text.hpp"
#include "matrix/metric_text.hpp"
#include "matrix/model/comparison_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/report/report_parts.hpp"
#include "matrix/stats.hpp"

namespace nm {

using namespace report_parts;  // NOLINT(google-build-using-namespace): the report layer's own helpers

std::string comparison_mark(const CompareRow& r) {
    if (r.significant && r.equivalent) return "*=";
    if (r.significant) return "*";
    if (r.equivalent) return "=";
    if (r.p_value) return "≈";
    return "";
}

// B/A with its mark: "*" a difference, "=" within the margin, "*=" both, "≈" neither, none when nothing can
// be claimed.
std::string comparison_ratio_text(const CompareRow& r, int digits) {
    if (!r.ratio) return "";
    // No mark still takes the mark's room, so the figures stay aligned in a right-aligned column.
    const std::string mark = comparison_mark(r);
    return fixed_text(*r.ratio, digits) + " " + (mark.empty() ? std::string(" ") : mark) + (mark == "*=" ? "" : " ");
}

std::string comparison_interval_text(const CompareRow& r) {
    if (r.p_value && r.ratio_ci_low && r.ratio_ci_high) {
        return fixed_text(*r.ratio_ci_low, 3) + ".." + fixed_text(*r.ratio_ci_high, 3);
    }
    return r.why;
}

// The notes every comparison carries: what the ratio and its interval are, the marks, and how many marks
// chance alone would give.
std::vector<std::string> comparison_notes(const Comparison& cmp) {
    std::vector<std::string> notes;
    const std::string conf = number_text(cmp.confidence) + "%";
    notes.push_back("B/A = median B / median A of " + cmp.metric + "; interval: the " + conf +
                    " Hodges-Lehmann/Mann-Whitney interval of B/A (exact, distribution-free, on log values; it assumes B is A scaled)");
    const double alpha = 1 - cmp.confidence / 100;
    const std::string alpha_text = number_text(alpha);
    const std::string family =
        cmp.adjustment == PAdjustment::None ? std::string("not adjusted for the number of cells")
        : cmp.tested_cells == 0
            ? "to be adjusted by " + adjustment_description(cmp.adjustment) + " (no cell had enough repetitions)"
            : "adjusted by " + adjustment_description(cmp.adjustment) + " over the " + std::to_string(cmp.tested_cells) + " cells tested";
    size_t raw = 0;
    for (const auto& r : cmp.rows) raw += r.verdict_unadjusted == RatioVerdict::Significant ? 1 : 0;
    std::string star =
        "* = a difference: the cell's exact Mann-Whitney p-value (the test its interval inverts), " + family + ", is at most " + alpha_text;
    if (cmp.adjustment != PAdjustment::None) star += " (each cell on its own: " + std::to_string(raw) + " marked)";
    notes.push_back(star + "; ≈ = no difference shown; no mark = too few repetitions to claim anything at " + conf + " (each side needs at least " +
                    std::to_string(repetitions_for_ratio(cmp.confidence)) + ")");
    if (cmp.margin_pct) {
        const double m = *cmp.margin_pct / 100;
        notes.push_back("= = the same within ±" + number_text(*cmp.margin_pct) + "%: two one-sided Mann-Whitney tests that B/A lies inside [" +
                        fixed_text(1 - m, 3) + ", " + fixed_text(1 + m, 3) + "] (each at " + alpha_text + ": the " + number_text(100 - 200 * alpha) +
                        "% interval inside the margin), " + family + "; *= = a difference smaller than the margin");
    }
    if (cmp.adjustment == PAdjustment::None && cmp.tested_cells >= 2) {
        notes.push_back(std::to_string(cmp.tested_cells) + " cells tested: even if nothing differed, about " +
                        fixed_text(static_cast<double>(cmp.tested_cells) * alpha, 1) + " of them would be marked * by chance");
    }
    if (cmp.adjustment == PAdjustment::Holm && cmp.tested_cells >= 2) {
        // With few repetitions the smallest p-value there can be is 2 / C(m + n, m): Holm's first step needs alpha / N.
        size_t unreachable = 0;
        for (const auto& r : cmp.rows) {
            if (!r.p_value || !r.a || !r.b) continue;
            double arrangements = 1;
            for (size_t i = 1; i <= r.a->n; ++i) arrangements = arrangements * static_cast<double>(r.b->n + i) / static_cast<double>(i);
            if (2 / arrangements > alpha / static_cast<double>(cmp.tested_cells)) ++unreachable;
        }
        if (unreachable > 0) {
            notes.push_back(std::to_string(unreachable) + " of the " + std::to_string(cmp.tested_cells) +
                            " cells have too few repetitions to be marked * under Holm whatever their figures (the smallest p-value m+n runs allow, "
                            "2/C(m+n, m), is above " +
                            alpha_text + "/" + std::to_string(cmp.tested_cells) + "); --adjust bh asks less, or more repetitions");
        }
    }
    for (const auto& d : cmp.host_differences) notes.push_back("warning: the files' hosts differ: " + d);
    return notes;
}

namespace {

CompareRow make_row(const CellResult& ca, const CellResult& cb, const std::string& metric, const ComparisonOptions& options) {
    CompareRow row;
    row.profile = ca.spec.offloads;
    row.traffic = ca.spec.traffic.name;
    row.mtu = ca.spec.mtu;
    row.key_a = ca.spec.key;
    row.key_b = cb.spec.key;
    row.features_requested = cb.spec.features_requested;
    row.test = cb.spec.traffic;
    row.status_a = ca.status;
    row.status_b = cb.status;
    if (ca.status == CellStatus::Ok) row.a = summary_of(ca, metric);
    if (cb.status == CellStatus::Ok) row.b = summary_of(cb, metric);
    row.precision_met_a = ca.precision_met;
    row.precision_met_b = cb.precision_met;
    row.disturbed_a = disturbed_runs(ca);
    row.disturbed_b = disturbed_runs(cb);
    if (row.a && row.b) {
        const RatioEstimate e =
            ratio_interval(metric_values(ca.runs, metric), metric_values(cb.runs, metric), options.confidence, options.margin_pct);
        row.ratio = e.ratio;
        row.ratio_ci_low = e.ci_low;
        row.ratio_ci_high = e.ci_high;
        row.ratio_ci_confidence = e.ci_confidence;
        row.verdict = e.verdict;
        row.verdict_unadjusted = e.verdict;
        row.why = e.why;
        if (e.verdict == RatioVerdict::Significant || e.verdict == RatioVerdict::NotSignificant) {
            row.p_value = e.p_value;
            row.equivalence_p_value = e.equivalence_p_value;
        }
    } else {
        row.why = "no figures on a side";
    }
    return row;
}

// The verdicts of a whole comparison: the tested rows' p-values adjusted together (one family for the
// difference, one for the equivalence), each row judged by its adjusted p-values at alpha.
void judge_rows(Comparison& cmp) {
    const double alpha = 1 - cmp.confidence / 100 + 1e-12;
    std::vector<CompareRow*> tested;
    for (auto& r : cmp.rows) {
        if (r.p_value) tested.push_back(&r);
    }
    cmp.tested_cells = tested.size();
    std::vector<double> p, q;
    for (const auto* r : tested) {
        p.push_back(*r->p_value);
        if (r->equivalence_p_value) q.push_back(*r->equivalence_p_value);
    }
    p = adjust_p_values(p, cmp.adjustment);
    q = adjust_p_values(q, cmp.adjustment);
    const bool with_margin = q.size() == tested.size() && cmp.margin_pct;
    for (size_t i = 0; i < tested.size(); ++i) {
        CompareRow& r = *tested[i];
        r.p_adjusted = p[i];
        r.significant = p[i] <= alpha;
        if (with_margin) {
            r.equivalence_p_adjusted = q[i];
            r.equivalent = q[i] <= alpha;
        }
        r.verdict = r.significant ? RatioVerdict::Significant : r.equivalent ? RatioVerdict::Equivalent : RatioVerdict::NotSignificant;
    }
}

// Matching key of a cell across files: what was asked of the device and the traffic, not the names.
std::string settings_key(const CellResult& c) {
    Json test = c.spec.traffic;
    test.erase("name");
    // Tuning values match by their names (the labels a user gave them), like profiles do by features.
    return Json{{"features", c.spec.features_requested}, {"mtu", c.spec.mtu}, {"test", test}, {"axes", c.spec.axes}}.dump();
}

// A comparison's heading: what is compared, under which labels, and how its verdicts are reached.
Comparison empty_comparison(const std::string& metric, const std::string& label_a, const std::string& label_b, const ComparisonOptions& options) {
    Comparison cmp;
    cmp.metric = metric;
    cmp.label_a = label_a;
    cmp.label_b = label_b;
    cmp.confidence = options.confidence;
    cmp.adjustment = options.adjustment;
    cmp.margin_pct = options.margin_pct;
    return cmp;
}

}  // namespace

Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric, const std::string& label_a,
                           const std::string& label_b, const ComparisonOptions& options) {
    require_metric({&a, &b}, metric);
    Comparison cmp = empty_comparison(metric, label_a, label_b, options);
    std::map<std::string, const CellResult*> in_b;
    for (const auto& c : b.cells) in_b[settings_key(c)] = &c;
    std::set<std::string> matched_b;
    for (const auto& ca : a.cells) {
        const auto k = settings_key(ca);
        const auto it = in_b.find(k);
        if (it == in_b.end()) {
            cmp.only_a.push_back(ca.spec.key);
            continue;
        }
        matched_b.insert(k);
        cmp.rows.push_back(make_row(ca, *it->second, metric, options));
    }
    for (const auto& cb : b.cells) {
        if (!matched_b.count(settings_key(cb))) cmp.only_b.push_back(cb.spec.key);
    }
    judge_rows(cmp);
    cmp.host_differences = host_differences(a, b);
    return cmp;
}

Comparison compare_to_profile(const ResultsFile& results, const std::string& metric, const std::string& reference, const std::string& label,
                              const ComparisonOptions& options) {
    require_metric({&results}, metric);
    const auto& profiles = results.run.config.offloads;
    if (std::none_of(profiles.begin(), profiles.end(), [&](const OffloadProfile& p) { return p.name == reference; })) {
        std::string list;
        for (const auto& p : profiles) list += (list.empty() ? "" : ", ") + p.name;
        throw usage_error("--against " + reference + ": no such offload profile; the file has " + list);
    }
    Comparison cmp = empty_comparison(metric, reference, label, options);
    cmp.reference = reference;
    std::map<std::string, const CellResult*> by_key;
    for (const auto& c : results.cells) by_key[c.spec.key] = &c;
    for (const auto& c : results.cells) {
        if (c.spec.offloads == reference) continue;
        const auto it = by_key.find(reference + "/mtu" + std::to_string(c.spec.mtu) + "/" + c.spec.traffic.name);
        if (it == by_key.end()) {
            cmp.only_b.push_back(c.spec.key);
            continue;
        }
        CompareRow row = make_row(*it->second, c, metric, options);
        row.profile = c.spec.offloads;
        cmp.rows.push_back(std::move(row));
    }
    judge_rows(cmp);
    return cmp;
}

std::string render_comparison(const Comparison& cmp, TableFormat format) {
    if (format == TableFormat::JsonDocument) return Json(cmp).dump(1) + "\n";
    Grid g;
    const auto value = [&](const std::optional<MetricSummary>& s, CellStatus st) {
        if (st != CellStatus::Ok) return status_name(st);
        if (!s) return std::string("-");
        return format == TableFormat::Csv ? Json(s->median).dump() : format_metric(cmp.metric, s->median);
    };
    if (format == TableFormat::Csv) {
        g.header = {"profile",
                    "traffic",
                    "mtu",
                    "key_a",
                    "key_b",
                    "a",
                    "b",
                    "ratio",
                    "significant",
                    "ratio_ci_low",
                    "ratio_ci_high",
                    "ratio_ci_confidence",
                    "verdict",
                    "p_value",
                    "p_adjusted",
                    "equivalent",
                    "equivalence_p_value",
                    "equivalence_p_adjusted",
                    "verdict_unadjusted"};
        for (const auto& r : cmp.rows) {
            g.rows.push_back({r.profile, r.traffic, std::to_string(r.mtu), r.key_a, r.key_b, value(r.a, r.status_a), value(r.b, r.status_b),
                              r.ratio ? fixed_text(*r.ratio, 4) : "", r.significant ? "true" : "false", number_or_empty(r.ratio_ci_low),
                              number_or_empty(r.ratio_ci_high), number_or_empty(r.ratio_ci_confidence), Json(r.verdict).get<std::string>(),
                              number_or_empty(r.p_value), number_or_empty(r.p_adjusted), r.equivalent ? "true" : "false",
                              number_or_empty(r.equivalence_p_value), number_or_empty(r.equivalence_p_adjusted),
                              Json(r.verdict_unadjusted).get<std::string>()});
        }
        const std::vector<std::string> blank(12, "");
        for (const auto& k : cmp.only_a) {
            g.rows.push_back({"", "", "", k, "", "", "", "", "only in A"});
            g.rows.back().insert(g.rows.back().end(), blank.begin(), blank.end());
        }
        for (const auto& k : cmp.only_b) {
            g.rows.push_back({"", "", "", "", k, "", "", "", "only in B"});
            g.rows.back().insert(g.rows.back().end(), blank.begin(), blank.end());
        }
        return render_grid(g, format);
    }
    g.header = {"cell", "A: " + cmp.label_a, "B: " + cmp.label_b, "B/A", number_text(cmp.confidence) + "% interval of B/A"};
    bool marked = false;
    for (const auto& r : cmp.rows) {
        const std::string ma = r.a ? marks(r.precision_met_a, r.disturbed_a) : "";
        const std::string mb = r.b ? marks(r.precision_met_b, r.disturbed_b) : "";
        marked = marked || !ma.empty() || !mb.empty();
        g.rows.push_back(
            {r.key_a, value(r.a, r.status_a) + ma, value(r.b, r.status_b) + mb, comparison_ratio_text(r, 2), comparison_interval_text(r)});
    }
    for (auto& n : comparison_notes(cmp)) g.notes.push_back(std::move(n));
    if (marked) g.notes.push_back("? after a figure: its cell's asked precision was not met; ! : it was measured under interference");
    for (const auto& k : cmp.only_a) g.notes.push_back("only in A: " + k);
    for (const auto& k : cmp.only_b) g.notes.push_back("only in B: " + k);
    return render_grid(g, format);
}

std::string render_against(const Comparison& cmp, TableFormat format) {
    if (format == TableFormat::JsonDocument || format == TableFormat::Csv) return render_comparison(cmp, format);
    // The rows of the comparison pivoted: rows profile x traffic, columns MTU, in the file's order.
    std::vector<uint32_t> mtus;
    std::vector<std::pair<std::string, std::string>> lines;
    for (const auto& r : cmp.rows) {
        if (std::find(mtus.begin(), mtus.end(), r.mtu) == mtus.end()) mtus.push_back(r.mtu);
        const std::pair<std::string, std::string> line{r.profile, r.traffic};
        if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
    }
    std::sort(mtus.begin(), mtus.end());
    Grid g;
    g.header = {"offloads / traffic"};
    for (uint32_t mtu : mtus) g.header.push_back("MTU " + std::to_string(mtu));
    for (const auto& pair : lines) {
        const std::string& profile = pair.first;  // not a structured binding: clang 14 cannot capture one
        const std::string& traffic = pair.second;
        std::vector<std::string> line{profile + " / " + traffic};
        for (uint32_t mtu : mtus) {
            const auto it = std::find_if(cmp.rows.begin(), cmp.rows.end(),
                                         [&](const CompareRow& r) { return r.profile == profile && r.traffic == traffic && r.mtu == mtu; });
            if (it == cmp.rows.end()) {
                line.push_back("-");
            } else if (it->status_b != CellStatus::Ok) {
                line.push_back(status_name(it->status_b));
            } else if (it->status_a != CellStatus::Ok) {
                line.push_back(cmp.reference + ": " + status_name(it->status_a));
            } else {
                std::string text = comparison_ratio_text(*it, 2);
                if (it->p_value) {
                    while (!text.empty() && text.back() == ' ') text.pop_back();
                    text += " [" + comparison_interval_text(*it) + "]";
                }
                line.push_back(text.empty() ? "-" : text);
            }
        }
        g.rows.push_back(std::move(line));
    }
    g.notes.push_back("each cell against " + cmp.reference + " at the same MTU and traffic (A = " + cmp.reference + ", B = the cell)");
    for (auto& n : comparison_notes(cmp)) g.notes.push_back(std::move(n));
    for (const auto& r : cmp.rows) {
        if (!r.p_value) {
            if (r.status_a == CellStatus::Ok && r.status_b == CellStatus::Ok) g.notes.push_back(r.key_b + ": " + r.why);
        }
    }
    for (const auto& k : cmp.only_b) g.notes.push_back(k + ": no " + cmp.reference + " cell at its MTU and traffic");
    return render_grid(g, format);
}

}  // namespace nm
