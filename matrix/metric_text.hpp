#pragma once
// Figures in words, as every report and the results' notes write them: a metric's value in human units and
// a cell's status word.
#include <string>

#include "matrix/model/sweep_types.hpp"

namespace nm {

/// A metric value in human units: "9.41 Gbit/s" for *_bps, "812 kpps" for packets_per_s, "38.2%" for
/// *_pct, "51.2k trans/s" for rr_transactions_per_s, "14.8 us" for latencies (*_us) and CPU per
/// transaction, plain otherwise.
std::string format_metric(const std::string& metric, double value);

/// Lower-case status word as the results file writes it ("path_mtu_blackhole").
std::string status_name(CellStatus status);

/// `value` with `digits` decimals ("%.*f").
std::string fixed_text(double value, int digits);

}  // namespace nm
