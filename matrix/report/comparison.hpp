#pragma once
// Compare: two results files (or the profiles of one) matched cell by cell, B/A of a metric with its
// interval and the adjusted verdicts, built as values (Comparison) and then rendered.
#include <string>
#include <vector>

#include "matrix/model/report_types.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/report/table.hpp"

namespace nm {

/// What differs between two files' hosts where it changes results: on each end ("local", "remote") that
/// both files describe, the kernel, the CPU model, the interface's driver and firmware and the TCP
/// congestion control, each as "local kernel: A vs B". Empty values (not recorded) are not compared.
std::vector<std::string> host_differences(const ResultsFile& a, const ResultsFile& b);

/// Matches cells by their settings (requested features, MTU and the test's fields; profile and test
/// names do not need to agree) and compares `metric`: B/A with its interval at `confidence` percent
/// (matrix/stats.hpp ratio_interval). Throws nm::Error (Usage) for an unknown metric.
/// The rows' p-values are adjusted together (options.adjustment, Holm by default, over the rows with
/// enough repetitions: Comparison::tested_cells) and each row's verdict is the adjusted one; with
/// options.margin_pct the equivalence tests are made and adjusted the same way.
Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric, const std::string& label_a,
                           const std::string& label_b, const ComparisonOptions& options = {});

/// Every cell of `results` against the cell of the `reference` profile at the same MTU and traffic
/// (A = the reference cell, B = the cell), as compare_results does it. Throws nm::Error (Usage) for an
/// unknown profile (listing the file's) or metric.
Comparison compare_to_profile(const ResultsFile& results, const std::string& metric, const std::string& reference, const std::string& label,
                              const ComparisonOptions& options = {});

/// Renders a comparison: A, B, B/A marked "*" where the adjusted test finds a difference, "=" where the
/// adjusted equivalence tests find B/A inside the margin, "*=" both, "≈" neither (no mark when the
/// repetitions are too few to claim anything), the interval, and the cells found in one file only; the
/// notes name the adjustment and over how many cells. Json: the codec's JSON of the comparison.
std::string render_comparison(const Comparison& cmp, TableFormat format);

/// The mark of a row: "*", "=", "*=", "≈", or "" when nothing can be claimed.
std::string comparison_mark(const CompareRow& row);

/// B/A of a row to `digits` decimals with its mark (" * ", " = ", " *=", " ≈ ", or three spaces for none); "" without a ratio.
std::string comparison_ratio_text(const CompareRow& row, int digits);

/// The row's interval of B/A as "low..high" (3 decimals) when a verdict was reached, else why not.
std::string comparison_interval_text(const CompareRow& row);

/// The notes every comparison carries: what B/A and its interval are, the marks, and how many marks
/// chance alone would give.
std::vector<std::string> comparison_notes(const Comparison& cmp);

/// Renders report --against: the matrix of B/A against the reference profile, with the same marks.
std::string render_against(const Comparison& cmp, TableFormat format);

}  // namespace nm
