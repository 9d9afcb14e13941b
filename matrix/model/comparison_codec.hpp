#pragma once
// JSON of comparisons (comparison_codec.cpp): `nicmatrix compare --format json` and `report --against`.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/json.hpp"
#include "matrix/model/report_types.hpp"
#include "matrix/model/results_codec.hpp"

namespace nm {

void to_json(Json& j, const RatioVerdict& v);
void from_json(const Json& j, RatioVerdict& v);
/// A comparison as `nicmatrix compare --format json` prints it and Python's nicmatrix.compare reads it.
void to_json(Json& j, const Comparison& v);

}  // namespace nm
