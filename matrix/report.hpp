#pragma once
// Report and compare: a results file decoded into table values, then rendered as text. Building a table
// and rendering it are separate steps, so the table, Markdown and CSV outputs show the same numbers.
#include <optional>
#include <string>
#include <vector>

#include "core/base/sweep_types.hpp"

namespace nm {

/// How a table is rendered.
enum class TableFormat { Text, Markdown, Csv };

/// Parses "table", "md" or "csv"; throws nm::Error (Usage) otherwise.
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
    std::string note;                     ///< error or duplicate_of, for the notes under the table
};

/// The matrix the way people post it: rows = offload profile × traffic, columns = MTU.
struct MatrixTable {
    std::string metric;
    std::vector<uint32_t> mtus;
    struct Row {
        std::string profile;
        std::string traffic;
        std::vector<MatrixEntry> entries;   ///< one per MTU column
    };
    std::vector<Row> rows;
};

/// Builds the matrix of `metric` (a name summarize_runs produces, e.g. "throughput_bps") from a results
/// file, in its config's order. Throws nm::Error (Usage) for a metric no cell has, listing those it has.
MatrixTable build_matrix(const ResultsFile& results, const std::string& metric);

/// Renders a matrix; each entry is "median (CPU%)" or the cell's status, with notes listing every cell
/// that is not ok and why (text and Markdown). CSV has one line per cell.
std::string render_matrix(const MatrixTable& table, TableFormat format);

/// One cell matched in two results files.
struct CompareRow {
    std::string profile;
    std::string traffic;
    uint32_t mtu = 0;
    std::string key_a, key_b;
    CellStatus status_a = CellStatus::Ok, status_b = CellStatus::Ok;
    std::optional<MetricSummary> a, b;
    std::optional<double> ratio;   ///< median b / median a, when both have figures and a is not 0
    bool significant = false;      ///< the intervals (mean ± ci95, or min..max below 2 runs) do not overlap
};

/// Two results files cell by cell.
struct Comparison {
    std::string metric;
    std::string label_a, label_b;
    std::vector<CompareRow> rows;        ///< cells in both, in A's order
    std::vector<std::string> only_a;     ///< keys of cells only in A
    std::vector<std::string> only_b;
};

/// Matches cells by their settings (requested features, MTU and the test's fields; profile and test
/// names do not need to agree) and compares `metric`. Throws nm::Error (Usage) for an unknown metric.
Comparison compare_results(const ResultsFile& a, const ResultsFile& b, const std::string& metric,
                           const std::string& label_a, const std::string& label_b);

/// Renders a comparison: A, B, ratio B/A, a '*' where the difference exceeds the spread, and the cells
/// found in one file only.
std::string render_comparison(const Comparison& comparison, TableFormat format);

/// Renders a table of strings as every report does (text aligned, Markdown, CSV); `notes` follow the
/// table in text and Markdown. For the other reports of a results file (matrix/profile_report.hpp).
std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<std::string>& notes, TableFormat format);

/// A metric value in human units: "9.41 Gbit/s" for *_bps, "812 kpps" for packets_per_s, "38.2%" for
/// *_pct, plain otherwise.
std::string format_metric(const std::string& metric, double value);

/// Lower-case status word as the results file writes it ("path_mtu_blackhole").
std::string status_name(CellStatus status);

}  // namespace nm
