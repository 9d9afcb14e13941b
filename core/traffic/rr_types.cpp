#include "core/traffic/rr_types.hpp"

namespace nm {

LatencySummary summarize_latency(const LatencyHistogram& h) {
    LatencySummary s;
    if (h.count() == 0) return s;
    s.mean = h.mean_ns() / 1000;
    s.p50 = h.percentile_ns(50) / 1000;
    s.p90 = h.percentile_ns(90) / 1000;
    s.p99 = h.percentile_ns(99) / 1000;
    s.p999 = h.percentile_ns(99.9) / 1000;
    s.max = static_cast<double>(h.max_ns()) / 1000;
    return s;
}

}  // namespace nm
