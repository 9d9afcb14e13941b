#pragma once
// The statistics a sweep records and compare uses. Every interval here says what it is an interval of:
// the median's is distribution-free (order statistics), the mean's is Student's t, and the ratio of two
// cells is the Hodges-Lehmann / Mann-Whitney interval on log values. Each reports the confidence it
// really has, which at small n is less than asked (and then nothing is called significant).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/model/report_types.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

/// Median, its order-statistic interval at `confidence` percent (see MetricSummary), mean, sample
/// standard deviation (n - 1), min, max and the half-width of the 95% interval of the mean (Student's t
/// with n - 1 degrees of freedom). An empty sample gives all zeros; one value gives no median interval,
/// stddev 0 and ci95 0.
MetricSummary summarize(std::vector<double> values, double confidence = 95);

/// The two-sided `confidence` percent quantile of Student's t with `dof` >= 1 degrees of freedom
/// (Boost.Math): 12.706 for 95% and 1 dof. 0 for dof 0.
double student_t_quantile(double confidence, size_t dof);

/// The order-statistic interval of the median of n values: k (1-based) such that [x(k), x(n+1-k)] is the
/// narrowest interval whose coverage 1 - 2 P(Binomial(n, 1/2) <= k - 1) reaches `confidence` percent, or
/// k = 1 ([min, max]) when none does; `coverage_pct` is that exact coverage. None when n < 2.
struct MedianInterval {
    size_t k = 0;
    double coverage_pct = 0;
};
std::optional<MedianInterval> median_interval(size_t n, double confidence);

/// The smallest n whose median interval reaches `confidence` percent (6 for 95%, 8 for 99%).
size_t repetitions_for_confidence(double confidence);

/// B/A of two samples: the ratio of their medians and the Hodges-Lehmann / Mann-Whitney interval for it.
/// On log values, the interval for the shift between the two samples is [d(k), d(mn+1-k)] of the m x n
/// pairwise differences log b_j - log a_i, with k from the exact null distribution of the Mann-Whitney
/// U statistic; it is distribution-free under the assumption that B is A scaled (a shift on log values).
struct RatioEstimate {
    using Verdict = RatioVerdict;
    std::optional<double> ratio;            ///< median B / median A (none when A's median is 0)
    std::optional<double> ci_low, ci_high;  ///< the interval of B/A; none when nothing can be claimed
    std::optional<double> ci_confidence;    ///< its exact coverage, percent (at most what was asked)
    Verdict verdict = Verdict::NotTestable;
    std::string why;  ///< for TooFew and NotTestable: what is missing, in words
    /// The exact two-sided p-value of the Mann-Whitney test of "no shift" (the test the interval inverts:
    /// the interval excludes 1 exactly when p <= 1 - confidence/100); none when not testable.
    std::optional<double> p_value;
    /// With a margin: the p-value of the two one-sided Mann-Whitney tests (TOST) of "B/A <= 1 - m" and
    /// "B/A >= 1 + m", the larger of the two; p <= alpha exactly when the 1 - 2 alpha interval lies inside
    /// [1 - m, 1 + m]. None without a margin or when not testable.
    std::optional<double> equivalence_p_value;
};
/// `margin_pct` (optional, 0 < m < 100) asks for the equivalence test as well.
RatioEstimate ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                             std::optional<double> margin_pct = std::nullopt);

/// p-values adjusted for being `p.size()` tests, in the same order: Holm's step-down (adjusted p(i) =
/// max over j <= i of min(1, (N - j + 1) p(j)) in ascending order) controls the family-wise error rate,
/// Benjamini-Hochberg's step-up (min over j >= i of min(1, N p(j) / j)) the false discovery rate; None
/// returns them unchanged. A test is rejected at level alpha when its adjusted p-value is <= alpha.
std::vector<double> adjust_p_values(const std::vector<double>& p, PAdjustment method);

/// "holm", "bh" (also "fdr", "benjamini-hochberg") or "none"; throws nm::Error (Usage) naming --adjust otherwise.
PAdjustment parse_adjustment(const std::string& name);
/// "holm", "bh" or "none".
std::string adjustment_name(PAdjustment method);
/// "Holm (family-wise error)", "Benjamini-Hochberg (false discovery rate)", "none (each cell on its own)".
std::string adjustment_description(PAdjustment method);

/// The smallest number of repetitions on each side for which ratio_interval can reach `confidence`
/// percent (4 for 95%: 1 - 2 / C(8, 4) = 97.1%; 5 for 99%).
size_t repetitions_for_ratio(double confidence);

/// True when `s` (a summary at the precision's confidence) meets `p`: at least min_repetitions values, a
/// median interval whose coverage reaches p.confidence, and both of its ends within ci_pct % of the median.
bool precision_met(const MetricSummary& s, const PrecisionSpec& p);

/// The figures of one run a sweep summarizes, by metric name: throughput_bps, packets_per_s,
/// cpu_sender_pct, cpu_receiver_pct (the engines' threads), system_busy_pct, softirq_pct, steal_pct,
/// busiest_cpu_busy_pct (system-wide, the larger of the two ends), tcp_retransmits, loss_pct (UDP),
/// segments_per_packet (TCP, when the interface counters gave it), engine_service_demand_us_per_kb,
/// sender_service_demand_us_per_kb, receiver_service_demand_us_per_kb (netperf's, per end); request/response runs add rr_transactions_per_s, rr_mean_us,
/// rr_p50_us, rr_p90_us, rr_p99_us, rr_p999_us, rr_max_us (latency, microseconds) and
/// rr_cpu_us_per_transaction_sender/_receiver (each end's engine CPU per transaction).
/// In a sweep, the first run after each change adds link_down_s and settle_s (RunResult::link).
std::map<std::string, double> run_metrics(const RunResult& run);

/// The names run_metrics can produce, in alphabetical order.
std::vector<std::string> known_metrics();

/// The figure a test is told by: rr_transactions_per_s for a request/response test (TCP_RR, UDP_RR,
/// TCP_CRR: the byte rate of 1-byte transactions says little), throughput_bps for every other.
std::string headline_metric(const TestSpec& test);

/// The metric a precision judges a cell of `test` by: the one it names, or, when it names none, the
/// test's headline_metric().
std::string precision_metric(const PrecisionSpec& precision, const TestSpec& test);

/// The values of `metric` over `runs`, in run order (runs without it, e.g. loss_pct of TCP, left out).
std::vector<double> metric_values(const std::vector<RunResult>& runs, const std::string& metric);

/// Every metric of run_metrics summarized over `runs`, the median intervals at `confidence` percent.
std::map<std::string, MetricSummary> summarize_runs(const std::vector<RunResult>& runs, double confidence = 95);

}  // namespace nm
