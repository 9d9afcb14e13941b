#pragma once
// JSON of comparisons (comparison_codec.cpp): `nicmatrix compare --format json` and `report --against`.
// A row is its field list's (report_types.hpp); declared here are the hand-written pairs.
#include "core/base/field_json.hpp"
#include "matrix/model/report_types.hpp"
#include "matrix/model/results_codec.hpp"

namespace nm {

NM_JSON_CODEC(RatioVerdict);
/// A comparison as `nicmatrix compare --format json` prints it and Python's nicmatrix.compare reads it.
void to_json(Json& j, const Comparison& v);

}  // namespace nm
