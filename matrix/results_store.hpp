#pragma once
#include <string>

#include "matrix/model/sweep_types.hpp"

namespace nm {

/// Writes `results` to `path` atomically: the JSON goes to `path.tmp.<pid>` in the same directory, is
/// fsynced, renamed over `path`, and the directory is fsynced, so a reader (or a sweep killed at any
/// moment) sees either the previous complete file or the new one. Throws nm::Error (Failed) naming the
/// path when a step fails; the temporary file is removed then.
void save_results(const ResultsFile& results, const std::string& path);

/// Reads a results file. Throws nm::Error (Usage) naming the file and what is wrong with it (not JSON,
/// not nicmatrix/results/v1, a missing field). A file written before the median's interval was recorded
/// gets it computed from its runs (median_ci_low, median_ci_high, median_ci_confidence).
ResultsFile load_results(const std::string& path);

/// Parses the text of a results file as load_results() does once the file is read; `path` only names it
/// in the errors. The fuzz target for results files calls this.
ResultsFile parse_results_text(const std::string& text, const std::string& path);

/// Checks that `existing` (a file being resumed) was made by the same sweep config as `config`;
/// throws nm::Error (Usage) naming the file and the first difference otherwise. A precision metric that
/// names every cell's headline figure equals none (files written before the default named it).
void check_resumable(const ResultsFile& existing, const SweepConfig& config, const std::string& path);

}  // namespace nm
