#pragma once
#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "agent/confirmed_end.hpp"
#include "core/base/clock.hpp"
#include "core/session/traffic_runner.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"
#include "matrix/load_probe.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/path_probe.hpp"
#include "matrix/sweep_plan.hpp"

namespace nm {

/// One end of the measured path, as the sweep reaches it.
struct SweepEnd {
    DeviceControl* device = nullptr;  ///< null: this end cannot be read or changed from here
    std::string ifname;
    std::string why_no_control;  ///< when device is null: why, for the refusal message
    /// Set for the peer agent's end: not journalled here (the agent keeps its own journal), restored
    /// through it, and every cell's change on it is confirmed only after both paths are checked.
    ConfirmedEnd* agent = nullptr;
    /// An emulated NIC (the VM lab): recorded with the interface's identity (hosts.*.interface).
    std::string emulator{};
    std::string device_model{};
};

/// Where a sweep runs: the two ends and where the traffic server listens.
struct SweepTarget {
    SweepEnd local;   ///< the client's interface
    SweepEnd remote;  ///< the server's interface
    /// The device under test's ports (the bridge lab's dut-a and dut-b); empty when the path has none.
    /// `"apply_to": "dut"` puts the axes on these, leaving sender and receiver as they are.
    std::vector<SweepEnd> dut;
    TestSpec base;  ///< host, port, bind and iface of every test; the rest comes from the cell
};

/// Progress of a sweep, for the observer: one start and one done per visit of a cell (a visit is one
/// repetition in the shuffled order, all of the cell's repetitions in the sequential one).
struct CellProgress {
    size_t number = 0;  ///< 1-based position of the cell in the config's cell order
    size_t total = 0;
    const CellSpec* cell = nullptr;
    LinkSettings local;  ///< what the cell applies on each end
    LinkSettings remote;
    LinkSettings dut;         ///< what the cell applies on each DUT port
    uint32_t round = 0;       ///< 1-based round of the shuffled order; 0 in the sequential one
    uint32_t repetition = 0;  ///< start: the number of the repetition about to run; done: the runs the cell has
    bool final = true;        ///< done: the cell wants no more visits
    double elapsed_s = 0;     ///< since the sweep started measuring
    double eta_s = 0;         ///< estimated seconds until the sweep ends (at most what is left of the budget)
    double budget_s = 0;      ///< --time-budget; 0 = none
};

/// Receives progress. The library never prints; the CLI renders these as lines.
class SweepObserver {
public:
    virtual ~SweepObserver() = default;
    /// Something worth telling that is not a cell: a leftover journal restored.
    virtual void on_note(const std::string& /*text*/) {}
    /// A cell is about to be visited: applied and measured.
    virtual void on_cell_start(const CellProgress& /*progress*/) {}
    /// A visit is done and the cell recorded, with every run it has so far (not called for a cell cut
    /// short by a stop before its first figure: it is not recorded).
    virtual void on_cell_done(const CellProgress& /*progress*/, const CellResult& /*result*/) {}
    /// While repetition `repetition` (1-based) of cell `key` runs: an interval of this host's counts has
    /// ended (TrafficRunner::run_live; only for tests with intervals).
    virtual void on_interval(const std::string& /*key*/, size_t /*repetition*/, const LiveInterval& /*interval*/) {}
    /// For an observer that writes a stream (--json-stream): what it has lost so far, recorded in the
    /// results (run.json_stream) each time they are written. Must not block.
    virtual std::optional<JsonStreamStats> stream_stats() const { return std::nullopt; }
};

/// What the runner needs from the system, all behind interfaces.
struct SweepServices {
    SettingsJournal& journal;
    TrafficRunner& traffic;
    PathProbe& probe;
    Clock& clock;
    SweepObserver* observer = nullptr;
    HostInfo local_host;   ///< kernel and CPU of this host (interface filled in by the runner)
    HostInfo remote_host;  ///< the server's host, as far as it is known
    /// Samples the machine's load before each repetition (the config's "interference"); null = no check.
    LoadProbe* load = nullptr;
};

/// How a sweep records itself.
struct SweepOptions {
    std::string output_path;            ///< rewritten atomically after every cell; "" = keep in memory
    std::optional<ResultsFile> resume;  ///< a partial results file of the same config: its cells are kept
    std::string command;                ///< the command line, for the results file
    std::string config_file;
    std::string tool_version;
    std::string tool_commit;                        ///< the build's source commit ("" when unknown)
    std::chrono::milliseconds probe_timeout{1000};  ///< the path probe's wait for its echo (resent every 250 ms)
    std::chrono::milliseconds rollback_wait{6000};  ///< how long to wait for the peer agent to report a rollback
    /// How long the sweep tries to reach the peer agent again after losing its control connection; when
    /// it does not come back, the sweep restores this side, saves what it has and stops.
    std::chrono::milliseconds agent_reconnect{15000};
    std::optional<uint64_t> seed;         ///< the shuffled order's seed; none = the resumed file's, or random
    std::optional<double> time_budget_s;  ///< no repetition starts that would end after this many seconds of measuring
};

/// How a sweep ended.
struct SweepOutcome {
    ResultsFile results;
    bool interrupted = false;  ///< stopped early (the stop token, or stopped_because); unfinished cells are missing
    /// Why the sweep stopped on its own before the end (the peer agent was lost and did not come back);
    /// empty when it ran to its end or was stopped by the stop token.
    std::string stopped_because;
    size_t cells_run = 0;               ///< cells visited by this call
    std::vector<ApplyReport> restored;  ///< what the final restore did
};

/// Throws nm::Error (Usage) when `plan` changes settings on an end that cannot be changed from here
/// (`why` says why, e.g. the peer agent's control is missing). Cheap: reads no device.
void refuse_if_uncontrollable(const SweepPlan& plan, bool remote, const std::string& why);

/// Checks a sweep against its ends before anything is changed: every end that gets settings must be
/// controllable (else nm::Error Usage explaining that the peer's side needs the agent), each interface
/// must exist, and every profile and MTU must pass DeviceControl::validate (unknown feature names, MTUs
/// outside the device's range). Throws nm::Error (Usage) naming the end, the interface and the setting.
void check_sweep(const SweepPlan& plan, const SweepTarget& target);

/// Runs a sweep: restores the journal entries of processes that are gone (those of live ones are left
/// alone, with a note), checks everything (check_sweep), reads and journals (claims) the original state of
/// every end it will change, then visits the cells (less those options.resume has all of) in rounds, each
/// round in a shuffled order (config.order; "sequential": cell after cell). Every visit applies the cell's
/// settings (one DeviceControl::apply per end) and reads back the effective state; the first visit also
/// decides the cell for the whole sweep (duplicate, infeasible, path_mtu_blackhole at the cell's MTU,
/// unreachable_after_change). A visit measures one repetition (sequential: all of them), after waiting for
/// a quiet machine (config.interference), then summarizes, records, saves the results file and cools down.
/// A cell is visited until it has `repetitions`, or with a precision until its median's interval is within
/// ci_pct (min..max_repetitions), or the time budget ends the sweep. Every cell starts from the original
/// state: a feature its profile does not name is at its original value. At the end, when `stop` is
/// requested and when an exception leaves, every claimed end is put back from the original this call read
/// (the journal is only the backup for a crash) and its journal entry is dropped once the restore holds.
/// Per-cell failures are recorded in the cell; input errors (before any change), an interface another live
/// process holds (nm::Error Refused naming it, before any change), failures to save, and a final restore
/// that did not hold (after saving) throw.
/// With the peer agent, each visit's change on the peer stands only once confirmed (confirm_change); a
/// lost control connection is reconnected (SweepOptions::agent_reconnect) and the visit it cut is run
/// again from the originals (what it measured is dropped); when the agent does not come back the sweep
/// restores its own side, saves what it has and returns with `stopped_because` set, changing nothing more.
///
/// The parts, each in a file of its own: the plan (sweep_plan.hpp: the cells, expanded once), the checks
/// (sweep_check.cpp), the schedule (sweep_schedule.hpp: rounds, shuffle, precision, budget, progress),
/// the ends (sweep_ends.hpp: apply, confirm, roll back, restore, agent recovery; end_settings.hpp: the
/// settings of an end), measuring (cell_measure.hpp) and recording (sweep_record.hpp); runner.cpp is the
/// loop that ties them.
SweepOutcome run_sweep(const SweepPlan& plan, const SweepTarget& target, SweepServices& services, const SweepOptions& options, std::stop_token stop);
/// run_sweep of make_sweep_plan(config): for a config already checked (tests, a config built in code).
SweepOutcome run_sweep(const SweepConfig& config, const SweepTarget& target, SweepServices& services, const SweepOptions& options,
                       std::stop_token stop);

}  // namespace nm
