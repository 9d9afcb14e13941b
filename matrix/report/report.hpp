#pragma once
// Report: a results file's matrix decoded into table values, then rendered as text. Building a table
// and rendering it are separate steps, so the table, Markdown and CSV outputs show the same numbers.
// Comparisons are in matrix/report/comparison.hpp, the rendering of tables in matrix/report/table.hpp.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/metric_text.hpp"
#include "matrix/model/report_types.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/report/comparison.hpp"
#include "matrix/report/table.hpp"
#include "matrix/stats.hpp"

namespace nm {

/// One entry of the matrix: a cell's status and the summaries of the chosen metric and of both engines'
/// CPU (process CPU, not system-wide busy: on a lab both ends share one machine, which is then always busy).
struct MatrixEntry {
    bool present = false;  ///< false when the results have no such cell (yet)
    std::string key;
    CellStatus status = CellStatus::Ok;
    std::optional<MetricSummary> value;         ///< the chosen metric
    std::optional<MetricSummary> cpu_sender;    ///< cpu_sender_pct: the sending engine's CPU, % of one core
    std::optional<MetricSummary> cpu_receiver;  ///< cpu_receiver_pct: the receiving engine's CPU
    std::optional<bool> precision_met;          ///< as the cell records it (none: no precision asked)
    size_t disturbed_runs = 0;                  ///< repetitions measured under interference
    std::string note;                           ///< error or duplicate_of, for the notes under the table
    std::optional<CellModes> modes;             ///< the chosen metric's modes when more than one (matrix/modes.hpp)
};

/// The matrix the way people post it: rows = offload profile × tuning values × traffic, columns = MTU.
struct MatrixTable {
    std::string metric;
    std::vector<uint32_t> mtus;
    struct Row {
        std::string profile;
        std::string traffic;
        std::vector<MatrixEntry> entries;         ///< one per MTU column
        std::map<std::string, std::string> axes;  ///< tuning axis -> value name (label and CSV columns)
    };
    std::vector<Row> rows;
    std::optional<PrecisionSpec> precision;  ///< the sweep's, for the marks' note
    std::string judged_by;                   ///< with a precision: the figure its cells were judged by, as the note words it
    InterferenceSpec interference;
    CpuAccounting cpu_accounting;  ///< the local host's, for the note on engine CPU
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

}  // namespace nm
