#include "matrix/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "core/base/error.hpp"
#include "matrix/profile_metrics.hpp"

namespace nm {
namespace {

// Beyond this many pairs the exact null distribution of U (an O(m n * m n) table) gives way to the
// normal approximation with continuity correction; sweeps stay far below it (12 x 12 = 144).
constexpr size_t kExactPairs = 10000;

// P(U <= u) for u = 0..m*n under the null hypothesis, U = #{(i, j): a_i > b_j} over all C(m+n, m)
// equally likely arrangements. The largest of the m+n values is an a with probability m/(m+n) (it beats
// all n b's) or a b, which gives the recurrence P[m][n](u) = m/(m+n) P[m-1][n](u-n) + n/(m+n) P[m][n-1](u).
std::vector<double> mann_whitney_cdf(size_t m, size_t n) {
    // row[j] is the distribution for (i, j), i the current count of a's.
    std::vector<std::vector<double>> prev(n + 1), row(n + 1);
    for (size_t j = 0; j <= n; ++j) prev[j] = {1.0};  // i = 0: U is 0
    for (size_t i = 1; i <= m; ++i) {
        row[0] = {1.0};
        for (size_t j = 1; j <= n; ++j) {
            std::vector<double> p(i * j + 1, 0.0);
            const double wa = static_cast<double>(i) / static_cast<double>(i + j);
            const double wb = static_cast<double>(j) / static_cast<double>(i + j);
            for (size_t u = 0; u < prev[j].size(); ++u) p[u + j] += wa * prev[j][u];
            for (size_t u = 0; u < row[j - 1].size(); ++u) p[u] += wb * row[j - 1][u];
            row[j] = std::move(p);
        }
        std::swap(prev, row);
    }
    std::vector<double> cdf = prev[n];
    for (size_t u = 1; u < cdf.size(); ++u) cdf[u] += cdf[u - 1];
    return cdf;
}

double median_of_sorted(const std::vector<double>& v) {
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double student_t_quantile(double confidence, size_t dof) {
    if (dof == 0) return 0;
    const boost::math::students_t t(static_cast<double>(dof));
    return boost::math::quantile(boost::math::complement(t, (1 - confidence / 100) / 2));
}

std::optional<MedianInterval> median_interval(size_t n, double confidence) {
    if (n < 2) return std::nullopt;
    const boost::math::binomial b(static_cast<double>(n), 0.5);
    const auto coverage = [&](size_t k) { return 100 * (1 - 2 * boost::math::cdf(b, static_cast<double>(k - 1))); };
    MedianInterval best{1, coverage(1)};
    for (size_t k = 2; 2 * k <= n; ++k) {
        const double c = coverage(k);
        if (c < confidence - 1e-9) break;
        best = {k, c};
    }
    return best;
}

size_t repetitions_for_confidence(double confidence) {
    for (size_t n = 2; n < 100000; ++n) {
        if (median_interval(n, confidence)->coverage_pct >= confidence) return n;
    }
    return 100000;
}

MetricSummary summarize(std::vector<double> values, double confidence) {
    MetricSummary s;
    s.n = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    s.min = values.front();
    s.max = values.back();
    s.median = median_of_sorted(values);
    if (const auto iv = median_interval(n, confidence)) {
        s.median_ci_low = values[iv->k - 1];
        s.median_ci_high = values[n - iv->k];
        s.median_ci_confidence = iv->coverage_pct;
    }
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
    if (n >= 2) {
        double sq = 0;
        for (double v : values) sq += (v - s.mean) * (v - s.mean);
        s.stddev = std::sqrt(sq / static_cast<double>(n - 1));
        s.ci95 = student_t_quantile(95, n - 1) * s.stddev / std::sqrt(static_cast<double>(n));
    }
    return s;
}

namespace {

// The null distribution of U for m and n: exact up to kExactPairs pairs, the normal approximation with
// continuity correction beyond. cdf(u) = P(U <= u); u below 0 gives 0, u at or above m n gives 1.
class MannWhitneyNull {
public:
    MannWhitneyNull(size_t m, size_t n) : m_(m), n_(n) {
        if (m * n <= kExactPairs) exact_ = mann_whitney_cdf(m, n);
    }
    double cdf(double u) const {
        if (u < 0) return 0;
        const double pairs = static_cast<double>(m_ * n_);
        if (u >= pairs) return 1;
        if (!exact_.empty()) return exact_[static_cast<size_t>(std::floor(u + 1e-9))];
        const double mu = pairs / 2;
        const double sigma = std::sqrt(pairs * static_cast<double>(m_ + n_ + 1) / 12);
        return boost::math::cdf(boost::math::normal(), (std::floor(u + 1e-9) + 0.5 - mu) / sigma);
    }

private:
    size_t m_, n_;
    std::vector<double> exact_;
};

// #{(i, j): log b_j - log a_i > delta}, and the same with the differences equal to delta counted too. A
// tie is counted against whichever claim is tested, so the p-values below err on the side of claiming less.
double shifts_above(const std::vector<double>& sorted_d, double delta) {
    return static_cast<double>(sorted_d.end() - std::upper_bound(sorted_d.begin(), sorted_d.end(), delta + 1e-12));
}
double shifts_at_or_above(const std::vector<double>& sorted_d, double delta) {
    return static_cast<double>(sorted_d.end() - std::lower_bound(sorted_d.begin(), sorted_d.end(), delta - 1e-12));
}

}  // namespace

std::vector<double> adjust_p_values(const std::vector<double>& p, PAdjustment method) {
    const size_t n = p.size();
    if (method == PAdjustment::None || n == 0) return p;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
    std::vector<double> out(n);
    if (method == PAdjustment::Holm) {
        double running = 0;
        for (size_t i = 0; i < n; ++i) {
            running = std::max(running, std::min(1.0, static_cast<double>(n - i) * p[order[i]]));
            out[order[i]] = running;
        }
    } else {
        double running = 1;
        for (size_t i = n; i-- > 0;) {
            running = std::min(running, std::min(1.0, static_cast<double>(n) * p[order[i]] / static_cast<double>(i + 1)));
            out[order[i]] = running;
        }
    }
    return out;
}

PAdjustment parse_adjustment(const std::string& name) {
    if (name == "holm") return PAdjustment::Holm;
    if (name == "bh" || name == "fdr" || name == "benjamini-hochberg") return PAdjustment::BenjaminiHochberg;
    if (name == "none") return PAdjustment::None;
    throw usage_error("--adjust: expected holm, bh or none, got \"" + name + "\"");
}

std::string adjustment_name(PAdjustment method) {
    return method == PAdjustment::Holm ? "holm" : method == PAdjustment::BenjaminiHochberg ? "bh" : "none";
}

std::string adjustment_description(PAdjustment method) {
    return method == PAdjustment::Holm                ? "Holm (family-wise error rate)"
           : method == PAdjustment::BenjaminiHochberg ? "Benjamini-Hochberg (false discovery rate)"
                                                      : "none (each cell on its own)";
}

RatioEstimate ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double confidence, std::optional<double> margin_pct) {
    RatioEstimate r;
    if (a.empty() || b.empty()) {
        r.why = "no figures on one side";
        return r;
    }
    std::vector<double> sa = a, sb = b;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    const double ma = median_of_sorted(sa);
    if (ma != 0) r.ratio = median_of_sorted(sb) / ma;
    if (sa.front() <= 0 || sb.front() <= 0) {
        r.why = "a value is 0 or negative, so there is no ratio interval";
        return r;
    }
    const size_t m = sa.size(), n = sb.size();
    const std::string counts = std::to_string(m) + "+" + std::to_string(n) + " runs";
    if (m < 2 || n < 2) {
        r.verdict = RatioEstimate::Verdict::TooFew;
        r.why = counts + ": one run on a side claims nothing";
        return r;
    }
    // k: the largest with P(U <= k-1) <= alpha/2; coverage 1 - 2 P(U <= k-1).
    // A little slack: the probabilities are sums of products, the confidence was typed (3+3 reach 90% exactly).
    const double half_alpha = (1 - confidence / 100) / 2 + 1e-12;
    const size_t pairs = m * n;
    size_t k = 0;
    double tail = 0;  // P(U <= k-1) for the chosen k
    if (pairs <= kExactPairs) {
        const auto cdf = mann_whitney_cdf(m, n);
        while (k < pairs / 2 && cdf[k] <= half_alpha) ++k;
        // Now P(U <= k-1) <= alpha/2 < P(U <= k) (or k is at its limit); k = 0 means not even [d(1), d(mn)].
        tail = k == 0 ? cdf[0] : cdf[k - 1];
        if (k == 0) {
            k = 1;
            const double coverage = 100 * (1 - 2 * cdf[0]);
            r.verdict = RatioEstimate::Verdict::TooFew;
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s: at most %.1f%% confidence, %.1f%% asked", counts.c_str(), coverage, confidence);
            r.why = buf;
        }
    } else {
        const double mu = static_cast<double>(pairs) / 2;
        const double sigma = std::sqrt(static_cast<double>(pairs) * static_cast<double>(m + n + 1) / 12);
        const boost::math::normal z;
        const auto cdf = [&](double u) { return boost::math::cdf(z, (u + 0.5 - mu) / sigma); };
        while (k < pairs / 2 && cdf(static_cast<double>(k)) <= half_alpha) ++k;
        tail = k == 0 ? cdf(0) : cdf(static_cast<double>(k - 1));
        if (k == 0) k = 1;
    }
    std::vector<double> d;
    d.reserve(pairs);
    for (double x : sa) {
        for (double y : sb) d.push_back(std::log(y) - std::log(x));
    }
    std::sort(d.begin(), d.end());
    r.ci_low = std::exp(d[k - 1]);
    r.ci_high = std::exp(d[pairs - k]);
    r.ci_confidence = 100 * (1 - 2 * tail);
    if (r.verdict == RatioEstimate::Verdict::TooFew) return r;
    r.verdict = (*r.ci_low > 1 || *r.ci_high < 1) ? RatioEstimate::Verdict::Significant : RatioEstimate::Verdict::NotSignificant;
    // The tests the interval inverts, as p-values, so that many cells can be judged together. G(delta) =
    // #{d > delta}; under a shift of delta it has U's null distribution (symmetric about m n / 2).
    const MannWhitneyNull null(m, n);
    const double all = static_cast<double>(pairs);
    r.p_value = std::min(1.0, 2 * std::min(null.cdf(shifts_at_or_above(d, 0)), null.cdf(all - shifts_above(d, 0))));
    if (margin_pct) {
        const double m_frac = *margin_pct / 100;
        // "B/A <= 1 - m" is refuted by many differences above log(1 - m): P(U >= G) = P(U <= mn - G);
        // "B/A >= 1 + m" by few above log(1 + m): P(U <= G).
        const double p_low = null.cdf(all - shifts_above(d, std::log(1 - m_frac)));
        const double p_high = null.cdf(shifts_at_or_above(d, std::log(1 + m_frac)));
        r.equivalence_p_value = std::max(p_low, p_high);
    }
    return r;
}

size_t repetitions_for_ratio(double confidence) {
    // With n and n, the widest interval [d(1), d(n n)] covers 1 - 2 / C(2n, n).
    double choose = 6;  // C(4, 2)
    for (size_t n = 2; n < 1000; ++n) {
        if (100 * (1 - 2 / choose) >= confidence) return n;
        choose = choose * static_cast<double>(2 * n + 1) * static_cast<double>(2 * n + 2) / (static_cast<double>(n + 1) * static_cast<double>(n + 1));
    }
    return 1000;
}

bool precision_met(const MetricSummary& s, const PrecisionSpec& p) {
    if (s.n < p.min_repetitions || !s.median_ci_low || !s.median_ci_high || !s.median_ci_confidence) return false;
    // A tolerance for the coverage: it is computed, the asked confidence typed.
    if (*s.median_ci_confidence < p.confidence - 1e-9) return false;
    const double allowed = p.ci_pct / 100 * std::fabs(s.median);
    return s.median - *s.median_ci_low <= allowed && *s.median_ci_high - s.median <= allowed;
}

std::map<std::string, double> run_metrics(const RunResult& run) {
    std::map<std::string, double> m{
        {"throughput_bps", run.throughput_bps},
        {"packets_per_s", run.packets_per_s},
        {"cpu_sender_pct", run.sender.cpu.util_pct},
        {"cpu_receiver_pct", run.receiver.cpu.util_pct},
        {"system_busy_pct", std::max(run.sender.system.busy_pct, run.receiver.system.busy_pct)},
        {"softirq_pct", std::max(run.sender.system.softirq_pct, run.receiver.system.softirq_pct)},
        {"steal_pct", std::max(run.sender.system.steal_pct, run.receiver.system.steal_pct)},
        {"busiest_cpu_busy_pct", std::max(run.sender.system.busiest_cpu_busy_pct, run.receiver.system.busiest_cpu_busy_pct)},
        {"tcp_retransmits", static_cast<double>(run.tcp_retransmits)},
        {"engine_service_demand_us_per_kb", run.engine_service_demand_us_per_kb},
        {"sender_service_demand_us_per_kb", run.sender_service_demand_us_per_kb},
        {"receiver_service_demand_us_per_kb", run.receiver_service_demand_us_per_kb},
    };
    if (run.loss) m["loss_pct"] = run.loss->percent;
    if (run.iperf3_peer) {
        // A stock iperf3 far end: its end was not measured, so its figures are left out (not zero), the
        // engines' figure covers one engine only and goes too, and the system-wide ones are this end's.
        // The peer's own CPU (iperf3's cpu_util of its process) is its metric of its own.
        const bool peer_sends = run.spec.direction == Direction::Reverse;
        const EndMeasurement& local = peer_sends ? run.receiver : run.sender;
        m.erase(peer_sends ? "cpu_sender_pct" : "cpu_receiver_pct");
        m.erase(peer_sends ? "sender_service_demand_us_per_kb" : "receiver_service_demand_us_per_kb");
        m.erase("engine_service_demand_us_per_kb");
        m["system_busy_pct"] = local.system.busy_pct;
        m["softirq_pct"] = local.system.softirq_pct;
        m["steal_pct"] = local.system.steal_pct;
        m["busiest_cpu_busy_pct"] = local.system.busiest_cpu_busy_pct;
        m["peer_cpu_pct"] = run.iperf3_peer->cpu_total_pct;
    }
    // Only the first run after a cell's change has them: the runs after it had no change before them.
    if (run.link) {
        m["link_down_s"] = run.link->link_down_s;
        m["settle_s"] = run.link->settle_s;
    }
    add_profile_metrics(run, m);
    if (run.segments_per_packet > 0) m["segments_per_packet"] = run.segments_per_packet;
    if (run.rr) {
        // Request/response runs: their rate and the latency summary of each run's merged histogram.
        const RrStats& rr = *run.rr;
        m["rr_transactions_per_s"] = rr.transactions_per_s;
        m["rr_mean_us"] = rr.latency_us.mean;
        m["rr_p50_us"] = rr.latency_us.p50;
        m["rr_p90_us"] = rr.latency_us.p90;
        m["rr_p99_us"] = rr.latency_us.p99;
        m["rr_p999_us"] = rr.latency_us.p999;
        m["rr_max_us"] = rr.latency_us.max;
        m["rr_cpu_us_per_transaction_sender"] = rr.cpu_us_per_transaction_sender;
        m["rr_cpu_us_per_transaction_receiver"] = rr.cpu_us_per_transaction_receiver;
    }
    return m;
}

std::vector<std::string> known_metrics() {
    RunResult udp;
    udp.loss = LossStats{};
    udp.segments_per_packet = 1;  // not UDP's, but a name the set must hold
    udp.rr = RrStats{};
    udp.link = ChangeLink{};
    std::vector<std::string> names{"peer_cpu_pct"};  // only runs against a stock iperf3 far end have it
    for (const auto& [name, value] : run_metrics(udp)) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
}

std::string headline_metric(const TestSpec& test) { return test.pattern == TrafficPattern::Stream ? "throughput_bps" : "rr_transactions_per_s"; }

std::string precision_metric(const PrecisionSpec& precision, const TestSpec& test) {
    return precision.metric.empty() ? headline_metric(test) : precision.metric;
}

std::vector<double> metric_values(const std::vector<RunResult>& runs, const std::string& metric) {
    std::vector<double> out;
    for (const auto& r : runs) {
        const auto m = run_metrics(r);
        if (const auto it = m.find(metric); it != m.end()) out.push_back(it->second);
    }
    return out;
}

std::map<std::string, MetricSummary> summarize_runs(const std::vector<RunResult>& runs, double confidence) {
    std::map<std::string, std::vector<double>> samples;
    for (const auto& r : runs) {
        for (const auto& [name, value] : run_metrics(r)) samples[name].push_back(value);
    }
    std::map<std::string, MetricSummary> out;
    for (auto& [name, values] : samples) out[name] = summarize(std::move(values), confidence);
    return out;
}

}  // namespace nm
