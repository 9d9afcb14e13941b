#pragma once
// JSON of results files (results_codec.cpp): the cells of a sweep with their runs and summaries, the run
// and both hosts. Written whole; read back tolerantly (fields added later get their defaults).
// Summaries, resume and json-stream records are their field lists' (sweep_types.hpp); declared here are the
// hand-written pairs, found by nlohmann::json through ADL.
#include "core/base/field_json.hpp"
#include "core/host/host_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

NM_JSON_CODEC(CellStatus);
NM_JSON_CODEC(CellResult);
NM_JSON_CODEC(CellModes);
void to_json(Json& j, const ResultsFile& v);
/// Reads a results file's JSON; throws nm::Error (Usage) naming the JSON pointer of a missing or
/// malformed field, or when `schema` is not nicmatrix/results/v1.
void from_json(const Json& j, ResultsFile& v);

}  // namespace nm
