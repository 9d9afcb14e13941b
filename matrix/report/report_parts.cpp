#include "matrix/report/report_parts.hpp"

#include <algorithm>
#include <set>

#include "core/base/error.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/results_codec.hpp"

namespace nm::report_parts {

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

std::string marks(const std::optional<bool>& precision_met, size_t disturbed) {
    std::string m;
    if (precision_met && !*precision_met) m += "?";
    if (disturbed > 0) m += "!";
    return m.empty() ? m : " " + m;
}

size_t disturbed_runs(const CellResult& c) {
    return static_cast<size_t>(std::count_if(c.runs.begin(), c.runs.end(), [](const RunResult& run) { return run.disturbed; }));
}

std::string number_or_empty(const std::optional<double>& v) { return v ? Json(*v).dump() : ""; }

}  // namespace nm::report_parts
