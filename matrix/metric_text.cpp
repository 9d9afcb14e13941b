#include "matrix/metric_text.hpp"

#include <cmath>
#include <cstdio>

#include "matrix/model/results_codec.hpp"

namespace nm {
namespace {

// Three significant digits, as people read throughput.
std::string sig3(double v) {
    const double a = std::fabs(v);
    return fixed_text(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

}  // namespace

std::string fixed_text(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
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
    if (ends_with("transactions_per_s")) {
        if (std::fabs(value) >= 1e3) return sig3(value / 1e3) + "k trans/s";
        return sig3(value) + " trans/s";
    }
    if (ends_with("_us") || ends_with("_us_per_transaction_sender") || ends_with("_us_per_transaction_receiver")) {
        return sig3(value) + " us";
    }
    if (ends_with("_per_s")) {
        if (std::fabs(value) >= 1e6) return sig3(value / 1e6) + " Mpps";
        if (std::fabs(value) >= 1e3) return sig3(value / 1e3) + " kpps";
        return sig3(value) + " pps";
    }
    if (ends_with("_pct") || metric.rfind("cpu:", 0) == 0) return fixed_text(value, 1) + "%";
    return sig3(value);
}

}  // namespace nm
