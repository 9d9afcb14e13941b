#pragma once
// Tables of strings rendered as every report renders them: aligned text, Markdown or CSV.
#include <string>
#include <vector>

namespace nm {

/// How a table is rendered. JsonDocument (JSON) only for comparisons (compare, report --against).
enum class TableFormat { Text, Markdown, Csv, JsonDocument };

/// Parses "table", "md", "csv" or "json"; throws nm::Error (Usage) otherwise.
TableFormat parse_table_format(const std::string& name);

/// Renders a table of strings as every report does (text aligned, Markdown, CSV); `notes` follow the
/// table in text and Markdown. For the other reports of a results file (matrix/report/profile_report.hpp).
std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<std::string>& notes, TableFormat format);

}  // namespace nm
