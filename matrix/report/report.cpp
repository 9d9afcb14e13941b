#include "matrix/report/report.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/error.hpp"
#include "core/base/number_text.hpp"
#include "core/traffic/cpu_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/modes.hpp"
#include "matrix/report/report_parts.hpp"
#include "matrix/stats.hpp"

namespace nm {

using namespace report_parts;  // NOLINT(google-build-using-namespace): the report layer's own helpers

namespace {

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
        text += " (" + fixed_text(e.cpu_sender->median, 0) + "/" + fixed_text(e.cpu_receiver->median, 0) + "%)";
    }
    return text + marks(e.precision_met, e.disturbed_runs);
}

}  // namespace

std::string default_metric(const ResultsFile& results) {
    bool any = false;
    for (const auto& cell : results.cells) {
        if (cell.spec.traffic.rfc2544) continue;
        if (cell.spec.traffic.test.pattern == TrafficPattern::Stream) return "throughput_bps";
        any = true;
    }
    return any ? "rr_transactions_per_s" : "throughput_bps";
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
                      : judged.empty()  ? precision_metric(*t.precision, TestSpec{})
                                        : *judged.begin();
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
    std::vector<std::string> head{std::string("median ") + table.metric +
                                  (shows_cpu(table.metric) ? " (sender/receiver engine CPU, % of one core)" : "") + "; - = not run"};
    if (table.precision) {
        const auto& p = *table.precision;
        head.push_back("? = desired precision not achieved (the " + number_text(p.confidence) + "% interval of the median " + table.judged_by +
                       " within ±" + number_text(p.ci_pct) + "%, in " + std::to_string(p.max_repetitions) +
                       " repetitions at most): " + std::to_string(imprecise) + " of " + std::to_string(measured) + " cells");
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
                if (m.precision_met && !*m.precision_met)
                    imprecise_modes += (imprecise_modes.empty() ? "" : ", ") + format_metric(table.metric, m.summary.median);
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
                       table.cpu_accounting.source +
                       "), so receive-path work done in an engine thread's context counts as its CPU; "
                       "the hosts' figures are cpu.system (per_cpu, busiest_cpu) and the per-end service demand");
    }
    return head;
}

std::string render_matrix(const MatrixTable& table, TableFormat format) {
    if (format == TableFormat::JsonDocument)
        throw usage_error("--format json: only compare and report --against print JSON; the results file is JSON already");
    Grid g;
    const bool with_cpu = shows_cpu(table.metric);
    if (format == TableFormat::Csv) {
        std::vector<std::string> axis_names;
        if (!table.rows.empty()) {
            for (const auto& [axis, name] : table.rows.front().axes) axis_names.push_back(axis);
        }
        g.header = {"profile",
                    "traffic",
                    "mtu",
                    "key",
                    "status",
                    table.metric + "_median",
                    table.metric + "_mean",
                    table.metric + "_ci95",
                    "n",
                    "cpu_sender_pct_median",
                    "cpu_receiver_pct_median",
                    table.metric + "_median_ci_low",
                    table.metric + "_median_ci_high",
                    table.metric + "_median_ci_confidence",
                    "precision_met",
                    "disturbed_runs"};
        for (const auto& row : table.rows) {
            for (size_t i = 0; i < table.mtus.size(); ++i) {
                const auto& e = row.entries[i];
                if (!e.present) continue;
                g.rows.push_back({row.profile, row.traffic, std::to_string(table.mtus[i]), e.key, status_name(e.status),
                                  e.value ? Json(e.value->median).dump() : "", e.value ? Json(e.value->mean).dump() : "",
                                  e.value ? Json(e.value->ci95).dump() : "", e.value ? std::to_string(e.value->n) : "0",
                                  e.cpu_sender ? Json(e.cpu_sender->median).dump() : "", e.cpu_receiver ? Json(e.cpu_receiver->median).dump() : "",
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
            if (e.present && e.status != CellStatus::Ok)
                g.notes.push_back(e.key + ": " + status_name(e.status) + (e.note.empty() ? "" : ": " + e.note));
        }
        g.rows.push_back(std::move(line));
    }
    const auto head = matrix_notes(table);
    g.notes.insert(g.notes.begin(), head.begin(), head.end());
    return render_grid(g, format);
}

}  // namespace nm
