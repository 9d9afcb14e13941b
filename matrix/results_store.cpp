#include "matrix/results_store.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

// Files written before the median's interval was recorded have only the mean's: compute it from the
// runs they keep, at the confidence the sweep would have used.
void fill_median_intervals(ResultsFile& results) {
    const double confidence = results.run.config.precision ? results.run.config.precision->confidence : 95;
    for (auto& cell : results.cells) {
        for (auto& [metric, summary] : cell.summary) {
            if (summary.median_ci_confidence || summary.n < 2) continue;
            const auto values = metric_values(cell.runs, metric);
            if (values.size() != summary.n) continue;
            const auto fresh = summarize(values, confidence);
            summary.median_ci_low = fresh.median_ci_low;
            summary.median_ci_high = fresh.median_ci_high;
            summary.median_ci_confidence = fresh.median_ci_confidence;
        }
    }
}

// The precision's metric as the config means it: files written before it had a default (each cell's
// headline figure) name "throughput_bps" explicitly, and a config may name the default; either asks for
// what no name asks for when the name is every cell's headline figure.
SweepConfig without_default_metric(SweepConfig c) {
    if (!c.precision || c.precision->metric.empty()) return c;
    const std::string& m = c.precision->metric;
    if (std::all_of(c.traffic.begin(), c.traffic.end(), [&](const TrafficEntry& t) { return t.rfc2544 || headline_metric(t.test) == m; })) {
        c.precision->metric.clear();
    }
    return c;
}

}  // namespace

void save_results(const ResultsFile& results, const std::string& path) {
    // A name that is not UTF-8 (interfaces may have any bytes) is written with U+FFFD, not an abort.
    write_file_atomically(path, Json(results).dump(1, ' ', false, Json::error_handler_t::replace) + "\n", 0644);
}

ResultsFile load_results(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error(path + ": cannot read the results file (no such file, or no permission)");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_results_text(text.str(), path);
}

ResultsFile parse_results_text(const std::string& text, const std::string& path) {
    try {
        auto results = Json::parse(text).get<ResultsFile>();
        fill_median_intervals(results);
        return results;
    } catch (const Json::exception& e) {
        throw usage_error(path + ": not a nicmatrix results file: " + e.what());
    } catch (const Error& e) {
        throw usage_error(path + ": " + e.what());
    }
}

void check_resumable(const ResultsFile& existing, const SweepConfig& config, const std::string& path) {
    const Json before = without_default_metric(existing.run.config);
    const Json now = without_default_metric(config);
    if (before == now) return;
    std::string first = "the config";
    for (const auto& [key, value] : now.items()) {
        if (!before.contains(key) || before.at(key) != value) {
            first = "\"" + key + "\"";
            break;
        }
    }
    throw usage_error("--resume " + path + ": the file was made with a different sweep config (" + first +
                      " differs); resume with the config it was made with, or start a new file");
}

}  // namespace nm
