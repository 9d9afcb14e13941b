#include "matrix/modes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/base/number_text.hpp"
#include "core/host/cpu_affinity.hpp"
#include "matrix/metric_text.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The ratio of a partition of the sorted figures `v` at `cuts` (each cut s: a new mode starts at v[s]): its
// smallest gap over its widest mode's range; 0 when a mode is short of runs or a gap short of the separation.
double partition_ratio(const std::vector<double>& v, const std::vector<size_t>& cuts, double scale, const ModeTest& test) {
    std::vector<size_t> edges{0};
    edges.insert(edges.end(), cuts.begin(), cuts.end());
    edges.push_back(v.size());
    double widest = 0, narrowest_gap = HUGE_VAL;
    for (size_t g = 0; g + 1 < edges.size(); ++g) {
        if (edges[g + 1] - edges[g] < test.min_per_mode) return 0;
        widest = std::max(widest, v[edges[g + 1] - 1] - v[edges[g]]);
        if (g > 0) narrowest_gap = std::min(narrowest_gap, v[edges[g]] - v[edges[g] - 1]);
    }
    if (narrowest_gap <= 0 || narrowest_gap < test.min_gap_pct / 100 * scale) return 0;
    const double ratio = widest > 0 ? narrowest_gap / widest : HUGE_VAL;
    return ratio >= test.min_gap_ratio ? ratio : 0;
}

std::string same_or_different(const std::vector<uint32_t>& x, const std::vector<uint32_t>& y) {
    const bool shared = std::any_of(x.begin(), x.end(), [&](uint32_t c) { return std::find(y.begin(), y.end(), c) != y.end(); });
    return shared ? "same CPU" : "different CPUs";
}

std::string cpus_text(const std::vector<uint32_t>& cpus) { return "CPU " + format_cpu_list(cpus); }

}  // namespace

std::string mode_test_description(const ModeTest& t) {
    return "gap test: the sorted runs cut into 2 or 3 modes of at least " + std::to_string(t.min_per_mode) +
           " runs, every gap between modes at least " + number_text(t.min_gap_pct) + "% of the median and " + number_text(t.min_gap_ratio) +
           "x the widest mode's range, from " + std::to_string(t.min_runs) + " runs on";
}

std::vector<std::vector<size_t>> find_modes(const std::vector<double>& values, const ModeTest& test) {
    std::vector<std::vector<size_t>> out;
    if (values.empty()) return out;
    std::vector<size_t> idx(values.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> v;
    v.reserve(idx.size());
    for (size_t i : idx) v.push_back(values[i]);
    const double scale = std::fabs(median_of(values));
    const size_t n = v.size();
    std::vector<size_t> best;
    if (n >= test.min_runs && test.min_per_mode > 0) {
        // Three modes first, then two: every partition into contiguous runs of the sorted figures.
        double best_ratio = 0;
        for (size_t s = 1; s < n; ++s) {
            for (size_t t = s + 1; t < n; ++t) {
                const double r = partition_ratio(v, {s, t}, scale, test);
                if (r > best_ratio) {
                    best_ratio = r;
                    best = {s, t};
                }
            }
        }
        if (best.empty()) {
            for (size_t s = 1; s < n; ++s) {
                const double r = partition_ratio(v, {s}, scale, test);
                if (r > best_ratio) {
                    best_ratio = r;
                    best = {s};
                }
            }
        }
    }
    std::vector<size_t> edges{0};
    edges.insert(edges.end(), best.begin(), best.end());
    edges.push_back(n);
    for (size_t g = 0; g + 1 < edges.size(); ++g) {
        std::vector<size_t> group(idx.begin() + static_cast<std::ptrdiff_t>(edges[g]), idx.begin() + static_cast<std::ptrdiff_t>(edges[g + 1]));
        std::sort(group.begin(), group.end());
        out.push_back(std::move(group));
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> run_placement(const RunResult& run) {
    std::vector<std::pair<std::string, std::string>> out;
    const auto& rx = run.receiver.receive_path.incoming_cpus;
    const auto& receiver = run.receiver.placement;
    const auto& sender = run.sender.placement;
    if (!rx.empty() && !receiver.empty()) out.emplace_back("softirq and receiver", same_or_different(rx, receiver));
    if (!sender.empty() && !receiver.empty()) out.emplace_back("sender and receiver threads", same_or_different(sender, receiver));
    if (!rx.empty()) out.emplace_back("receive softirq", cpus_text(rx));
    if (!receiver.empty()) out.emplace_back("receiver thread", cpus_text(receiver));
    if (!sender.empty()) out.emplace_back("sender thread", cpus_text(sender));
    const auto& napi = run.receiver.receive_path.incoming_napi_ids;
    if (!napi.empty()) {
        std::string ids;
        for (uint32_t id : napi) ids += (ids.empty() ? "" : "+") + std::to_string(id);
        out.emplace_back("receive queue", "NAPI " + ids);
    }
    return out;
}

void explain_modes(const std::vector<RunResult>& runs, CellModes& cm) {
    static constexpr const char* kOrder[] = {
        "softirq and receiver", "sender and receiver threads", "receive softirq", "receiver thread", "sender thread", "receive queue"};
    size_t total = 0;
    for (const auto& m : cm.modes) total += m.runs.size();
    std::vector<std::map<std::string, std::string>> placed(runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
        for (auto& [name, value] : run_placement(runs[i])) placed[i][name] = value;
    }
    std::string best;
    size_t best_matched = 0;
    std::vector<std::pair<std::string, size_t>> best_values;
    for (const char* feature : kOrder) {
        std::vector<std::pair<std::string, size_t>> values;  // per mode: its commonest value and how many runs have it
        size_t matched = 0;
        for (const auto& m : cm.modes) {
            std::map<std::string, size_t> count;
            for (size_t r : m.runs) {
                if (r >= placed.size()) continue;
                if (const auto it = placed[r].find(feature); it != placed[r].end()) ++count[it->second];
            }
            std::pair<std::string, size_t> top{"", 0};
            for (const auto& [value, c] : count) {
                if (c > top.second) top = {value, c};
            }
            matched += top.second;
            values.push_back(top);
        }
        // Each mode its own value: two modes with one placement explain nothing.
        bool distinct = true;
        for (size_t i = 0; i < values.size(); ++i) {
            for (size_t j = i + 1; j < values.size(); ++j) distinct = distinct && values[i].first != values[j].first;
            distinct = distinct && !values[i].first.empty();
        }
        if (!distinct || 10 * matched < 9 * total) continue;
        if (matched > best_matched) {
            best = feature;
            best_matched = matched;
            best_values = values;
        }
    }
    cm.placement_by = best;
    std::string text;
    for (size_t i = 0; i < cm.modes.size(); ++i) {
        auto& m = cm.modes[i];
        m.placement = best.empty() ? std::string() : best_values[i].first;
        m.placement_runs = best.empty() ? 0 : best_values[i].second;
        if (best.empty()) continue;
        text += (text.empty() ? "" : "; ") + std::string("runs near ") + format_metric(cm.metric, m.summary.median) + ": " +
                (i == 0 ? best + ": " : std::string()) + m.placement + ", " + std::to_string(m.placement_runs) + " of " +
                std::to_string(m.runs.size());
    }
    cm.explanation =
        best.empty() ? "no recorded placement (receive softirq CPU, engine threads' CPUs, receive queue) lines up with the modes in 90% of the runs"
                     : text;
}

std::optional<CellModes> cell_modes(const std::vector<RunResult>& runs, const std::string& metric, double confidence,
                                    const std::optional<PrecisionSpec>& precision, const ModeTest& test) {
    std::vector<double> values;
    std::vector<size_t> run_of;  // values[i] is runs[run_of[i]]'s
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto m = run_metrics(runs[i]);
        if (const auto it = m.find(metric); it != m.end()) {
            values.push_back(it->second);
            run_of.push_back(i);
        }
    }
    const auto groups = find_modes(values, test);
    if (groups.size() < 2) return std::nullopt;
    CellModes cm;
    cm.metric = metric;
    cm.method = mode_test_description(test);
    for (const auto& g : groups) {
        ValueMode mode;
        std::vector<double> v;
        for (size_t i : g) {
            v.push_back(values[i]);
            mode.runs.push_back(run_of[i]);
        }
        mode.summary = summarize(v, confidence);
        if (precision) mode.precision_met = precision_met(mode.summary, *precision);
        cm.modes.push_back(std::move(mode));
    }
    explain_modes(runs, cm);
    return cm;
}

}  // namespace nm
