#pragma once
// The JSON codec: one to_json/from_json pair per value type, found by nlohmann::json through ADL.
// Conversion code lives only in core/base/json_codec_*.cpp (one file per domain); sweep files, result
// files and control-channel messages all go through it.
#include <nlohmann/json.hpp>

#include "core/base/device_types.hpp"
#include "core/base/lab_types.hpp"

namespace nm {

using Json = nlohmann::json;

void to_json(Json& j, const LabTopology& v);
void from_json(const Json& j, LabTopology& v);
void to_json(Json& j, const LabInterface& v);
void from_json(const Json& j, LabInterface& v);
void to_json(Json& j, const LabInfo& v);
void from_json(const Json& j, LabInfo& v);

// Device control (json_codec_device.cpp), the one owner of to_json(LinkCounters). Outcomes are the
// words "applied", "already_set", "fixed", "unsupported", "side_effect"; an absent speed is null.
void to_json(Json& j, const FeatureState& v);
void from_json(const Json& j, FeatureState& v);
void to_json(Json& j, const DriverInfo& v);
void from_json(const Json& j, DriverInfo& v);
void to_json(Json& j, const LinkCounters& v);
void from_json(const Json& j, LinkCounters& v);
void to_json(Json& j, const LinkState& v);
void from_json(const Json& j, LinkState& v);
void to_json(Json& j, const LinkSettings& v);
void from_json(const Json& j, LinkSettings& v);
void to_json(Json& j, const SettingOutcome& v);
void from_json(const Json& j, SettingOutcome& v);
void to_json(Json& j, const FeatureChange& v);
void from_json(const Json& j, FeatureChange& v);
void to_json(Json& j, const MtuChange& v);
void from_json(const Json& j, MtuChange& v);
void to_json(Json& j, const ApplyReport& v);
void from_json(const Json& j, ApplyReport& v);

}  // namespace nm
