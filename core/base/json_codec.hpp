#pragma once
// The JSON codec: one to_json/from_json pair per value type, found by nlohmann::json through ADL.
// Conversion code lives only in core/base/json_codec_*.cpp (one file per domain); sweep files, result
// files and control-channel messages all go through it.
#include <nlohmann/json.hpp>

#include "core/base/lab_types.hpp"

namespace nm {

using Json = nlohmann::json;

void to_json(Json& j, const LabTopology& v);
void from_json(const Json& j, LabTopology& v);
void to_json(Json& j, const LabInterface& v);
void from_json(const Json& j, LabInterface& v);
void to_json(Json& j, const LabInfo& v);
void from_json(const Json& j, LabInfo& v);

}  // namespace nm
