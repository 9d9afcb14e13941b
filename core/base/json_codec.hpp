#pragma once
// The JSON codec: one to_json/from_json pair per value type, found by nlohmann::json through ADL.
// Conversion code lives only in core/base/json_codec_*.cpp (one file per domain); sweep files, result
// files and control-channel messages all go through it.
#include "core/base/cpu_profile.hpp"
#include "core/base/device_types.hpp"
#include "core/base/json.hpp"
#include "core/base/journal_types.hpp"
#include "core/base/lab_types.hpp"
#include "core/base/rfc2544_types.hpp"
#include "core/base/report_types.hpp"
#include "core/base/sweep_types.hpp"
#include "core/base/traffic_types.hpp"

namespace nm {

void to_json(Json& j, const LabTopology& v);
void from_json(const Json& j, LabTopology& v);
void to_json(Json& j, const LabInterface& v);
void from_json(const Json& j, LabInterface& v);
void to_json(Json& j, const VmInfo& v);
void from_json(const Json& j, VmInfo& v);
void to_json(Json& j, const LabInfo& v);
void from_json(const Json& j, LabInfo& v);

// Device control (json_codec_device.cpp), the one owner of to_json(LinkCounters). Outcomes are the
// words "applied", "already_set", "fixed", "unsupported", "side_effect"; an absent speed is null.
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
// Queues, steering, NAPI, sysctls and the root qdisc (json_codec_tuning.cpp); every key optional on read.
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
// The restore journal (json_codec_journal.cpp): an entry is {"owner", "where", "scope", "original": LinkState,
// "writes": {key: {"before", "written", "writing"}}};
// actions are the words "restored", "left_alone", "kept", "dropped", "forgotten".
void to_json(Json& j, const SettingWrite& v);
void from_json(const Json& j, SettingWrite& v);
void to_json(Json& j, const JournalOwner& v);
void from_json(const Json& j, JournalOwner& v);
void to_json(Json& j, const JournalEntry& v);
void from_json(const Json& j, JournalEntry& v);
void to_json(Json& j, const JournalAction& v);
void from_json(const Json& j, JournalAction& v);
void to_json(Json& j, const JournalReport& v);
void from_json(const Json& j, JournalReport& v);
// Traffic (json_codec_traffic.cpp). Enums are lower-case words ("tcp", "reverse", "stalled"). RunResult's
// layout is the one `nicmatrix run --json` prints: throughput_bps, packets_per_s, bytes, duration_s,
// streams, loss, tcp{retransmits}, cpu{sender, receiver, system{sender, receiver}}, io_calls, calls_per_s,
// ms_per_call, engine_service_demand_us_per_kb (old files: service_demand_us_per_kb), intervals, nic, napi, status, error. from_json throws nm::Error
// (Usage) naming the key on a bad enum word; missing optional keys keep their defaults. LinkCounters inside
// them are written with json_codec_device.cpp's field names (rx_bytes, ...) by a local helper, so the
// device codec stays the one owner of to_json(LinkCounters).
void to_json(Json& j, const Protocol& v);
void from_json(const Json& j, Protocol& v);
void to_json(Json& j, const Direction& v);
void from_json(const Json& j, Direction& v);
void to_json(Json& j, const RunStatus& v);
void from_json(const Json& j, RunStatus& v);
void to_json(Json& j, const TestSpec& v);
void from_json(const Json& j, TestSpec& v);
// Where CPU time went (json_codec_cpu.cpp): one CPU over a window, and a host's CPU-time accounting
// ({source, irq_time_accounting, cputime, no_hz_full, softirq_in_task_time}; "yes"/"no"/"unknown").
void to_json(Json& j, const PerCpu& v);
void from_json(const Json& j, PerCpu& v);
void to_json(Json& j, const KernelOption& v);
void from_json(const Json& j, KernelOption& v);
void to_json(Json& j, const CpuAccounting& v);
void from_json(const Json& j, CpuAccounting& v);
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
// Request/response results and socket knobs (json_codec_rr.cpp). A histogram is {"unit": "ns",
// "sub_bucket_bits", "count", "sum", "min", "max", "buckets": [[index, count], ...]} (non-empty buckets
// only); reading one of another layout is a usage error. SocketKnobs' tos is null when not read, with
// "dscp" (tos >> 2) beside it.
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

// Kernel profiles and their category table (json_codec_profile.cpp). A profile is read tolerantly; the table
// (configs/profile-categories.json) strictly: parse_category_table throws nm::Error (Usage) starting with
// the JSON pointer of the bad value (`/rules/3/category: expected one of ...`). to_json(CategoryTable)
// writes the file's form without its source.
void to_json(Json& j, const CpuProfile& v);
void from_json(const Json& j, CpuProfile& v);
void to_json(Json& j, const CategoryTable& v);
CategoryTable parse_category_table(const Json& j);

// Frame-size tables (json_codec_rfc2544.cpp): the spec as `run --json` and results files keep it (frames
// as strings), trials, rows, the table. Readers are tolerant: missing keys keep their defaults.
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

// Sweeps and results (json_codec_matrix.cpp). A sweep config is parsed field by field: every error is a
// usage error starting with the JSON pointer of the offending value and saying what was expected, e.g.
// `/traffic/1/streams: expected a positive integer, got -3`.
void to_json(Json& j, const ApplyTo& v);
void from_json(const Json& j, ApplyTo& v);
void to_json(Json& j, const TrafficEntry& v);
void to_json(Json& j, const SweepOrder& v);
void from_json(const Json& j, SweepOrder& v);
void to_json(Json& j, const PrecisionSpec& v);
void to_json(Json& j, const InterferenceSpec& v);
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
void to_json(Json& j, const CellModes& v);
void from_json(const Json& j, CellModes& v);
void to_json(Json& j, const InterfaceSystem& v);
void from_json(const Json& j, InterfaceSystem& v);
void to_json(Json& j, const CpuLayout& v);
void from_json(const Json& j, CpuLayout& v);
void to_json(Json& j, const CpuIdle& v);
void from_json(const Json& j, CpuIdle& v);
void to_json(Json& j, const InterfaceInfo& v);
void from_json(const Json& j, InterfaceInfo& v);
void to_json(Json& j, const HostInfo& v);
void from_json(const Json& j, HostInfo& v);
/// `commit` only when known (a build outside a git checkout has none).
void to_json(Json& j, const ToolInfo& v);
void from_json(const Json& j, ToolInfo& v);
void to_json(Json& j, const ResumeInfo& v);
void from_json(const Json& j, ResumeInfo& v);
void to_json(Json& j, const ResultsFile& v);
void to_json(Json& j, const RatioVerdict& v);
void from_json(const Json& j, RatioVerdict& v);
/// A comparison as `nicmatrix compare --format json` prints it and Python's nicmatrix.compare reads it.
void to_json(Json& j, const Comparison& v);
/// Reads a results file's JSON; throws nm::Error (Usage) naming the JSON pointer of a missing or
/// malformed field, or when `schema` is not nicmatrix/results/v1.
void from_json(const Json& j, ResultsFile& v);

}  // namespace nm
