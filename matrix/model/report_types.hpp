#pragma once
// Value types of a comparison: two results files cell by cell (compare), or the cells of one file against
// a reference profile (report --against). Produced by matrix/report, rendered as tables there and as JSON
// by comparison_codec.hpp, handed to Python as that JSON. Ratios are B/A.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

/// What a ratio's interval lets one say.
enum class RatioVerdict {
    Significant,     ///< the interval reaches the asked confidence and excludes 1
    NotSignificant,  ///< it reaches the asked confidence and includes 1
    TooFew,          ///< too few repetitions for the asked confidence (or one run on a side): nothing claimed
    NotTestable,     ///< no figures on a side, or a value is 0 or negative (no logarithm)
    Equivalent,      ///< not significant, and within the comparison's margin (two one-sided tests)
};

/// How the p-values of a comparison's cells are adjusted for being many (matrix/stats.hpp adjust_p_values).
enum class PAdjustment {
    Holm,               ///< Holm's step-down: the family-wise error rate (any false * among all cells) at most alpha
    BenjaminiHochberg,  ///< Benjamini-Hochberg step-up: the expected share of false * among the * at most alpha
    None,               ///< each cell on its own (alpha per cell)
};

/// What a comparison is asked: the confidence of each ratio interval, the adjustment over its cells and
/// the equivalence margin.
struct ComparisonOptions {
    double confidence = 95;  ///< percent; alpha = 1 - confidence / 100
    PAdjustment adjustment = PAdjustment::Holm;
    std::optional<double> margin_pct;  ///< with a margin m: "=" when B/A is shown inside [1 - m, 1 + m]
};

/// One cell matched in two results files (or a cell and its reference-profile cell).
struct CompareRow {
    std::string profile;  ///< A's profile (report --against: the compared cell's)
    std::string traffic;
    uint32_t mtu = 0;
    std::string key_a, key_b;
    std::map<std::string, bool> features_requested;  ///< B's settings: what matched the two cells
    TrafficEntry test;
    CellStatus status_a = CellStatus::Ok, status_b = CellStatus::Ok;
    std::optional<MetricSummary> a, b;
    std::optional<bool> precision_met_a, precision_met_b;  ///< as each cell records it (none: no precision asked)
    size_t disturbed_a = 0, disturbed_b = 0;               ///< runs measured under interference, each side
    std::optional<double> ratio;                           ///< median B / median A, when both have figures and A's is not 0
    std::optional<double> ratio_ci_low, ratio_ci_high;     ///< the interval of B/A (see matrix/stats.hpp)
    std::optional<double> ratio_ci_confidence;             ///< its exact coverage, percent
    /// The exact two-sided Mann-Whitney p-value of "B is A" (no shift on log values); none when not tested.
    std::optional<double> p_value;
    std::optional<double> p_adjusted;  ///< p_value adjusted over the comparison's tested cells
    /// With a margin: the p-value of the two one-sided tests (the larger of the two) that B/A lies inside
    /// [1 - m, 1 + m], and adjusted like p_value (as a family of its own).
    std::optional<double> equivalence_p_value, equivalence_p_adjusted;
    /// Significant, NotSignificant or Equivalent from the adjusted p-values (significant wins when both
    /// hold); TooFew, NotTestable as the interval found them.
    RatioVerdict verdict = RatioVerdict::NotTestable;
    RatioVerdict verdict_unadjusted = RatioVerdict::NotTestable;  ///< the interval's own verdict (no margin, no adjustment)
    bool significant = false;                                     ///< p_adjusted <= alpha
    bool equivalent = false;                                      ///< equivalence_p_adjusted <= alpha
    std::string why;                                              ///< for TooFew and NotTestable, in words
};

constexpr auto json_fields(const CompareRow*) {
    using S = CompareRow;
    return field_list(field("profile", &S::profile), field("traffic", &S::traffic), field("mtu", &S::mtu), field("key_a", &S::key_a),
                      field("key_b", &S::key_b), field("features_requested", &S::features_requested), field("test", &S::test),
                      field("status_a", &S::status_a), field("status_b", &S::status_b), field("a", &S::a), field("b", &S::b),
                      field("precision_met_a", &S::precision_met_a), field("precision_met_b", &S::precision_met_b),
                      field("disturbed_a", &S::disturbed_a), field("disturbed_b", &S::disturbed_b), field("ratio", &S::ratio),
                      field("ratio_ci_low", &S::ratio_ci_low), field("ratio_ci_high", &S::ratio_ci_high),
                      field("ratio_ci_confidence", &S::ratio_ci_confidence), field("verdict", &S::verdict),
                      field("verdict_unadjusted", &S::verdict_unadjusted), field("significant", &S::significant), field("equivalent", &S::equivalent),
                      field("p_value", &S::p_value), field("p_adjusted", &S::p_adjusted), field("equivalence_p_value", &S::equivalence_p_value),
                      field("equivalence_p_adjusted", &S::equivalence_p_adjusted), field("why", &S::why));
}

/// Two results files cell by cell, or one file against a reference profile.
struct Comparison {
    std::string metric;
    std::string label_a, label_b;                ///< file names; report --against: the reference profile, the file
    double confidence = 95;                      ///< asked of every ratio interval, percent
    PAdjustment adjustment = PAdjustment::Holm;  ///< of the p-values over the tested cells
    size_t tested_cells = 0;                     ///< the family adjusted over: rows with enough repetitions on both sides
    std::optional<double> margin_pct;            ///< the equivalence margin, percent; none: no equivalence asked
    std::string reference;                       ///< report --against: the reference profile; "" for compare
    std::vector<CompareRow> rows;                ///< cells in both, in A's order (report --against: the file's order)
    std::vector<std::string> only_a;             ///< keys of cells only in A (report --against: cells without a reference)
    std::vector<std::string> only_b;
    /// compare: what differs between the files' hosts where it matters ("local kernel: 6.1.0 vs 6.5.0"):
    /// kernel, CPU model, driver, firmware, congestion control, on each end both files know.
    std::vector<std::string> host_differences;
};

/// The codec adds "method" (words) and "adjustment" (its name); written only.
constexpr auto json_fields_and_more(const Comparison*) {
    using S = Comparison;
    return field_list(field("metric", &S::metric), field("a", &S::label_a), field("b", &S::label_b), field("confidence", &S::confidence),
                      field("tested_cells", &S::tested_cells), field("margin_pct", &S::margin_pct),
                      field("reference", &S::reference, kFieldNullIfEmpty), field("rows", &S::rows), field("only_a", &S::only_a),
                      field("only_b", &S::only_b), field("host_differences", &S::host_differences));
}

}  // namespace nm
