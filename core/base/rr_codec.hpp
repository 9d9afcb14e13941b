#pragma once
// JSON of request/response results and socket knobs (json_codec_rr.cpp). A histogram is {"unit": "ns",
// "sub_bucket_bits", "count", "sum", "min", "max", "buckets": [[index, count], ...]} (non-empty buckets
// only); reading one of another layout is a usage error. SocketKnobs' tos is null when not read, with
// "dscp" (tos >> 2) beside it.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/json.hpp"
#include "core/base/latency_histogram.hpp"
#include "core/base/rr_types.hpp"
#include "core/base/socket_types.hpp"

namespace nm {

void to_json(Json& j, const LatencyHistogram& v);
void from_json(const Json& j, LatencyHistogram& v);
void to_json(Json& j, const LatencySummary& v);
void from_json(const Json& j, LatencySummary& v);
void to_json(Json& j, const RrInterval& v);
void from_json(const Json& j, RrInterval& v);
void to_json(Json& j, const RrEndCounts& v);
void from_json(const Json& j, RrEndCounts& v);
void to_json(Json& j, const RrStats& v);
void from_json(const Json& j, RrStats& v);
void to_json(Json& j, const ZeroCopyStats& v);
void from_json(const Json& j, ZeroCopyStats& v);
void to_json(Json& j, const RxSpinStats& v);
void from_json(const Json& j, RxSpinStats& v);
void to_json(Json& j, const SocketKnobs& v);
void from_json(const Json& j, SocketKnobs& v);

}  // namespace nm
