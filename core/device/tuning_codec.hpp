#pragma once
// JSON of queues, steering, NAPI, sysctls and the root qdisc (json_codec_tuning.cpp); every key optional on read.
// Requests, states, qdisc specs and changes are their field lists' (tuning_types.hpp); declared here are the
// hand-written pairs.
#include "core/base/field_json.hpp"
#include "core/device/device_types.hpp"
#include "core/device/qdisc_tree.hpp"
#include "core/device/tuning_types.hpp"

namespace nm {

NM_JSON_CODEC(QdiscState);
NM_JSON_CODEC(TcNode);
NM_JSON_CODEC(QdiscTree);

}  // namespace nm
