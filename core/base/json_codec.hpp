#pragma once
// The JSON codec: one to_json/from_json pair per value type, found by nlohmann::json through ADL.
// Conversion code lives only in core/base/json_codec_*.cpp (one file per domain); sweep files, result
// files and control-channel messages all go through it.
#include <nlohmann/json.hpp>

#include "core/base/lab_types.hpp"
#include "core/base/sweep_types.hpp"
#include "core/base/traffic_types.hpp"

namespace nm {

using Json = nlohmann::json;

void to_json(Json& j, const LabTopology& v);
void from_json(const Json& j, LabTopology& v);
void to_json(Json& j, const LabInterface& v);
void from_json(const Json& j, LabInterface& v);
void to_json(Json& j, const LabInfo& v);
void from_json(const Json& j, LabInfo& v);

// Traffic (json_codec_traffic.cpp): the figures `nicmatrix run --json` prints and a results file keeps.
// Enums are lower-case words ("tcp", "reverse", "stalled"); every field is written under its member name.
void to_json(Json& j, const LinkCounters& v);
void from_json(const Json& j, LinkCounters& v);
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
void to_json(Json& j, const StreamResult& v);
void from_json(const Json& j, StreamResult& v);
void to_json(Json& j, const LossStats& v);
void from_json(const Json& j, LossStats& v);
void to_json(Json& j, const IntervalSample& v);
void from_json(const Json& j, IntervalSample& v);
void to_json(Json& j, const RunResult& v);
void from_json(const Json& j, RunResult& v);

// Sweeps and results (json_codec_matrix.cpp). A sweep config is parsed field by field: every error is a
// usage error starting with the JSON pointer of the offending value and saying what was expected, e.g.
// `/traffic/1/streams: expected a positive integer, got -3`.
void to_json(Json& j, const ApplyTo& v);
void from_json(const Json& j, ApplyTo& v);
void to_json(Json& j, const TrafficEntry& v);
void to_json(Json& j, const SweepConfig& v);
void from_json(const Json& j, SweepConfig& v);
/// The same as from_json, for callers that want the value returned.
SweepConfig parse_sweep_config(const Json& j);
void to_json(Json& j, const CellStatus& v);
void from_json(const Json& j, CellStatus& v);
void to_json(Json& j, const EndSettings& v);
void from_json(const Json& j, EndSettings& v);
void to_json(Json& j, const MetricSummary& v);
void from_json(const Json& j, MetricSummary& v);
void to_json(Json& j, const CellResult& v);
void from_json(const Json& j, CellResult& v);
void to_json(Json& j, const InterfaceInfo& v);
void from_json(const Json& j, InterfaceInfo& v);
void to_json(Json& j, const HostInfo& v);
void from_json(const Json& j, HostInfo& v);
void to_json(Json& j, const ResultsFile& v);
/// Reads a results file's JSON; throws nm::Error (Usage) naming the JSON pointer of a missing or
/// malformed field, or when `schema` is not nicmatrix/results/v1.
void from_json(const Json& j, ResultsFile& v);

}  // namespace nm
