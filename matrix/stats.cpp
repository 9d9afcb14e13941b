#include "matrix/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "matrix/profile_metrics.hpp"

namespace nm {

double student_t95(size_t dof) {
    // Two-sided 95% (0.975 quantile) of Student's t, dof 1..30.
    constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0) return 0;
    if (dof <= 30) return kTable[dof - 1];
    // Cornish-Fisher expansion around the normal quantile: accurate to 1e-3 beyond 30 dof.
    const double z = 1.959964;
    const double d = static_cast<double>(dof);
    return z + (z * z * z + z) / (4 * d) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

MetricSummary summarize(std::vector<double> values) {
    MetricSummary s;
    s.n = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    s.min = values.front();
    s.max = values.back();
    s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
    if (n >= 2) {
        double sq = 0;
        for (double v : values) sq += (v - s.mean) * (v - s.mean);
        s.stddev = std::sqrt(sq / static_cast<double>(n - 1));
        s.ci95 = student_t95(n - 1) * s.stddev / std::sqrt(static_cast<double>(n));
    }
    return s;
}

std::map<std::string, double> run_metrics(const RunResult& run) {
    std::map<std::string, double> m{
        {"throughput_bps", run.throughput_bps},
        {"packets_per_s", run.packets_per_s},
        {"cpu_sender_pct", run.sender.cpu.util_pct},
        {"cpu_receiver_pct", run.receiver.cpu.util_pct},
        {"system_busy_pct", std::max(run.sender.system.busy_pct, run.receiver.system.busy_pct)},
        {"softirq_pct", std::max(run.sender.system.softirq_pct, run.receiver.system.softirq_pct)},
        {"tcp_retransmits", static_cast<double>(run.tcp_retransmits)},
        {"service_demand_us_per_kb", run.service_demand_us_per_kb},
    };
    if (run.loss) m["loss_pct"] = run.loss->percent;
    add_profile_metrics(run, m);
    return m;
}

std::vector<std::string> known_metrics() {
    RunResult udp;
    udp.loss = LossStats{};
    std::vector<std::string> names;
    for (const auto& [name, value] : run_metrics(udp)) names.push_back(name);
    return names;
}

std::map<std::string, MetricSummary> summarize_runs(const std::vector<RunResult>& runs) {
    std::map<std::string, std::vector<double>> samples;
    for (const auto& r : runs) {
        for (const auto& [name, value] : run_metrics(r)) samples[name].push_back(value);
    }
    std::map<std::string, MetricSummary> out;
    for (auto& [name, values] : samples) out[name] = summarize(std::move(values));
    return out;
}

}  // namespace nm
