#pragma once
// JSON of queues, steering, NAPI, sysctls and the root qdisc (json_codec_tuning.cpp); every key optional on read.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/device_types.hpp"
#include "core/base/json.hpp"
#include "core/base/qdisc_tree.hpp"
#include "core/base/tuning_types.hpp"

namespace nm {

void to_json(Json& j, const QdiscSpec& v);
void from_json(const Json& j, QdiscSpec& v);
void to_json(Json& j, const TuningRequest& v);
void from_json(const Json& j, TuningRequest& v);
void to_json(Json& j, const QdiscState& v);
void from_json(const Json& j, QdiscState& v);
void to_json(Json& j, const TcNode& v);
void from_json(const Json& j, TcNode& v);
void to_json(Json& j, const QdiscTree& v);
void from_json(const Json& j, QdiscTree& v);
void to_json(Json& j, const TuningState& v);
void from_json(const Json& j, TuningState& v);
void to_json(Json& j, const TuningChange& v);
void from_json(const Json& j, TuningChange& v);

}  // namespace nm
