#pragma once
// JSON of results files (results_codec.cpp): the cells of a sweep with their runs and summaries, the run
// and both hosts. Written whole; read back tolerantly (fields added later get their defaults).
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/host/host_codec.hpp"
#include "core/base/json.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

void to_json(Json& j, const CellStatus& v);
void from_json(const Json& j, CellStatus& v);
void to_json(Json& j, const MetricSummary& v);
void from_json(const Json& j, MetricSummary& v);
void to_json(Json& j, const CellResult& v);
void from_json(const Json& j, CellResult& v);
void to_json(Json& j, const CellModes& v);
void from_json(const Json& j, CellModes& v);
void to_json(Json& j, const ResumeInfo& v);
void from_json(const Json& j, ResumeInfo& v);
void to_json(Json& j, const ResultsFile& v);
/// Reads a results file's JSON; throws nm::Error (Usage) naming the JSON pointer of a missing or
/// malformed field, or when `schema` is not nicmatrix/results/v1.
void from_json(const Json& j, ResultsFile& v);

}  // namespace nm
