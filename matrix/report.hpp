#pragma once
// Report and compare: a results file decoded into table values, then rendered as text. Building a table
// and rendering it are separate steps, so the table, Markdown and CSV outputs show the same numbers.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/report_types.hpp"
#include "core/base/sweep_types.hpp"
#include "matrix/stats.hpp"

namespace nm {

/// How a table is rendered. JsonDocument (JSON) only for comparisons (compare, report --against).
enum class TableFormat { Text, Markdown, Csv, JsonDocument };

/// Parses "table", "md", "csv" or "json"; throws nm::Error (Usage) otherwise.
TableFormat parse_table_format(const std::string& name);

/// One entry of the matrix: a cell's status and the summaries of the chosen metric and of both engines'
/// CPU (process CPU, not system-wide busy: on a lab both ends share one machine, which is then always busy).
struct MatrixEntry {
    bool present = false;                 ///< false when the results have no such cell (yet)
    std::string key;
    CellStatus status = CellStatus::Ok;
    std::optional<MetricSummary> value;   ///< the chosen metric
    std::optional<MetricSummary> cpu_sender;     ///< cpu_sender_pct: the sending engine's CPU, % of one core
    std::optional<MetricSummary> cpu_receiver;   ///< cpu_receiver_pct: the receiving engine's CPU
    std::optional<bool> precision_met;    ///< as the cell records it (none: no precision asked)
    size_t disturbed_runs = 0;            ///< repetitions measured under interference
    std::string note;                     ///< error or duplicate_of, for the notes under the table
    std::optional<CellModes> modes;       ///< the chosen metric's modes when more than one (matrix/modes.hpp)
};

/// The matrix the way people post it: rows = offload profile × tuning values × traffic, columns = MTU.
struct MatrixTable {
    std::string metric;
    std::vector<uint32_t> mtus;
    struct Row {
        std::string profile;
        std::string traffic;
        std::vector<MatrixEntry> entries;   ///< one per MTU column
        std::map<std::string, std::string> axes;   ///< tuning axis -> value name (label and CSV columns)
    };
    std::vector<Row> rows;
    std::optional<PrecisionSpec> precision;   ///< the sweep's, for the marks' note
    std::string judged_by;                    ///< with a precision: the figure its cells were judged by, as the note words it
    InterferenceSpec interference;
    CpuAccounting cpu_accounting;             ///< the local host's, for the note on engine CPU
};

/// The metric a table of `results` shows when none is asked (--metric of sweep, report and compare):
/// rr_transactions_per_s when every cell that is not an rfc2544 table is a request/response test,
/// throughput_bps otherwise (and for a file without cells).
std::string default_metric(const ResultsFile& results);

/// Builds the matrix of `metric` (a name summarize_runs produces, e.g. "throughput_bps") from a results
/// file, in its config's order. Throws nm::Error (Usage) for a metric no cell has, listing those it has.
MatrixTable build_matrix(const ResultsFile& results, const std::string& metric);

/// The text of one entry as every rendering of the matrix shows it: the median of the metric in human
/// units (a cell with modes: each mode's median and the runs in each, "8.20 | 13.1 Gbit/s (4:3)") (with both engines' CPU unless the metric is one of them) and its marks ("?" precision not met,
/// "!" measured under interference), the status word of a cell not measured, "-" for a cell not run.
std::string matrix_entry_text(const MatrixEntry& entry, const std::string& metric);

/// The notes under a matrix: what the figures are, and how many cells carry each mark and why.
std::vector<std::string> matrix_notes(const MatrixTable& table);

/// Renders a matrix; each entry is "median (CPU%)" or the cell's status, marked "?" where the asked
/// precision was not met and "!" where a repetition was measured under interference, with notes that
/// count both and list every cell that is not ok and why (text and Markdown). CSV has one line per cell.
/// Throws nm::Error (Usage) for TableFormat::JsonDocument.
std::string render_matrix(const MatrixTable& table, TableFormat format);

/// Matches cells by their settings (requested features, MTU and the test's fields; profile and test
/// names do not need to agree) and compares `metric`: B/A with its interval at `confidence` percent
/// (matrix/stats.hpp ratio_interval). Throws nm::Error (Usage) for an unknown metric.
/// What differs between two files' hosts where it changes results: on each end ("local", "remote") that
/// both files describe, the kernel, the CPU model, the interface's driver and firmware and the TCP
/// congestion control, each as "local kernel: A vs B". Empty values (not recorded) are not compared.
std::vector<std::string> host_differences(const ResultsFile& a, const ResultsFile& b);

/// The rows' p-values are adjusted together (options.adjustment, Holm by default, over the rows with
/// enough repetitions: Comparison::tested_cells) and each row's verdict is the adjusted one; with
/// options.margin_pct the equivalence tests are made and adjusted the same way.
Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric,
                           const std::string& label_a, const std::string& label_b, const ComparisonOptions& options = {});

/// Every cell of `results` against the cell of the `reference` profile at the same MTU and traffic
/// (A = the reference cell, B = the cell), as compare_results does it. Throws nm::Error (Usage) for an
/// unknown profile (listing the file's) or metric.
Comparison compare_to_profile(const ResultsFile& results, const std::string& metric, const std::string& reference,
                              const std::string& label, const ComparisonOptions& options = {});

/// Renders a comparison: A, B, B/A marked "*" where the adjusted test finds a difference, "=" where the
/// adjusted equivalence tests find B/A inside the margin, "*=" both, "≈" neither (no mark when the
/// repetitions are too few to claim anything), the interval, and the cells found in one file only; the
/// notes name the adjustment and over how many cells. Json: the codec's JSON of the comparison.
std::string render_comparison(const Comparison& comparison, TableFormat format);

/// Renders a table of strings as every report does (text aligned, Markdown, CSV); `notes` follow the
/// table in text and Markdown. For the other reports of a results file (matrix/profile_report.hpp).
std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<std::string>& notes, TableFormat format);
/// The mark of a row: "*", "=", "*=", "≈", or "" when nothing can be claimed.
std::string comparison_mark(const CompareRow& row);

/// B/A of a row to `digits` decimals with its mark (" * ", " = ", " *=", " ≈ ", or three spaces for none); "" without a ratio.
std::string comparison_ratio_text(const CompareRow& row, int digits);

/// The row's interval of B/A as "low..high" (3 decimals) when a verdict was reached, else why not.
std::string comparison_interval_text(const CompareRow& row);

/// The notes every comparison carries: what B/A and its interval are, the marks, and how many marks
/// chance alone would give.
std::vector<std::string> comparison_notes(const Comparison& comparison);

/// Renders report --against: the matrix of B/A against the reference profile, with the same marks.
std::string render_against(const Comparison& comparison, TableFormat format);

/// A metric value in human units: "9.41 Gbit/s" for *_bps, "812 kpps" for packets_per_s, "38.2%" for
/// *_pct, "51.2k trans/s" for rr_transactions_per_s, "14.8 us" for latencies (*_us) and CPU per
/// transaction, plain otherwise.
std::string format_metric(const std::string& metric, double value);

/// Lower-case status word as the results file writes it ("path_mtu_blackhole").
std::string status_name(CellStatus status);

}  // namespace nm
