#pragma once
// JSON of device control (json_codec_device.cpp). Outcomes are the words "applied", "already_set", "fixed",
// "unsupported", "side_effect"; an absent speed is null. The plain records (link state, counters, settings,
// changes) are their field lists' (device_types.hpp, field_json.hpp); declared here are the hand-written pairs.
#include "core/base/field_json.hpp"
#include "core/device/device_types.hpp"
#include "core/device/tuning_codec.hpp"

namespace nm {

NM_JSON_CODEC(SettingOutcome);
NM_JSON_CODEC(ChangeLink);
NM_JSON_CODEC(ApplyReport);

}  // namespace nm
