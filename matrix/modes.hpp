#pragma once
// Modes of a cell's repetitions, and the placement that explains them. A single TCP stream on a VM (and
// RSS on a real NIC) runs in one of a few modes chosen when its connection starts: the median of such a
// cell lies between them and no run had it. The gap test here finds the modes; the runs' recorded
// placement (where the receive softirq and the engine threads ran) says what sets them apart.
#include <string>
#include <vector>

#include "core/traffic/traffic_types.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

/// The gap test: the sorted figures are cut into two or three runs of neighbours ("modes") when each mode
/// has at least `min_per_mode` runs and every gap between modes is at least `min_gap_pct` percent of the
/// median of all figures and at least `min_gap_ratio` times the widest mode's range (max - min). Three
/// modes are preferred to two when a partition into three qualifies; among qualifying partitions, the one
/// whose smallest gap is the largest multiple of its widest range. Fewer than `min_runs` figures are never
/// split. Samples of one normal distribution (3% noise) are split in 1.1% of 6 runs, 0.16% of 8 and 0.03%
/// of 10; without the separation rule, whatever the noise, 6.0%, 1.5%, 0.3% (simulated:
/// tests/unit/matrix/stats_reference.py).
struct ModeTest {
    size_t min_runs = 6;
    size_t min_per_mode = 2;
    double min_gap_ratio = 2;
    double min_gap_pct = 5;
};

/// The test in words, for the results file and the notes.
std::string mode_test_description(const ModeTest& test = {});

/// The modes of `values`: groups of indices into `values`, ascending by value (each group's indices in
/// ascending order); one group holding every index when there is one mode, none for no values.
std::vector<std::vector<size_t>> find_modes(const std::vector<double>& values, const ModeTest& test = {});

/// A cell's modes of `metric` when more than one: each mode's summary at `confidence` (and, with
/// `precision`, whether its interval met it), and the placement that lines up with them
/// (explain_modes). None when the runs show one mode.
std::optional<CellModes> cell_modes(const std::vector<RunResult>& runs, const std::string& metric, double confidence,
                                    const std::optional<PrecisionSpec>& precision, const ModeTest& test = {});

/// Fills modes' placement fields: of the placements each run records (the receive softirq's CPU from
/// SO_INCOMING_CPU of the receiving sockets, the engine threads' CPUs, the receive queue's NAPI id), the
/// first that takes one value in each mode, different between modes, for at least 90% of the runs; the
/// explanation names it ("slow runs (8.20 Gbit/s): softirq and receiver on the same CPU, 3 of 3; fast runs
/// (13.1 Gbit/s): different CPUs, 4 of 4") or says that none does.
void explain_modes(const std::vector<RunResult>& runs, CellModes& cm);

/// A run's placement as the explanation reads it, by name: "softirq and receiver" (same CPU / different
/// CPUs), "sender and receiver threads" (same CPU / different CPUs), "receive softirq" (CPU n), "receiver
/// thread" (CPU n), "sender thread" (CPU n), "receive queue" (NAPI id n). A name is missing when the run
/// did not record what it needs.
std::vector<std::pair<std::string, std::string>> run_placement(const RunResult& run);

}  // namespace nm
