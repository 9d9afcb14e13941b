#include "matrix/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/number_text.hpp"
#include "core/base/version.hpp"
#include "core/host/cpu_affinity.hpp"
#include "matrix/config.hpp"
#include "matrix/modes.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

// A table of strings: the one shape every output is rendered from.
struct Grid {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes;
};

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Columns are aligned by what a terminal shows: UTF-8 continuation bytes ("≈" is three bytes) take no room.
size_t display_width(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string render_grid(const Grid& g, TableFormat format) {
    std::string out;
    if (format == TableFormat::Csv) {
        const auto line = [&](const std::vector<std::string>& row) {
            for (size_t i = 0; i < row.size(); ++i) {
                if (i) out += ',';
                out += csv_field(row[i]);
            }
            out += '\n';
        };
        line(g.header);
        for (const auto& row : g.rows) line(row);
        return out;
    }
    if (format == TableFormat::Markdown) {
        const auto line = [&](const std::vector<std::string>& row) {
            out += "|";
            for (const auto& c : row) out += " " + c + " |";
            out += '\n';
        };
        line(g.header);
        out += "|";
        for (size_t i = 0; i < g.header.size(); ++i) out += i == 0 ? " --- |" : " ---: |";
        out += '\n';
        for (const auto& row : g.rows) line(row);
        if (!g.notes.empty()) out += '\n';
        for (const auto& n : g.notes) out += "- " + n + '\n';
        return out;
    }
    std::vector<size_t> width(g.header.size(), 0);
    const auto measure = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
    };
    measure(g.header);
    for (const auto& row : g.rows) measure(row);
    const auto line = [&](const std::vector<std::string>& row) {
        std::string text;
        for (size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - display_width(row[i]), ' ');
            // First column left-aligned (labels), the others right-aligned (numbers).
            text += (i ? "  " : "") + (i == 0 ? row[i] + pad : pad + row[i]);
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out += text + '\n';
    };
    line(g.header);
    size_t total = 0;
    for (size_t w : width) total += w + 2;
    out += std::string(total > 2 ? total - 2 : 0, '-') + '\n';
    for (const auto& row : g.rows) line(row);
    if (!g.notes.empty()) out += '\n';
    for (const auto& n : g.notes) out += "  " + n + '\n';
    return out;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// Three significant digits, as people read throughput.
std::string sig3(double v) {
    const double a = std::fabs(v);
    return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::optional<MetricSummary> summary_of(const CellResult& c, const std::string& metric) {
    const auto it = c.summary.find(metric);
    if (it == c.summary.end() || it->second.n == 0) return std::nullopt;
    return it->second;
}

void require_metric(const std::vector<const ResultsFile*>& files, const std::string& metric) {
    std::set<std::string> known;
    for (const auto* f : files) {
        for (const auto& c : f->cells) {
            for (const auto& [name, s] : c.summary) known.insert(name);
        }
    }
    if (known.empty() || known.count(metric)) return;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw usage_error("--metric " + metric + ": no cell has this metric; the file has " + list);
}

// The marks of a figure: "?" the asked precision was not met, "!" measured under interference.
std::string marks(const std::optional<bool>& precision_met, size_t disturbed_runs) {
    std::string m;
    if (precision_met && !*precision_met) m += "?";
    if (disturbed_runs > 0) m += "!";
    return m.empty() ? m : " " + m;
}

size_t disturbed_runs(const CellResult& c) {
    return static_cast<size_t>(std::count_if(c.runs.begin(), c.runs.end(), [](const RunResult& run) { return run.disturbed; }));
}

bool shows_cpu(const std::string& metric) { return metric != "cpu_sender_pct" && metric != "cpu_receiver_pct"; }

// "8.20 | 13.1 Gbit/s (4:3)": each mode's median, the unit once, the runs of each.
std::string modes_text(const CellModes& cm, const std::string& metric) {
    std::string text, counts;
    const auto unit_of = [](const std::string& figure) {
        const auto space = figure.find(' ');
        return space == std::string::npos ? std::string() : figure.substr(space);
    };
    const std::string last_unit = unit_of(format_metric(metric, cm.modes.back().summary.median));
    for (size_t i = 0; i < cm.modes.size(); ++i) {
        std::string figure = format_metric(metric, cm.modes[i].summary.median);
        // The unit once, at the end, when every mode has the same ("8.20 | 13.1 Gbit/s"); "644 Mbit/s | 1.69 Gbit/s" otherwise.
        const std::string unit = unit_of(figure);
        if (i + 1 < cm.modes.size() && !unit.empty() && unit == last_unit) figure.resize(figure.size() - unit.size());
        text += (i ? " | " : "") + figure;
        counts += (i ? ":" : "") + std::to_string(cm.modes[i].runs.size());
    }
    return text + " (" + counts + ")";
}

std::string entry_text(const MatrixEntry& e, const std::string& metric, bool with_cpu) {
    if (!e.present) return "-";
    if (e.status != CellStatus::Ok || !e.value) return status_name(e.status);
    std::string text = e.modes ? modes_text(*e.modes, metric) : format_metric(metric, e.value->median);
    if (with_cpu && e.cpu_sender && e.cpu_receiver) {
        text += " (" + fixed(e.cpu_sender->median, 0) + "/" + fixed(e.cpu_receiver->median, 0) + "%)";
    }
    return text + marks(e.precision_met, e.disturbed_runs);
}

std::string number_or_empty(const std::optional<double>& v) { return v ? Json(*v).dump() : ""; }

}  // namespace

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
    return fixed(*r.ratio, digits) + " " + (mark.empty() ? std::string(" ") : mark) + (mark == "*=" ? "" : " ");
}

std::string comparison_interval_text(const CompareRow& r) {
    if (r.p_value && r.ratio_ci_low && r.ratio_ci_high) {
        return fixed(*r.ratio_ci_low, 3) + ".." + fixed(*r.ratio_ci_high, 3);
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
    const std::string family = cmp.adjustment == PAdjustment::None ? std::string("not adjusted for the number of cells")
                               : cmp.tested_cells == 0
                                   ? "to be adjusted by " + adjustment_description(cmp.adjustment) + " (no cell had enough repetitions)"
                                   : "adjusted by " + adjustment_description(cmp.adjustment) + " over the " + std::to_string(cmp.tested_cells) + " cells tested";
    size_t raw = 0;
    for (const auto& r : cmp.rows) raw += r.verdict_unadjusted == RatioVerdict::Significant ? 1 : 0;
    std::string star = "* = a difference: the cell's exact Mann-Whitney p-value (the test its interval inverts), " + family + ", is at most " + alpha_text;
    if (cmp.adjustment != PAdjustment::None) star += " (each cell on its own: " + std::to_string(raw) + " marked)";
    notes.push_back(star + "; ≈ = no difference shown; no mark = too few repetitions to claim anything at " + conf + " (each side needs at least " +
                    std::to_string(repetitions_for_ratio(cmp.confidence)) + ")");
    if (cmp.margin_pct) {
        const double m = *cmp.margin_pct / 100;
        notes.push_back("= = the same within ±" + number_text(*cmp.margin_pct) + "%: two one-sided Mann-Whitney tests that B/A lies inside [" + fixed(1 - m, 3) +
                        ", " + fixed(1 + m, 3) + "] (each at " + alpha_text + ": the " + number_text(100 - 200 * alpha) +
                        "% interval inside the margin), " + family + "; *= = a difference smaller than the margin");
    }
    if (cmp.adjustment == PAdjustment::None && cmp.tested_cells >= 2) {
        notes.push_back(std::to_string(cmp.tested_cells) + " cells tested: even if nothing differed, about " +
                        fixed(static_cast<double>(cmp.tested_cells) * alpha, 1) + " of them would be marked * by chance");
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
                            " cells have too few repetitions to be marked * under Holm whatever their figures (the smallest p-value m+n runs allow, 2/C(m+n, m), is above " +
                            alpha_text + "/" + std::to_string(cmp.tested_cells) + "); --adjust bh asks less, or more repetitions");
        }
    }
    for (const auto& d : cmp.host_differences) notes.push_back("warning: the files' hosts differ: " + d);
    return notes;
}

std::string default_metric(const ResultsFile& results) {
    bool any = false;
    for (const auto& cell : results.cells) {
        if (cell.spec.traffic.rfc2544) continue;
        if (cell.spec.traffic.test.pattern == TrafficPattern::Stream) return "throughput_bps";
        any = true;
    }
    return any ? "rr_transactions_per_s" : "throughput_bps";
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
        const RatioEstimate e = ratio_interval(metric_values(ca.runs, metric), metric_values(cb.runs, metric), options.confidence, options.margin_pct);
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

}  // namespace

std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<std::string>& notes, TableFormat format) {
    return render_grid(Grid{header, rows, notes}, format);
}

TableFormat parse_table_format(const std::string& name) {
    if (name == "table" || name == "text") return TableFormat::Text;
    if (name == "md" || name == "markdown") return TableFormat::Markdown;
    if (name == "csv") return TableFormat::Csv;
    if (name == "json") return TableFormat::JsonDocument;
    throw usage_error("--format: expected table, md, csv or json, got \"" + name + "\"");
}

std::string status_name(CellStatus status) { return Json(status).get<std::string>(); }

std::string format_metric(const std::string& metric, double value) {
    const auto ends_with = [&](const std::string& suffix) {
        return metric.size() >= suffix.size() && metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("_bps")) {
        if (std::fabs(value) >= 1e9) return sig3(value / 1e9) + " Gbit/s";
        if (std::fabs(value) >= 1e6) return sig3(value / 1e6) + " Mbit/s";
        if (std::fabs(value) >= 1e3) return sig3(value / 1e3) + " kbit/s";
        return sig3(value) + " bit/s";
    }
    if (ends_with("transactions_per_s")) {
        if (std::fabs(value) >= 1e3) return sig3(value / 1e3) + "k trans/s";
        return sig3(value) + " trans/s";
    }
    if (ends_with("_us") || ends_with("_us_per_transaction_sender") || ends_with("_us_per_transaction_receiver")) {
        return sig3(value) + " us";
    }
    if (ends_with("_per_s")) {
        if (std::fabs(value) >= 1e6) return sig3(value / 1e6) + " Mpps";
        if (std::fabs(value) >= 1e3) return sig3(value / 1e3) + " kpps";
        return sig3(value) + " pps";
    }
    if (ends_with("_pct") || metric.rfind("cpu:", 0) == 0) return fixed(value, 1) + "%";
    return sig3(value);
}

MatrixTable build_matrix(const ResultsFile& results, const std::string& metric) {
    require_metric({&results}, metric);
    const auto& config = results.run.config;
    MatrixTable t;
    t.metric = metric;
    t.mtus = config.mtu;
    t.precision = config.precision;
    if (t.precision) {
        // The metric asked, or with none each cell's headline figure; the note names it.
        std::set<std::string> judged;
        for (const auto& c : results.cells) {
            if (!c.spec.traffic.rfc2544) judged.insert(precision_metric(*t.precision, c.spec.traffic.test));
        }
        t.judged_by = judged.size() > 1 ? "throughput_bps (rr_transactions_per_s of a request/response cell)"
                      : judged.empty() ? precision_metric(*t.precision, TestSpec{}) : *judged.begin();
    }
    t.interference = config.interference;
    t.cpu_accounting = results.local.cpu_accounting;
    std::map<std::string, const CellResult*> by_key;
    for (const auto& c : results.cells) by_key[c.spec.key] = &c;
    // The tuning axes' value combinations, in the order expand_cells nests them (between MTU and traffic).
    std::vector<std::map<std::string, std::string>> combos = {{}};
    for (const char* axis : kTuningAxes) {
        const auto it = config.axes.find(axis);
        if (it == config.axes.end() || it->second.empty()) continue;
        std::vector<std::map<std::string, std::string>> next;
        for (const auto& c : combos) {
            for (const auto& v : it->second) {
                auto more = c;
                more[axis] = v.name;
                next.push_back(std::move(more));
            }
        }
        combos = std::move(next);
    }
    for (const auto& p : config.offloads) {
        for (const auto& combo : combos) {
            std::string middle;
            for (const char* axis : kTuningAxes) {
                if (const auto a = combo.find(axis); a != combo.end()) middle += a->second + "/";
            }
            for (const auto& tr : config.traffic) {
                MatrixTable::Row row{p.name, tr.name, {}, combo};
                bool any = false;
                for (uint32_t mtu : config.mtu) {
                    MatrixEntry e;
                    e.key = p.name + "/mtu" + std::to_string(mtu) + "/" + middle + tr.name;
                    if (const auto it = by_key.find(e.key); it != by_key.end()) {
                        const auto& c = *it->second;
                        e.present = true;
                        any = true;
                        e.status = c.status;
                        e.value = summary_of(c, metric);
                        e.cpu_sender = summary_of(c, "cpu_sender_pct");
                        e.cpu_receiver = summary_of(c, "cpu_receiver_pct");
                        e.precision_met = c.precision_met;
                        e.disturbed_runs = disturbed_runs(c);
                        if (c.status == CellStatus::Ok && !c.spec.traffic.rfc2544) {
                            // The recorded modes when they are of this metric, else found the same way now.
                            if (c.modes && c.modes->metric == metric) e.modes = c.modes;
                            else e.modes = cell_modes(c.runs, metric, t.precision ? t.precision->confidence : 95, std::nullopt);
                        }
                        e.note = c.status == CellStatus::Duplicate ? "same effective settings as " + c.duplicate_of : c.error;
                    }
                    row.entries.push_back(std::move(e));
                }
                // Rows wholly excluded by the config's rules are not part of the matrix.
                const bool excluded = std::all_of(config.mtu.begin(), config.mtu.end(), [&](uint32_t mtu) {
                    CellSpec probe;
                    probe.offloads = p.name;
                    probe.mtu = mtu;
                    probe.traffic = tr;
                    probe.axes = combo;
                    return std::any_of(config.exclude.begin(), config.exclude.end(), [&](const ExcludeRule& r) { return excludes(r, probe); });
                });
                if (any || !excluded) t.rows.push_back(std::move(row));
            }
        }
    }
    return t;
}

std::string matrix_entry_text(const MatrixEntry& entry, const std::string& metric) { return entry_text(entry, metric, shows_cpu(metric)); }

std::vector<std::string> matrix_notes(const MatrixTable& table) {
    size_t measured = 0, imprecise = 0, disturbed = 0;
    for (const auto& row : table.rows) {
        for (const auto& e : row.entries) {
            if (!e.present || e.status != CellStatus::Ok || !e.value) continue;
            ++measured;
            imprecise += e.precision_met && !*e.precision_met ? 1 : 0;
            disturbed += e.disturbed_runs > 0 ? 1 : 0;
        }
    }
    std::vector<std::string> head{std::string("median ") + table.metric + (shows_cpu(table.metric) ? " (sender/receiver engine CPU, % of one core)" : "") + "; - = not run"};
    if (table.precision) {
        const auto& p = *table.precision;
        head.push_back("? = desired precision not achieved (the " + number_text(p.confidence) + "% interval of the median " + table.judged_by + " within ±" +
                       number_text(p.ci_pct) + "%, in " + std::to_string(p.max_repetitions) + " repetitions at most): " + std::to_string(imprecise) +
                       " of " + std::to_string(measured) + " cells");
    }
    size_t multimodal = 0;
    std::vector<std::string> mode_lines;
    for (const auto& row : table.rows) {
        for (const auto& e : row.entries) {
            if (!e.present || e.status != CellStatus::Ok || !e.modes) continue;
            ++multimodal;
            std::string line = e.key + ": " + std::to_string(e.modes->modes.size()) + " modes; " + e.modes->explanation;
            std::string imprecise_modes;
            for (const auto& m : e.modes->modes) {
                if (m.precision_met && !*m.precision_met) imprecise_modes += (imprecise_modes.empty() ? "" : ", ") + format_metric(table.metric, m.summary.median);
            }
            if (!imprecise_modes.empty()) line += "; precision not met by the mode(s) at " + imprecise_modes;
            mode_lines.push_back(std::move(line));
        }
    }
    if (multimodal > 0) {
        head.push_back("a | b (m:n) = the runs fall into modes (" + mode_test_description() + "): each mode's median, and how many runs each; " +
                       std::to_string(multimodal) + " of " + std::to_string(measured) + " cells");
        head.insert(head.end(), mode_lines.begin(), mode_lines.end());
    }
    if (disturbed > 0) {
        head.push_back("! = measured under interference (before a repetition, busy above " + number_text(table.interference.max_busy_pct) +
                       "% or steal above " + number_text(table.interference.max_steal_pct) + "% of all CPUs, for longer than the sweep waited): " +
                       std::to_string(disturbed) + " of " + std::to_string(measured) + " cells");
    }
    if (shows_cpu(table.metric) && table.cpu_accounting.softirq_in_task_time() == KernelOption::Yes) {
        // The kernel charges a tick that lands in softirq to the task it interrupted as well.
        head.push_back("engine CPU may include softirq: this kernel does not account IRQ time (CONFIG_IRQ_TIME_ACCOUNTING off, " +
                       table.cpu_accounting.source + "), so receive-path work done in an engine thread's context counts as its CPU; "
                       "the hosts' figures are cpu.system (per_cpu, busiest_cpu) and the per-end service demand");
    }
    return head;
}

std::string render_matrix(const MatrixTable& table, TableFormat format) {
    if (format == TableFormat::JsonDocument) throw usage_error("--format json: only compare and report --against print JSON; the results file is JSON already");
    Grid g;
    const bool with_cpu = shows_cpu(table.metric);
    if (format == TableFormat::Csv) {
        std::vector<std::string> axis_names;
        if (!table.rows.empty()) {
            for (const auto& [axis, name] : table.rows.front().axes) axis_names.push_back(axis);
        }
        g.header = {"profile", "traffic", "mtu", "key", "status", table.metric + "_median", table.metric + "_mean",
                    table.metric + "_ci95", "n", "cpu_sender_pct_median", "cpu_receiver_pct_median", table.metric + "_median_ci_low",
                    table.metric + "_median_ci_high", table.metric + "_median_ci_confidence", "precision_met", "disturbed_runs"};
        for (const auto& row : table.rows) {
            for (size_t i = 0; i < table.mtus.size(); ++i) {
                const auto& e = row.entries[i];
                if (!e.present) continue;
                g.rows.push_back({row.profile, row.traffic, std::to_string(table.mtus[i]), e.key, status_name(e.status),
                                  e.value ? Json(e.value->median).dump() : "", e.value ? Json(e.value->mean).dump() : "",
                                  e.value ? Json(e.value->ci95).dump() : "", e.value ? std::to_string(e.value->n) : "0",
                                  e.cpu_sender ? Json(e.cpu_sender->median).dump() : "",
                                  e.cpu_receiver ? Json(e.cpu_receiver->median).dump() : "",
                                  e.value ? number_or_empty(e.value->median_ci_low) : "", e.value ? number_or_empty(e.value->median_ci_high) : "",
                                  e.value ? number_or_empty(e.value->median_ci_confidence) : "",
                                  e.precision_met ? (*e.precision_met ? "true" : "false") : "", std::to_string(e.disturbed_runs)});
                for (const auto& axis : axis_names) g.rows.back().push_back(row.axes.at(axis));
            }
        }
        for (const auto& axis : axis_names) g.header.push_back(axis);
        return render_grid(g, format);
    }
    g.header = {"offloads / traffic"};
    for (uint32_t mtu : table.mtus) g.header.push_back("MTU " + std::to_string(mtu));
    for (const auto& row : table.rows) {
        std::string label = row.profile;
        for (const char* axis : kTuningAxes) {
            if (const auto a = row.axes.find(axis); a != row.axes.end()) label += " / " + a->second;
        }
        std::vector<std::string> line{label + " / " + row.traffic};
        for (const auto& e : row.entries) {
            line.push_back(entry_text(e, table.metric, with_cpu));
            if (e.present && e.status != CellStatus::Ok) g.notes.push_back(e.key + ": " + status_name(e.status) + (e.note.empty() ? "" : ": " + e.note));
        }
        g.rows.push_back(std::move(line));
    }
    const auto head = matrix_notes(table);
    g.notes.insert(g.notes.begin(), head.begin(), head.end());
    return render_grid(g, format);
}

namespace {

// "POLL (0 us), C1 (2 us, disabled on 0-1)": the states in order, as compare shows a difference.
std::string idle_states_text(const CpuIdle& idle) {
    std::string out;
    for (const auto& s : idle.states) {
        if (!out.empty()) out += ", ";
        out += s.name + " (" + (s.latency_us ? std::to_string(*s.latency_us) + " us" : std::string("latency unknown"));
        if (!s.disabled_cpus.empty()) out += ", disabled on " + format_cpu_list(s.disabled_cpus);
        out += ")";
    }
    return out.empty() ? std::string("(none)") : out;
}

}  // namespace

std::vector<std::string> host_differences(const ResultsFile& a, const ResultsFile& b) {
    std::vector<std::string> out;
    const auto differ = [&](const std::string& end, const std::string& what, const std::string& x, const std::string& y) {
        if (!x.empty() && !y.empty() && x != y) out.push_back(end + " " + what + ": " + x + " vs " + y);
    };
    const auto sysctl = [](const HostInfo& h, const std::string& name) {
        const auto it = h.sysctls.find(name);
        return it == h.sysctls.end() ? std::string() : it->second;
    };
    for (const auto& [end, ha, hb] : {std::tuple{"local", &a.local, &b.local}, std::tuple{"remote", &a.remote, &b.remote}}) {
        differ(end, "kernel", ha->kernel, hb->kernel);
        differ(end, "CPU model", ha->cpu_model, hb->cpu_model);
        // Figures of an emulated end are the emulator's: a guest against a host of its own is said too.
        if (ha->virtualization != hb->virtualization) {
            out.push_back(std::string(end) + " virtualization: " + (ha->virtualization.empty() ? "(none recorded)" : ha->virtualization) + " vs " +
                          (hb->virtualization.empty() ? "(none recorded)" : hb->virtualization));
        }
        if (ha->interface && hb->interface) {
            differ(end, "emulated NIC", ha->interface->device_model, hb->interface->device_model);
            differ(end, "emulator", ha->interface->emulator, hb->interface->emulator);
            differ(end, "driver", ha->interface->driver, hb->interface->driver);
            differ(end, "driver version", ha->interface->driver_version, hb->interface->driver_version);
            differ(end, "firmware", ha->interface->firmware, hb->interface->firmware);
        }
        differ(end, "congestion control", sysctl(*ha, "net.ipv4.tcp_congestion_control"), sysctl(*hb, "net.ipv4.tcp_congestion_control"));
        // Mitigations change what every system call costs; compared where both files list them.
        if (!ha->cpu_vulnerabilities.empty() && !hb->cpu_vulnerabilities.empty()) {
            std::set<std::string> names;
            for (const auto* h : {ha, hb}) {
                for (const auto& [name, line] : h->cpu_vulnerabilities) names.insert(name);
            }
            const auto line = [](const HostInfo& h, const std::string& name) {
                const auto it = h.cpu_vulnerabilities.find(name);
                return it == h.cpu_vulnerabilities.end() ? std::string("(not listed)") : it->second;
            };
            for (const auto& name : names) differ(end, "CPU vulnerability " + name, line(*ha, name), line(*hb, name));
        }
        // The idle policy sets what waking a sleeping receiver costs: compared where both files read it.
        if (ha->cpu_idle && hb->cpu_idle) {
            const CpuIdle& ia = *ha->cpu_idle;
            const CpuIdle& ib = *hb->cpu_idle;
            differ(end, "cpuidle driver", ia.driver, ib.driver);
            differ(end, "cpuidle governor", ia.governor, ib.governor);
            differ(end, "idle states", idle_states_text(ia), idle_states_text(ib));
            std::set<std::string> names;
            for (const auto* i : {&ia, &ib}) {
                for (const auto& [name, value] : i->driver_parameters) names.insert(name);
            }
            const auto value = [](const CpuIdle& i, const std::string& name) {
                const auto it = i.driver_parameters.find(name);
                return it == i.driver_parameters.end() ? std::string("(not listed)") : it->second;
            };
            if (ia.driver == ib.driver) {
                for (const auto& name : names) differ(end, ia.driver + " parameter " + name, value(ia, name), value(ib, name));
            }
        }
        // Another engine may measure differently: which build wrote each end's figures.
        const auto build = [](const ToolInfo& t) { return t.version.empty() ? std::string() : build_label(t.version, t.commit); };
        differ(end, "nicmatrix build", build(ha->tool), build(hb->tool));
    }
    return out;
}

Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric,
                           const std::string& label_a, const std::string& label_b, const ComparisonOptions& options) {
    require_metric({&a, &b}, metric);
    Comparison cmp;
    cmp.metric = metric;
    cmp.label_a = label_a;
    cmp.label_b = label_b;
    cmp.confidence = options.confidence;
    cmp.adjustment = options.adjustment;
    cmp.margin_pct = options.margin_pct;
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

Comparison compare_to_profile(const ResultsFile& results, const std::string& metric, const std::string& reference,
                              const std::string& label, const ComparisonOptions& options) {
    require_metric({&results}, metric);
    const auto& profiles = results.run.config.offloads;
    if (std::none_of(profiles.begin(), profiles.end(), [&](const OffloadProfile& p) { return p.name == reference; })) {
        std::string list;
        for (const auto& p : profiles) list += (list.empty() ? "" : ", ") + p.name;
        throw usage_error("--against " + reference + ": no such offload profile; the file has " + list);
    }
    Comparison cmp;
    cmp.metric = metric;
    cmp.label_a = reference;
    cmp.label_b = label;
    cmp.confidence = options.confidence;
    cmp.adjustment = options.adjustment;
    cmp.margin_pct = options.margin_pct;
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
        g.header = {"profile", "traffic", "mtu", "key_a", "key_b", "a", "b", "ratio", "significant",
                    "ratio_ci_low", "ratio_ci_high", "ratio_ci_confidence", "verdict", "p_value", "p_adjusted", "equivalent",
                    "equivalence_p_value", "equivalence_p_adjusted", "verdict_unadjusted"};
        for (const auto& r : cmp.rows) {
            g.rows.push_back({r.profile, r.traffic, std::to_string(r.mtu), r.key_a, r.key_b, value(r.a, r.status_a), value(r.b, r.status_b),
                              r.ratio ? fixed(*r.ratio, 4) : "", r.significant ? "true" : "false", number_or_empty(r.ratio_ci_low),
                              number_or_empty(r.ratio_ci_high), number_or_empty(r.ratio_ci_confidence), Json(r.verdict).get<std::string>(),
                              number_or_empty(r.p_value), number_or_empty(r.p_adjusted), r.equivalent ? "true" : "false",
                              number_or_empty(r.equivalence_p_value), number_or_empty(r.equivalence_p_adjusted), Json(r.verdict_unadjusted).get<std::string>()});
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
        g.rows.push_back({r.key_a, value(r.a, r.status_a) + ma, value(r.b, r.status_b) + mb, comparison_ratio_text(r, 2), comparison_interval_text(r)});
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
        const std::string& profile = pair.first;   // not a structured binding: clang 14 cannot capture one
        const std::string& traffic = pair.second;
        std::vector<std::string> line{profile + " / " + traffic};
        for (uint32_t mtu : mtus) {
            const auto it = std::find_if(cmp.rows.begin(), cmp.rows.end(), [&](const CompareRow& r) {
                return r.profile == profile && r.traffic == traffic && r.mtu == mtu;
            });
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
