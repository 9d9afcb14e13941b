#pragma once
// What the matrix and the comparison share inside the report layer: a table of strings, a cell's
// summary of a metric, the check that a metric exists, and the marks of a figure. Not for other layers.
#include <optional>
#include <string>
#include <vector>

#include "matrix/model/sweep_types.hpp"
#include "matrix/report/table.hpp"

namespace nm::report_parts {

/// A table of strings: the one shape every output is rendered from.
struct Grid {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes;
};

inline std::string render_grid(const Grid& g, TableFormat format) { return render_table(g.header, g.rows, g.notes, format); }

/// The cell's summary of `metric`; none when it has none (or no values).
std::optional<MetricSummary> summary_of(const CellResult& c, const std::string& metric);

/// Throws nm::Error (Usage) naming --metric when no cell of `files` has `metric` (and some cell has a metric).
void require_metric(const std::vector<const ResultsFile*>& files, const std::string& metric);

/// The marks of a figure: "?" the asked precision was not met, "!" measured under interference.
std::string marks(const std::optional<bool>& precision_met, size_t disturbed);

/// The cell's repetitions measured under interference.
size_t disturbed_runs(const CellResult& c);

/// The number as JSON writes it; "" for none.
std::string number_or_empty(const std::optional<double>& v);

}  // namespace nm::report_parts
