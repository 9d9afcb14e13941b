#pragma once
// JSON of request/response results and socket knobs (json_codec_rr.cpp). A histogram is {"unit": "ns",
// "sub_bucket_bits", "count", "sum", "min", "max", "buckets": [[index, count], ...]} (non-empty buckets
// only); reading one of another layout is a usage error. SocketKnobs' tos is null when not read, with
// "dscp" (tos >> 2) beside it.
// The other rr and socket types' codecs are their field lists' (field_json.hpp); these two are by hand.
#include "core/base/field_json.hpp"
#include "core/traffic/latency_histogram.hpp"
#include "core/traffic/rr_types.hpp"
#include "core/traffic/socket_types.hpp"

namespace nm {

NM_JSON_CODEC(LatencyHistogram);
NM_JSON_CODEC(SocketKnobs);

}  // namespace nm
