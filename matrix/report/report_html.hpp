#pragma once
// `report --format html`: one self-contained page per results file (or two, compared). The page's figures
// are built here, by the same functions the text report uses (build_matrix, matrix_entry_text,
// compare_results, compare_to_profile, build_frame_table, format_metric), and embedded in the page as one
// JSON document; the page's script (matrix/report/report_page/, compiled in) only lays them out and draws them.
// Nothing is fetched: no network request, no external script, style or font.
#include <string>

#include "matrix/model/report_types.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

/// What the page shows besides the files themselves.
struct HtmlReportRequest {
    std::string metric = "throughput_bps";  ///< the matrix's metric (a name summarize_runs produces)
    std::string against;                    ///< reference profile of the significance marks; "" = none
    ComparisonOptions comparison;           ///< confidence of every B/A interval, adjustment, margin
};

/// One results file and the name the page calls it by (its path, as given).
struct HtmlReportFile {
    const ResultsFile& results;
    std::string label;
};

/// The page's data: for each file its header (what was measured, when, how long, both hosts), config,
/// matrix (text, median, interval of the median, marks, status and reason of each cell, the --against
/// ratio when asked), every cell as the results file has it with each repetition's figures in human units,
/// the frame-size tables; with a second file, the comparison of B against A. Throws nm::Error (Usage) for
/// an unknown metric or reference profile, as report does.
Json html_report_data(const HtmlReportFile& a, const HtmlReportFile* b, const HtmlReportRequest& request);

/// The whole page: HTML with the style, the script and html_report_data inlined. Throws as
/// html_report_data does.
std::string render_html_report(const HtmlReportFile& a, const HtmlReportFile* b, const HtmlReportRequest& request);

}  // namespace nm
