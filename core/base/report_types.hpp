#pragma once
// Value types of a comparison: two results files cell by cell (compare), or the cells of one file against
// a reference profile (report --against). Produced by matrix/report, rendered as tables there and as JSON
// by json_codec_matrix.cpp, handed to Python as that JSON. Ratios are B/A.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/sweep_types.hpp"

namespace nm {

/// What a ratio's interval lets one say.
enum class RatioVerdict {
    Significant,      ///< the interval reaches the asked confidence and excludes 1
    NotSignificant,   ///< it reaches the asked confidence and includes 1
    TooFew,           ///< too few repetitions for the asked confidence (or one run on a side): nothing claimed
    NotTestable,      ///< no figures on a side, or a value is 0 or negative (no logarithm)
};

/// One cell matched in two results files (or a cell and its reference-profile cell).
struct CompareRow {
    std::string profile;            ///< A's profile (report --against: the compared cell's)
    std::string traffic;
    uint32_t mtu = 0;
    std::string key_a, key_b;
    std::map<std::string, bool> features_requested;   ///< B's settings: what matched the two cells
    TrafficEntry test;
    CellStatus status_a = CellStatus::Ok, status_b = CellStatus::Ok;
    std::optional<MetricSummary> a, b;
    std::optional<bool> precision_met_a, precision_met_b;   ///< as each cell records it (none: no precision asked)
    size_t disturbed_a = 0, disturbed_b = 0;                ///< runs measured under interference, each side
    std::optional<double> ratio;          ///< median B / median A, when both have figures and A's is not 0
    std::optional<double> ratio_ci_low, ratio_ci_high;   ///< the interval of B/A (see matrix/stats.hpp)
    std::optional<double> ratio_ci_confidence;           ///< its exact coverage, percent
    RatioVerdict verdict = RatioVerdict::NotTestable;
    bool significant = false;             ///< verdict == Significant
    std::string why;                      ///< for TooFew and NotTestable, in words
};

/// Two results files cell by cell, or one file against a reference profile.
struct Comparison {
    std::string metric;
    std::string label_a, label_b;         ///< file names; report --against: the reference profile, the file
    double confidence = 95;               ///< asked of every ratio interval, percent
    std::string reference;                ///< report --against: the reference profile; "" for compare
    std::vector<CompareRow> rows;         ///< cells in both, in A's order (report --against: the file's order)
    std::vector<std::string> only_a;      ///< keys of cells only in A (report --against: cells without a reference)
    std::vector<std::string> only_b;
    /// compare: what differs between the files' hosts where it matters ("local kernel: 6.1.0 vs 6.5.0"):
    /// kernel, CPU model, driver, firmware, congestion control, on each end both files know.
    std::vector<std::string> host_differences;
};

}  // namespace nm
