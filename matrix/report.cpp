#include "matrix/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "matrix/config.hpp"

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
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
    };
    measure(g.header);
    for (const auto& row : g.rows) measure(row);
    const auto line = [&](const std::vector<std::string>& row) {
        std::string text;
        for (size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - row[i].size(), ' ');
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

std::string entry_text(const MatrixEntry& e, const std::string& metric, bool with_cpu) {
    if (!e.present) return "-";
    if (e.status != CellStatus::Ok || !e.value) return status_name(e.status);
    std::string text = format_metric(metric, e.value->median);
    if (with_cpu && e.cpu_sender && e.cpu_receiver) {
        text += " (" + fixed(e.cpu_sender->median, 0) + "/" + fixed(e.cpu_receiver->median, 0) + "%)";
    }
    return text;
}

// Matching key of a cell across files: what was asked of the device and the traffic, not the names.
std::string settings_key(const CellResult& c) {
    Json test = c.spec.traffic;
    test.erase("name");
    return Json{{"features", c.spec.features_requested}, {"mtu", c.spec.mtu}, {"test", test}}.dump();
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
    throw usage_error("--format: expected table, md or csv, got \"" + name + "\"");
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
    std::map<std::string, const CellResult*> by_key;
    for (const auto& c : results.cells) by_key[c.spec.key] = &c;
    for (const auto& p : config.offloads) {
        for (const auto& tr : config.traffic) {
            MatrixTable::Row row{p.name, tr.name, {}};
            bool any = false;
            for (uint32_t mtu : config.mtu) {
                MatrixEntry e;
                e.key = p.name + "/mtu" + std::to_string(mtu) + "/" + tr.name;
                if (const auto it = by_key.find(e.key); it != by_key.end()) {
                    const auto& c = *it->second;
                    e.present = true;
                    any = true;
                    e.status = c.status;
                    e.value = summary_of(c, metric);
                    e.cpu_sender = summary_of(c, "cpu_sender_pct");
                    e.cpu_receiver = summary_of(c, "cpu_receiver_pct");
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
                return std::any_of(config.exclude.begin(), config.exclude.end(), [&](const ExcludeRule& r) { return excludes(r, probe); });
            });
            if (any || !excluded) t.rows.push_back(std::move(row));
        }
    }
    return t;
}

std::string render_matrix(const MatrixTable& table, TableFormat format) {
    Grid g;
    const bool with_cpu = table.metric != "cpu_sender_pct" && table.metric != "cpu_receiver_pct";
    if (format == TableFormat::Csv) {
        g.header = {"profile", "traffic", "mtu", "key", "status", table.metric + "_median", table.metric + "_mean",
                    table.metric + "_ci95", "n", "cpu_sender_pct_median", "cpu_receiver_pct_median"};
        for (const auto& row : table.rows) {
            for (size_t i = 0; i < table.mtus.size(); ++i) {
                const auto& e = row.entries[i];
                if (!e.present) continue;
                g.rows.push_back({row.profile, row.traffic, std::to_string(table.mtus[i]), e.key, status_name(e.status),
                                  e.value ? Json(e.value->median).dump() : "", e.value ? Json(e.value->mean).dump() : "",
                                  e.value ? Json(e.value->ci95).dump() : "", e.value ? std::to_string(e.value->n) : "0",
                                  e.cpu_sender ? Json(e.cpu_sender->median).dump() : "",
                                  e.cpu_receiver ? Json(e.cpu_receiver->median).dump() : ""});
            }
        }
        return render_grid(g, format);
    }
    g.header = {"offloads / traffic"};
    for (uint32_t mtu : table.mtus) g.header.push_back("MTU " + std::to_string(mtu));
    for (const auto& row : table.rows) {
        std::vector<std::string> line{row.profile + " / " + row.traffic};
        for (const auto& e : row.entries) {
            line.push_back(entry_text(e, table.metric, with_cpu));
            if (e.present && e.status != CellStatus::Ok) g.notes.push_back(e.key + ": " + status_name(e.status) + (e.note.empty() ? "" : ": " + e.note));
        }
        g.rows.push_back(std::move(line));
    }
    g.notes.insert(g.notes.begin(), std::string("median ") + table.metric + (with_cpu ? " (sender/receiver engine CPU, % of one core)" : "") + "; - = not run");
    return render_grid(g, format);
}

Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric,
                           const std::string& label_a, const std::string& label_b) {
    require_metric({&a, &b}, metric);
    Comparison cmp{metric, label_a, label_b, {}, {}, {}};
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
        const auto& cb = *it->second;
        CompareRow row;
        row.profile = ca.spec.offloads;
        row.traffic = ca.spec.traffic.name;
        row.mtu = ca.spec.mtu;
        row.key_a = ca.spec.key;
        row.key_b = cb.spec.key;
        row.status_a = ca.status;
        row.status_b = cb.status;
        if (ca.status == CellStatus::Ok) row.a = summary_of(ca, metric);
        if (cb.status == CellStatus::Ok) row.b = summary_of(cb, metric);
        if (row.a && row.b) {
            if (row.a->median != 0) row.ratio = row.b->median / row.a->median;
            const auto interval = [](const MetricSummary& s) {
                return s.n >= 2 ? std::pair{s.mean - s.ci95, s.mean + s.ci95} : std::pair{s.min, s.max};
            };
            const auto [alo, ahi] = interval(*row.a);
            const auto [blo, bhi] = interval(*row.b);
            row.significant = ahi < blo || bhi < alo;
        }
        cmp.rows.push_back(std::move(row));
    }
    for (const auto& cb : b.cells) {
        if (!matched_b.count(settings_key(cb))) cmp.only_b.push_back(cb.spec.key);
    }
    return cmp;
}

std::string render_comparison(const Comparison& cmp, TableFormat format) {
    Grid g;
    const auto value = [&](const std::optional<MetricSummary>& s, CellStatus st) {
        if (st != CellStatus::Ok) return status_name(st);
        if (!s) return std::string("-");
        return format == TableFormat::Csv ? Json(s->median).dump() : format_metric(cmp.metric, s->median);
    };
    g.header = {"cell", "A: " + cmp.label_a, "B: " + cmp.label_b, "B/A", "beyond spread"};
    if (format == TableFormat::Csv) g.header = {"profile", "traffic", "mtu", "key_a", "key_b", "a", "b", "ratio", "significant"};
    for (const auto& r : cmp.rows) {
        const std::string ratio = r.ratio ? fixed(*r.ratio, format == TableFormat::Csv ? 4 : 2) : "";
        if (format == TableFormat::Csv) {
            g.rows.push_back({r.profile, r.traffic, std::to_string(r.mtu), r.key_a, r.key_b, value(r.a, r.status_a),
                              value(r.b, r.status_b), ratio, r.significant ? "true" : "false"});
        } else {
            g.rows.push_back({r.key_a, value(r.a, r.status_a), value(r.b, r.status_b), ratio, r.significant ? "*" : ""});
        }
    }
    if (format == TableFormat::Csv) {
        for (const auto& k : cmp.only_a) g.rows.push_back({"", "", "", k, "", "", "", "", "only in A"});
        for (const auto& k : cmp.only_b) g.rows.push_back({"", "", "", "", k, "", "", "", "only in B"});
        return render_grid(g, format);
    }
    g.notes.push_back("median " + cmp.metric + "; * = the difference is larger than the repetitions' spread (95% CI, or min..max)");
    for (const auto& k : cmp.only_a) g.notes.push_back("only in A: " + k);
    for (const auto& k : cmp.only_b) g.notes.push_back("only in B: " + k);
    return render_grid(g, format);
}

}  // namespace nm
