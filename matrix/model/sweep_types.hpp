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
#include "core/device/tuning_types.hpp"
#include "core/host/host_types.hpp"
#include "core/traffic/rfc2544_types.hpp"
#include "core/traffic/traffic_types.hpp"

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

/// The `options` of a row of the sweep config's field tables (NM_SWEEP_CONFIG_FIELDS and its sub-objects').
inline constexpr unsigned kSweepKeyRequired = 1;  ///< the key must be given (no default; the schema's "required")
inline constexpr unsigned kSweepKeyAboveMin = 2;  ///< min itself is refused (the schema's "exclusiveMinimum")

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

// The sweep config's keys, declared once per record (the machinery and what is derived:
// matrix/model/sweep_config_fields.hpp). Each table lists the record's JSON keys in the order its
// "unknown key" error names them:
// X(key, member, min, max, options, unit, help, expected) a key that is one number or switch member
//   key       the JSON key
//   member    the member of the record it is
//   min,max   the range the parser accepts (a switch: 0, 0)
//   options   kSweepKeyRequired (no default: missing is an error), kSweepKeyAboveMin (min itself is refused)
//   unit      FieldUnit: what the number counts
//   help      what it is: the JSON Schema's description, and a missing required key's "expected <help>"
//   expected  what a wrong value's error says: "/precision/confidence: expected <expected>, got 100"
// H("key") a key coded by hand (a list, an object, a name, an enum), named here for its place in the
// allowed keys; its schema is written by hand in configs/sweep.schema.json.
#define NM_PRECISION_FIELDS(X, H)                                                                                                                    \
    X(ci_pct, ci_pct, 0, 100, kSweepKeyRequired | kSweepKeyAboveMin, Percent,                                                                        \
      "the wanted half-width of the median's interval, in percent of the median", "a half-width in percent of the median (0 < x <= 100)")            \
    X(confidence, confidence, 50, 99.9, 0, Percent, "the wanted confidence of that interval, in percent", "a confidence in percent from 50 to 99.9") \
    X(min_repetitions, min_repetitions, 1, 1000, 0, None, "the fewest repetitions of a cell", "a number of repetitions from 1 to 1000")              \
    X(max_repetitions, max_repetitions, 1, 1000, 0, None, "the most repetitions of a cell, at least min_repetitions",                                \
      "a number of repetitions from 1 to 1000")                                                                                                      \
    H("metric")

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

// InterferenceSpec's keys (the columns: NM_PRECISION_FIELDS above).
#define NM_INTERFERENCE_FIELDS(X, H)                                                                                                              \
    X(max_busy_pct, max_busy_pct, 0, 100, 0, Percent, "percent of all CPUs busy, steal included", "a percentage of all CPUs from 0 to 100")       \
    X(max_steal_pct, max_steal_pct, 0, 100, 0, Percent, "percent of all CPUs stolen by the hypervisor", "a percentage of all CPUs from 0 to 100") \
    X(sample_ms, sample_ms, 0, 5000, 0, Milliseconds, "how long /proc/stat is sampled before each repetition; 0 = no check",                      \
      "milliseconds from 0 (no check) to 5000")                                                                                                   \
    X(max_wait_s, max_wait_s, 0, 3600, 0, Seconds, "the longest wait for the load to fall; 0 = do not wait, only mark",                           \
      "a number of seconds from 0 to 3600")

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

// SweepConfig's keys (the columns: NM_PRECISION_FIELDS above); the tuning axes (kTuningAxes) follow them,
// coded by hand (matrix/model/tuning_axis_codec.cpp).
#define NM_SWEEP_CONFIG_FIELDS(X, H)                                                                                                         \
    H("$schema")                                                                                                                             \
    H("name")                                                                                                                                \
    H("description")                                                                                                                         \
    H("offloads")                                                                                                                            \
    H("mtu")                                                                                                                                 \
    H("traffic")                                                                                                                             \
    X(duration_s, duration_s, 0, 86400, kSweepKeyAboveMin, Seconds, "Measured seconds per repetition", "a positive number of seconds")       \
    X(omit_s, omit_s, 0, 3600, 0, Seconds, "Warm-up seconds before each repetition, not counted", "a number of seconds from 0 to 3600")      \
    X(repetitions, repetitions, 1, 1000, 0, None,                                                                                            \
      "Measured repetitions of each cell (with a precision, its min_repetitions to max_repetitions instead)", "a positive integer")          \
    X(cooldown_s, cooldown_s, 0, 3600, 0, Seconds, "Idle seconds after each measured visit of a cell", "a number of seconds from 0 to 3600") \
    X(link_wait_s, link_wait_s, 0, 600, 0, Seconds,                                                                                          \
      "After each change on an end: the longest wait for its link to be back (carrier and operstate up) and, when the change "               \
      "dropped it, for the path to answer; a cell whose link is not back by then is rolled back and marked link_lost. 0 waits for "          \
      "nothing",                                                                                                                             \
      "a number of seconds from 0 to 600")                                                                                                   \
    H("apply_to")                                                                                                                            \
    H("exclude")                                                                                                                             \
    H("precision")                                                                                                                           \
    H("order")                                                                                                                               \
    H("interference")                                                                                                                        \
    H("affinity")                                                                                                                            \
    X(profile, profile, 0, 0, 0, None,                                                                                                       \
      "A kernel profile of every run's measured window on each end's host, as nicmatrix run --profile: where the CPU went, by "              \
      "category (results: runs[].cpu_profile, summary cpu:<category>). Needs root or CAP_PERFMON; not for rfc2544 tests",                    \
      "true or false")                                                                                                                       \
    X(profile_hz, profile_hz, 1, 10000, 0, Hertz, "The profile's samples per second per CPU", "samples per second per CPU from 1 to 10000")

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
