#pragma once
// Value types of a sweep: the config a user writes, the cells it expands into, and the results file a
// sweep leaves (its hosts are host_types.hpp's). Produced and consumed by matrix, read by cli and bindings.
// Plain values; JSON in sweep_codec.hpp (the config) and results_codec.hpp (results). Units are in the names.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/field_list.hpp"
#include "core/base/rfc2544_types.hpp"
#include "core/base/traffic_types.hpp"
#include "core/base/tuning_types.hpp"
#include "core/host/host_types.hpp"

namespace nm {

/// Which ends of the path a setting axis is applied to.
enum class ApplyTo {
    Local,  ///< the interface the client sends from
    Peer,   ///< the server's interface (the lab's second namespace, or the peer agent's)
    Both,
    Dut,  ///< the device under test's ports (the bridge lab's dut-a and dut-b); sender and receiver stay fixed
};

/// One named offload profile: feature name as `nicmatrix set` takes it ("tso", "tx-checksumming",
/// "tx-tcp-segmentation") -> wanted. Features it does not name stay at the interface's original value.
struct OffloadProfile {
    std::string name;
    std::map<std::string, bool> features;
};

/// One value of a tuning axis (channels, rps, sysctl, qdisc, ...): its name in cell keys and tables (given
/// as "name", or derived: "rx2-tx2", "rps-all", "tcp_congestion_control=bbr", "tbf") and what it asks.
struct TuningProfile {
    std::string name;
    TuningRequest tuning;  ///< only the axis's own kind is set
};

/// The tuning axes, in the order they nest in the product (after MTU, before traffic) and appear in keys.
inline constexpr const char* kTuningAxes[] = {"channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc"};

/// One traffic pattern of a sweep: a test as `nicmatrix run` takes it. Its target (host, port, bind, iface),
/// `duration_s` and `omit_s` are not part of the entry: the sweep fills them in (test_spec_for).
struct TrafficEntry {
    std::string name;  ///< given in the config, or derived: "tcp-p10", "udp-l18", "tcp-p1-R", "rfc2544"
    TestSpec test;
    /// Set for `"test": "rfc2544"`: the cell makes a frame-size table (one per cell, not per repetition).
    std::optional<Rfc2544Spec> rfc2544;
};

/// An exclusion: a cell is dropped when every field given matches it (partial match).
struct ExcludeRule {
    std::optional<std::string> offloads;  ///< profile name
    std::optional<uint32_t> mtu;
    nlohmann::json traffic = nlohmann::json::object();  ///< subset of a traffic entry's JSON fields
    std::map<std::string, std::string> axes;            ///< tuning axis -> value name
};

/// Precision on request (netperf's -I/-i): a cell is repeated until the distribution-free confidence
/// interval of the median of `metric` is within ±ci_pct % of the median, or max_repetitions, or the
/// sweep's time budget runs out.
struct PrecisionSpec {
    double ci_pct = 5;       ///< wanted half-width of the median's interval, % of the median
    double confidence = 95;  ///< wanted confidence of that interval, percent
    uint32_t min_repetitions = 3;
    uint32_t max_repetitions = 12;
    std::string metric;  ///< a name run_metrics produces; empty: each cell's headline figure (matrix/stats.hpp precision_metric)
};

/// How the repetitions of a sweep are ordered.
enum class SweepOrder {
    Shuffled,    ///< rounds over all cells, each round in a shuffled order (one repetition per visit)
    Sequential,  ///< cell after cell, each cell's repetitions back to back
};

/// The sweep's check for other load before each repetition: /proc/stat (system-wide) over `sample_ms`;
/// while busy or steal is above its threshold the sweep waits, up to `max_wait_s`, and then measures
/// anyway and marks the repetition disturbed.
struct InterferenceSpec {
    double max_busy_pct = 20;  ///< percent of all CPUs busy (steal included) before a repetition
    double max_steal_pct = 5;  ///< percent of all CPUs stolen by the hypervisor
    uint32_t sample_ms = 200;  ///< 0 = no check (runs are not sampled, nothing is marked)
    double max_wait_s = 2;     ///< 0 = do not wait, only mark
};

/// Where the engine's worker threads run (iperf3's -A for every cell): CPUs of the client's host and of
/// the server's. Empty = not pinned.
struct AffinitySpec {
    std::vector<uint32_t> client;
    std::vector<uint32_t> server;
};

/// A sweep as its config file describes it: the axes and how each cell is measured.
struct SweepConfig {
    std::string name;
    std::string description;
    std::vector<OffloadProfile> offloads;                    ///< in file order
    std::vector<uint32_t> mtu;                               ///< bytes, in file order
    std::vector<TrafficEntry> traffic;                       ///< in file order
    std::map<std::string, std::vector<TuningProfile>> axes;  ///< tuning axis (kTuningAxes) -> values in file order
    std::map<std::string, ApplyTo> apply_axes;               ///< per tuning axis; Both when not given
    double duration_s = 10;                                  ///< measured seconds per repetition
    double omit_s = 1;                                       ///< warm-up seconds before each repetition, not counted
    uint32_t repetitions = 3;
    double cooldown_s = 0;  ///< idle seconds after each measured cell
    /// After each change on an end, the longest wait for its link (carrier and operstate up) and then for
    /// the path to answer, when the change dropped the link; 0 waits for nothing.
    double link_wait_s = 10;
    ApplyTo apply_offloads_to = ApplyTo::Both;
    ApplyTo apply_mtu_to = ApplyTo::Both;
    std::vector<ExcludeRule> exclude;
    bool profile = false;                     ///< a kernel profile of every run's window (TestSpec::profile)
    uint32_t profile_hz = kDefaultProfileHz;  ///< its samples per second per CPU
    std::optional<PrecisionSpec> precision;   ///< none: every cell gets `repetitions`
    SweepOrder order = SweepOrder::Shuffled;
    InterferenceSpec interference;
    AffinitySpec affinity;
};

/// The test a sweep runs for `entry`: the entry's test, sent to `target`, for the config's duration and
/// warm-up. The one place a sweep's destination goes into its tests (the runner adds the rest of a cell's).
inline TestSpec test_spec_for(const TrafficEntry& entry, const SweepConfig& config, const TestTarget& target) {
    TestSpec spec = entry.test;
    static_cast<TestTarget&>(spec) = target;
    spec.duration_s = config.duration_s;
    spec.omit_s = config.omit_s;
    return spec;
}

/// One point of the matrix: a profile, an MTU and a traffic pattern.
struct CellSpec {
    std::string key;  ///< stable: "<profile>/mtu<N>/<traffic>", e.g. "all-off/mtu9000/tcp-p10"
    size_t profile_index = 0;
    size_t mtu_index = 0;
    size_t traffic_index = 0;
    std::string offloads;  ///< profile name
    std::map<std::string, bool> features_requested;
    uint32_t mtu = 0;
    TrafficEntry traffic;
    std::map<std::string, size_t> axis_index;  ///< tuning axis -> index of its value in the config
    std::map<std::string, std::string> axes;   ///< tuning axis -> value name (the params a table labels by)
};

/// What a cell came to.
enum class CellStatus {
    Ok,
    Infeasible,              ///< the settings cannot be applied (fixed feature, MTU out of range)
    Duplicate,               ///< effective settings equal an earlier cell's: not measured again
    Failed,                  ///< an error while measuring; the sweep went on
    Stalled,                 ///< the engine saw data stop flowing
    PathMtuBlackhole,        ///< full-size frames with DF set did not cross the path at this MTU
    UnreachableAfterChange,  ///< with the peer agent: the peer was unreachable after the change; both ends reverted it
    LinkLost,                ///< a change dropped an end's link and it was not back (or the path did not answer) within link_wait_s; rolled back
};

/// Statistics of one metric over a cell's repetitions.
struct MetricSummary {
    size_t n = 0;
    double median = 0;
    /// The distribution-free interval of the median: order statistics [x(k), x(n+1-k)] with the
    /// largest k whose coverage reaches the asked confidence, or [min, max] when n is too small for it.
    /// None when n < 2 (one repetition claims no interval).
    std::optional<double> median_ci_low, median_ci_high;
    std::optional<double> median_ci_confidence;  ///< the interval's exact coverage, percent (75 for [min, max] of 3)
    double mean = 0;
    double stddev = 0;  ///< sample standard deviation (n - 1); 0 when n < 2
    double min = 0;
    double max = 0;
    double ci95 = 0;  ///< half-width of the 95% confidence interval of the MEAN (Student's t); 0 when n < 2
};

constexpr auto json_fields(const MetricSummary*) {
    using S = MetricSummary;
    return field_list(field("n", &S::n), field("median", &S::median, kFieldRequired), field("mean", &S::mean, kFieldRequired),
                      field("stddev", &S::stddev, kFieldRequired), field("min", &S::min, kFieldRequired), field("max", &S::max, kFieldRequired),
                      field("ci95", &S::ci95, kFieldRequired), field("median_ci_low", &S::median_ci_low, kFieldIfTyped),
                      field("median_ci_high", &S::median_ci_high, kFieldIfTyped),
                      field("median_ci_confidence", &S::median_ci_confidence, kFieldIfTyped));
}

/// One mode of a cell's repetitions (matrix/modes.hpp find_modes): its runs and their summary.
struct ValueMode {
    MetricSummary summary;              ///< of the mode's runs: its median is the mode's centre, with its interval
    std::vector<size_t> runs;           ///< 0-based indices into the cell's runs, in run order
    std::optional<bool> precision_met;  ///< with a precision asked: this mode's interval reached it
    std::string placement;              ///< the placement the explanation gives this mode ("same CPU"); "" without one
    size_t placement_runs = 0;          ///< how many of its runs had that placement
};

/// The modes of a cell with more than one: the metric tested, how, and the placement that lines up with them.
struct CellModes {
    std::string metric;
    std::string method;            ///< the test and its thresholds, in words
    std::vector<ValueMode> modes;  ///< two or more, ascending by median
    /// What the modes' placements have in common ("softirq and receiver thread: different CPUs"), with each
    /// mode's value in ValueMode::placement; "" when no recorded placement lines up with at least 90% of the runs.
    std::string placement_by;
    std::string explanation;  ///< one line: "slow runs (8.2 Gbit/s): same CPU, 3 of 3; fast runs ..." or why not
};

/// One cell of a results file.
struct CellResult {
    CellSpec spec;
    std::optional<EndSettings> applied_local;
    std::optional<EndSettings> applied_remote;
    std::map<std::string, EndSettings> applied_dut;  ///< by "netns/ifname": the DUT ports, when the sweep has them
    CellStatus status = CellStatus::Ok;
    std::string error;                             ///< why, when the status is not ok
    std::string duplicate_of;                      ///< key of the cell this one duplicates
    double overhead_s = 0;                         ///< time outside measuring: apply, verify, preflight
    std::vector<RunResult> runs;                   ///< every repetition, as `nicmatrix run --json` gives it
    std::map<std::string, MetricSummary> summary;  ///< by metric name ("throughput_bps", ...)
    std::optional<Rfc2544Result> rfc2544;          ///< the frame-size table of an rfc2544 cell
    /// With a precision asked: whether the median's interval of the precision metric reached it (with
    /// modes: every mode's interval). None when no precision was asked (or the cell was not measured).
    std::optional<bool> precision_met;
    /// The modes of the precision metric (or the test's headline figure) when more than one was found.
    std::optional<CellModes> modes;
};

/// How a sweep's repetitions were really ordered.
struct OrderInfo {
    SweepOrder mode = SweepOrder::Sequential;
    std::optional<uint64_t> seed;  ///< the shuffle's seed (`--seed` repeats it); none for sequential
};

/// One `sweep --resume` that continued a results file: when, by which command and which build.
struct ResumeInfo {
    std::string started;  ///< ISO 8601 UTC
    std::string command;  ///< its command line
    ToolInfo tool;        ///< the build that continued the file (the file's `tool` is the first run's)
};

constexpr auto json_fields(const ResumeInfo*) {
    using S = ResumeInfo;
    return field_list(field("started", &S::started, kFieldRequired), field("command", &S::command), field("tool", &S::tool, kFieldIfTyped));
}

/// What `sweep --json-stream` could not deliver: its lines go through a bounded queue and are written
/// without blocking, so a reader that stops reading costs events, never the sweep or its restore.
struct JsonStreamStats {
    uint64_t queue_lines = 0;      ///< the queue's bound (--json-stream-queue)
    uint64_t written_lines = 0;    ///< lines written whole
    uint64_t dropped_events = 0;   ///< events not queued: the queue was full or the output closed
    uint64_t unwritten_lines = 0;  ///< lines queued but not written (yet, or ever: the output closed)
    bool output_closed = false;    ///< the reader went away (EPIPE); later events are dropped
};

constexpr auto json_fields(const JsonStreamStats*) {
    using S = JsonStreamStats;
    return field_list(field("queue_lines", &S::queue_lines), field("written_lines", &S::written_lines), field("dropped_events", &S::dropped_events),
                      field("unwritten_lines", &S::unwritten_lines), field("output_closed", &S::output_closed));
}

struct RunInfo {
    std::string started;   ///< ISO 8601 UTC
    std::string finished;  ///< "" while the sweep is running
    std::string command;   ///< the command line
    std::string config_file;
    SweepConfig config;
    /// Files written before the order was recorded were measured sequentially; they read back so.
    OrderInfo order;
    std::optional<double> time_budget_s;  ///< --time-budget, when given
    bool budget_reached = false;          ///< the budget ended the sweep before every cell had all it asked
    std::vector<ResumeInfo> resumed;      ///< every --resume that continued the file, oldest first
    /// With --json-stream: what the stream had lost when the file was last written.
    std::optional<JsonStreamStats> json_stream;
};

inline constexpr const char* kResultsSchema = "nicmatrix/results/v1";

/// A results file: the whole sweep, rewritten after every cell.
struct ResultsFile {
    std::string schema = kResultsSchema;
    ToolInfo tool;
    RunInfo run;
    HostInfo local;
    HostInfo remote;
    std::vector<CellResult> cells;  ///< in the config's cell order; only finished cells
};

}  // namespace nm
