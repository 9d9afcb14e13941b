#pragma once
// JSON of traffic (json_codec_traffic.cpp). Enums are lower-case words ("tcp", "reverse", "stalled"). RunResult's
// layout is the one `nicmatrix run --json` prints: throughput_bps, packets_per_s, bytes, duration_s,
// streams, loss, tcp{retransmits}, cpu{sender, receiver, system{sender, receiver}}, io_calls, calls_per_s,
// ms_per_call, engine_service_demand_us_per_kb (old files: service_demand_us_per_kb), intervals, nic, napi,
// status, error. from_json throws nm::Error (Usage) naming the key on a bad enum word; missing optional keys
// keep their defaults. LinkCounters inside them are written with json_codec_device.cpp's field names
// (rx_bytes, ...) by a local helper, so the device codec stays the one owner of to_json(LinkCounters).
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/cpu_codec.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/json.hpp"
#include "core/base/profile_codec.hpp"
#include "core/base/rr_codec.hpp"
#include "core/base/traffic_types.hpp"

namespace nm {

void to_json(Json& j, const Protocol& v);
void from_json(const Json& j, Protocol& v);
void to_json(Json& j, const Direction& v);
void from_json(const Json& j, Direction& v);
void to_json(Json& j, const RunStatus& v);
void from_json(const Json& j, RunStatus& v);
void to_json(Json& j, const TestSpec& v);
void from_json(const Json& j, TestSpec& v);
void to_json(Json& j, const ProcessCpu& v);
void from_json(const Json& j, ProcessCpu& v);
void to_json(Json& j, const SystemCpu& v);
void from_json(const Json& j, SystemCpu& v);
void to_json(Json& j, const NapiStats& v);
void from_json(const Json& j, NapiStats& v);
void to_json(Json& j, const EndMeasurement& v);
void from_json(const Json& j, EndMeasurement& v);
void to_json(Json& j, const ReceivePath& v);
void from_json(const Json& j, ReceivePath& v);
void to_json(Json& j, const LossStats& v);
void from_json(const Json& j, LossStats& v);
void to_json(Json& j, const StreamResult& v);
void from_json(const Json& j, StreamResult& v);
void to_json(Json& j, const IntervalSample& v);
/// A live interval's fields, with its rates (bit/s over its own span): written only, by --json-stream.
void to_json(Json& j, const LiveInterval& v);
void from_json(const Json& j, IntervalSample& v);
void to_json(Json& j, const BackgroundLoad& v);
void from_json(const Json& j, BackgroundLoad& v);
/// A stock iperf3 far end's figures ("peer" of a run; --peer-kind iperf3).
void to_json(Json& j, const Iperf3StreamFigures& v);
void from_json(const Json& j, Iperf3StreamFigures& v);
void to_json(Json& j, const Iperf3PeerFigures& v);
void from_json(const Json& j, Iperf3PeerFigures& v);
void to_json(Json& j, const RunResult& v);
void from_json(const Json& j, RunResult& v);
void to_json(Json& j, const EndReport& v);
void from_json(const Json& j, EndReport& v);
void to_json(Json& j, const TrafficPattern& v);
void from_json(const Json& j, TrafficPattern& v);

}  // namespace nm
