#pragma once
// JSON of device control (json_codec_device.cpp), the one owner of to_json(LinkCounters). Outcomes are the
// words "applied", "already_set", "fixed", "unsupported", "side_effect"; an absent speed is null.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/device_types.hpp"
#include "core/base/json.hpp"
#include "core/base/tuning_codec.hpp"

namespace nm {

void to_json(Json& j, const FeatureState& v);
void from_json(const Json& j, FeatureState& v);
void to_json(Json& j, const DriverInfo& v);
void from_json(const Json& j, DriverInfo& v);
void to_json(Json& j, const LinkCounters& v);
void from_json(const Json& j, LinkCounters& v);
void to_json(Json& j, const LinkIdentity& v);
void from_json(const Json& j, LinkIdentity& v);
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
void to_json(Json& j, const LinkSettle& v);
void from_json(const Json& j, LinkSettle& v);
void to_json(Json& j, const ChangeLink& v);
void from_json(const Json& j, ChangeLink& v);
void to_json(Json& j, const ApplyReport& v);
void from_json(const Json& j, ApplyReport& v);

}  // namespace nm
