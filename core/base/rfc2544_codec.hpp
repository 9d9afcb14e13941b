#pragma once
// JSON of frame-size tables (json_codec_rfc2544.cpp): the spec as `run --json` and results files keep it (frames
// as strings), trials, rows, the table. Readers are tolerant: missing keys keep their defaults.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/json.hpp"
#include "core/base/rfc2544_types.hpp"
#include "core/base/traffic_codec.hpp"

namespace nm {

void to_json(Json& j, const PayloadShare& v);
void from_json(const Json& j, PayloadShare& v);
void to_json(Json& j, const Rfc2544Spec& v);
void from_json(const Json& j, Rfc2544Spec& v);
void to_json(Json& j, const TrialRecord& v);
void from_json(const Json& j, TrialRecord& v);
void to_json(Json& j, const FrameRow& v);
void from_json(const Json& j, FrameRow& v);
void to_json(Json& j, const InterfaceCoalesce& v);
void from_json(const Json& j, InterfaceCoalesce& v);
void to_json(Json& j, const Rfc2544Result& v);
void from_json(const Json& j, Rfc2544Result& v);

}  // namespace nm
