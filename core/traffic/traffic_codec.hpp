#pragma once
// JSON of traffic (json_codec_traffic.cpp). Enums are lower-case words ("tcp", "reverse", "stalled"). RunResult's
// layout is the one `nicmatrix run --json` prints: throughput_bps, packets_per_s, bytes, duration_s,
// streams, loss, tcp{retransmits}, cpu{sender, receiver, system{sender, receiver}}, io_calls, calls_per_s,
// ms_per_call, engine_service_demand_us_per_kb (old files: service_demand_us_per_kb), intervals, nic, napi,
// status, error. from_json throws nm::Error (Usage) naming the key on a bad enum word; missing optional keys
// keep their defaults. The plain records (an end's measurement and CPU, NAPI, loss, streams, intervals,
// an end's report) are their field lists' (traffic_types.hpp, field_json.hpp); declared here are the
// hand-written pairs, found by nlohmann::json through ADL.
#include "core/base/field_json.hpp"
#include "core/device/device_codec.hpp"
#include "core/profile/profile_codec.hpp"
#include "core/traffic/cpu_codec.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

NM_JSON_CODEC(Protocol);
NM_JSON_CODEC(Direction);
NM_JSON_CODEC(RunStatus);
NM_JSON_CODEC(TestSpec);
NM_JSON_CODEC(SystemCpu);
/// A live interval's fields, with its rates (bit/s over its own span): written only, by --json-stream.
void to_json(Json& j, const LiveInterval& v);
/// A stock iperf3 far end's figures ("peer" of a run; --peer-kind iperf3).
NM_JSON_CODEC(Iperf3PeerFigures);
NM_JSON_CODEC(RunResult);
NM_JSON_CODEC(TrafficPattern);

}  // namespace nm
