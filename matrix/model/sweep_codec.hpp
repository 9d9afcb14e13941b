#pragma once
// JSON of a sweep config (sweep_config_codec.cpp, with its traffic entries in traffic_entry_codec.cpp and
// its tuning axes in tuning_axis_codec.cpp). A config is parsed field by field: every error is a usage
// error starting with the JSON pointer of the offending value and saying what was expected, e.g.
// `/traffic/1/streams: expected a positive integer, got -3`.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/json.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

NM_JSON_CODEC(ApplyTo);
void to_json(Json& j, const TrafficEntry& v);
NM_JSON_CODEC(SweepOrder);
void to_json(Json& j, const PrecisionSpec& v);
void to_json(Json& j, const InterferenceSpec& v);
NM_JSON_CODEC(SweepConfig);
/// The same as from_json, for callers that want the value returned.
SweepConfig parse_sweep_config(const Json& j);

}  // namespace nm
