#include "matrix/report/profile_report.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/base/error.hpp"
#include "core/profile/categories.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

std::string pct(double v, bool csv) {
    if (csv) return Json(v).dump();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// The categories in the shipped table's order, then those only a custom table had, alphabetically.
std::vector<std::string> category_order(const std::set<std::string>& present) {
    std::vector<std::string> order;
    for (const auto& c : profile::builtin_category_table().categories) {
        if (present.count(c)) order.push_back(c);
    }
    for (const auto& c : present) {
        if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
    }
    return order;
}

struct Row {
    std::string cell, end;
    std::map<std::string, double> medians;
    size_t runs = 0;
};

}  // namespace

std::string render_cpu_breakdown(const ResultsFile& results, TableFormat format) {
    const bool csv = format == TableFormat::Csv;
    std::vector<Row> rows;
    std::set<std::string> categories;
    std::vector<std::string> notes;
    for (const auto& c : results.cells) {
        const RunResult* first = nullptr;
        for (const auto& r : c.runs) {
            if (r.sender.profile || r.receiver.profile) {
                first = &r;
                break;
            }
        }
        if (first == nullptr) {
            notes.push_back(c.spec.key + ": " + (c.status == CellStatus::Ok ? "not profiled" : status_name(c.status)));
            continue;
        }
        const bool shared = first->sender.profile && first->receiver.profile && !first->sender.profile->shared_with.empty();
        // The medians over the repetitions, from the summaries the sweep keeps (one host: cpu:<c>; two:
        // cpu:sender:<c> and cpu:receiver:<c>).
        const auto add = [&](const std::string& prefix, const std::string& label) {
            Row row{c.spec.key, label, {}, 0};
            for (const auto& [name, s] : c.summary) {
                if (name.rfind(prefix, 0) != 0 || name.find(':', prefix.size()) != std::string::npos) continue;
                const std::string category = name.substr(prefix.size());
                row.medians[category] = s.median;
                row.runs = std::max(row.runs, s.n);
                categories.insert(category);
            }
            if (!row.medians.empty()) rows.push_back(std::move(row));
        };
        if (shared) {
            add("cpu:", "both ends (" + first->sender.profile->host + ")");
        } else {
            if (first->sender.profile) add("cpu:sender:", "sender (" + first->sender.profile->host + ")");
            if (first->receiver.profile) add("cpu:receiver:", "receiver (" + first->receiver.profile->host + ")");
        }
    }
    if (rows.empty()) {
        throw usage_error(
            "--cpu-breakdown: no cell of this file has a kernel profile; sweep with \"profile\": true in the config "
            "(or run with --profile)");
    }
    std::vector<std::string> order = category_order(categories);
    std::vector<std::string> dropped;
    if (!csv) {
        std::erase_if(order, [&](const std::string& cat) {
            const bool zero = std::all_of(rows.begin(), rows.end(), [&](const Row& r) {
                const auto it = r.medians.find(cat);
                return it == r.medians.end() || it->second < 0.05;
            });
            if (zero) dropped.push_back(cat);
            return zero;
        });
    }
    std::vector<std::string> header{"cell", "host"};
    header.insert(header.end(), order.begin(), order.end());
    header.push_back("runs");
    std::vector<std::vector<std::string>> lines;
    for (const auto& r : rows) {
        std::vector<std::string> line{r.cell, r.end};
        for (const auto& cat : order) {
            const auto it = r.medians.find(cat);
            line.push_back(it == r.medians.end() ? "" : pct(it->second, csv));
        }
        line.push_back(std::to_string(r.runs));
        lines.push_back(std::move(line));
    }
    if (csv) return render_table(header, lines, {}, format);
    std::vector<std::string> all_notes{
        "median over the runs of each category's share of all CPU time sampled on the host in the measured window (every "
        "CPU, idle included), percent"};
    if (!dropped.empty()) {
        std::string list;
        for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
        all_notes.push_back("0.0 in every cell, not shown: " + list);
    }
    all_notes.insert(all_notes.end(), notes.begin(), notes.end());
    return render_table(header, lines, all_notes, format);
}

}  // namespace nm
