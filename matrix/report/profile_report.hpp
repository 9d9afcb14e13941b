#pragma once
// `nicmatrix report FILE --cpu-breakdown`: per cell, where the CPU went (the kernel profile's categories,
// medians over the repetitions), the ends side by side.
#include <string>

#include "matrix/model/sweep_types.hpp"
#include "matrix/report/report.hpp"

namespace nm {

/// One row per profiled cell and host: one ("both ends") when the ends share a host, else the sender's
/// and the receiver's; columns the categories (the shipped table's order, then any others), each the
/// median over the cell's runs of that category's share. Text and Markdown leave out categories that are
/// 0 in every row (a note names them) and list cells without a profile. Throws nm::Error (Usage) when no
/// cell has a profile.
std::string render_cpu_breakdown(const ResultsFile& results, TableFormat format);

}  // namespace nm
