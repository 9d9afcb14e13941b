#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/base/sweep_types.hpp"

namespace nm {

/// Median, mean, sample standard deviation (n - 1), min, max and the half-width of the 95% confidence
/// interval of the mean from Student's t with n - 1 degrees of freedom. An empty sample gives all
/// zeros; one value gives stddev and ci95 0.
MetricSummary summarize(std::vector<double> values);

/// The two-sided 95% quantile of Student's t with `dof` degrees of freedom (dof >= 1); exact table
/// values up to 30, then the normal approximation with a correction term.
double student_t95(size_t dof);

/// The figures of one run a sweep summarizes, by metric name: throughput_bps, packets_per_s,
/// cpu_sender_pct, cpu_receiver_pct, system_busy_pct, softirq_pct, tcp_retransmits, loss_pct (UDP),
/// service_demand_us_per_kb.
std::map<std::string, double> run_metrics(const RunResult& run);

/// The names run_metrics can produce, in alphabetical order.
std::vector<std::string> known_metrics();

/// Every metric of run_metrics summarized over `runs`.
std::map<std::string, MetricSummary> summarize_runs(const std::vector<RunResult>& runs);

}  // namespace nm
