#pragma once
// JSON of the built-in lab's description (json_codec_lab.cpp).
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/json.hpp"
#include "core/base/lab_types.hpp"

namespace nm {

void to_json(Json& j, const LabTopology& v);
void from_json(const Json& j, LabTopology& v);
void to_json(Json& j, const LabInterface& v);
void from_json(const Json& j, LabInterface& v);
void to_json(Json& j, const VmInfo& v);
void from_json(const Json& j, VmInfo& v);
void to_json(Json& j, const LabInfo& v);
void from_json(const Json& j, LabInfo& v);

}  // namespace nm
