#pragma once
// The frame-size table the way people post it for a bridge or a router ("frame size | % of line rate |
// frames/s | Mbit/s | CPU | loss | trials"), from an RFC 2544 result: built as values, then rendered.
#include <string>
#include <vector>

#include "core/traffic/rfc2544_types.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/report/report.hpp"

namespace nm {

/// One line of the table, as text cells (the same for every format).
struct FrameTableRow {
    std::string frame;     ///< "64", ..., "imix"
    std::string line_pct;  ///< "18.3%"; "-" when no rate passed
    std::string fps;       ///< frames/s, whole number
    std::string mbps;      ///< layer-2 Mbit/s
    std::string cpu;       ///< "sender/receiver/softirq" percent: "86/40/12"
    std::string loss;      ///< loss at the reported rate, and the confirmation's: "0% (confirmed 0%)"
    std::string trials;    ///< search trials (+1 confirmation)
};

/// The table of a frame-size result: rows in the result's order with IMIX (any mix) moved last, and notes
/// (line rate and where it came from, rows the generator limited, rows that failed or did not confirm).
struct FrameTable {
    std::vector<FrameTableRow> rows;
    std::vector<std::string> notes;
};

/// Builds the table. Pure.
FrameTable build_frame_table(const Rfc2544Result& result);

/// Renders it: aligned text, Markdown, or CSV (one header line, one line per row, no notes).
std::string render_frame_table(const FrameTable& table, TableFormat format);

/// Everything `nicmatrix report` prints for a results file: the matrix of the ordinary cells (when there
/// are any) and, for every rfc2544 cell, its key and its frame-size table.
std::string render_results(const ResultsFile& results, const std::string& metric, TableFormat format);

}  // namespace nm
