#pragma once
// A sweep as a user asks for it (the CLI's flags, the Python keyword arguments) turned into a running
// sweep: every rule that derives one option from another lives here, so `nicmatrix sweep` and
// `nicmatrix.sweep()` behave alike.
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "ethtool_ctl/lab_types.hpp"
#include "ethtool_ctl/settings_journal.hpp"
#include "matrix/lab_session.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/runner.hpp"

namespace nm {

/// A sweep as asked for: `nicmatrix sweep`'s flags, `nicmatrix.sweep()`'s arguments.
struct SweepRequest {
    std::string config_file;
    bool lab = false;      ///< a lab of its own; else iface + peer
    std::string lab_name;  ///< "" = nmsweep<pid>
    /// With `lab`: adopt the lab this file describes (LabInfo JSON, as `lab show --json` prints; its
    /// "client" and "server" interfaces are the ends) instead of making one; it is left in place afterwards.
    /// The VM lab runs its sweeps in the guest this way. "" = make a lab of its own.
    std::string lab_from;
    LabTopology topology = LabTopology::Pair;
    std::string iface;       ///< local interface (peer mode)
    std::string peer;        ///< the host running `nicmatrix serve`: an IPv4 or IPv6 address or a name
    int ip_version = 0;      ///< 4 or 6: the address family to use (--lab: which of the lab's addresses; a
                             ///< --peer name: which of its addresses); 0 = IPv4 on the lab, the first a name resolves to
    std::string peer_iface;  ///< the peer's interface; "" = the only one its agent allows
    std::string key_file;    ///< pre-shared key for the peer agent and every test; "" = $NICMATRIX_KEY_FILE or none
    uint16_t port = 0;       ///< the peer's control port; 0 = the peer kind's: 5301, iperf3's 5201
    /// What runs on the far end: "nicmatrix" (`nicmatrix serve`, the default) or "iperf3" (a stock `iperf3 -s`,
    /// driven through iperf3's own protocol: TCP stream tests only, only the local interface changes; on the
    /// lab, Debian's iperf3 -s runs in the server namespace). "" = nicmatrix.
    std::string peer_kind;
    std::string output;   ///< "" = the resumed file, or nicmatrix-results/<config name>-<UTC stamp>.json (relative to the current directory)
    std::string resume;   ///< a results file to complete
    std::string journal;  ///< "" = the journal's default ($NICMATRIX_JOURNAL or /run/nicmatrix/journal.json), as `nicmatrix restore` reads
    std::string command;  ///< the command line, for the results file
    std::string profile_categories;       ///< the profile's category table ("" = the shipped one), for "profile": true
    std::optional<double> precision_pct;  ///< --precision: sets the config's precision.ci_pct (defaults for the rest)
    std::optional<uint64_t> seed;         ///< --seed: the shuffled order's seed
    std::string time_budget;              ///< --time-budget DURATION ("90s", "15m", "1h30m", seconds); "" = none
};

/// How to make the real parts; matrix/real_backends.cpp gives the ones this build has, tests give others.
struct SweepBackends {
    std::function<std::unique_ptr<SettingsJournal>(const std::string& path)> journal;
    std::function<LabFactories()> lab;
    std::function<std::unique_ptr<DeviceControl>()> device;  ///< for the caller's namespace (peer mode)
    /// The engine's client (peer mode), proving it holds `key` when it is not empty (the sweep's key).
    std::function<std::unique_ptr<TrafficRunner>(const std::string& key)> traffic;
    /// The client of a stock iperf3 far end (peer mode with peer_kind "iperf3").
    std::function<std::unique_ptr<TrafficRunner>()> iperf3_traffic;
    /// The lab with `iperf3 -s` as its server (lab mode with peer_kind "iperf3").
    std::function<LabFactories()> iperf3_lab;
};

/// The inputs of a request, loaded and checked without touching the system.
struct PreparedSweep {
    SweepPlan plan;  ///< the config (with --precision applied) and its cells
    std::optional<ResultsFile> resume;
    std::string output;  ///< where the results go
    std::optional<double> time_budget_s;
};

/// Parses a duration: a number of seconds ("600"), or numbers with units h, m, s ("90s", "15m",
/// "1h30m", "2.5m"). Throws nm::Error (Usage) naming `flag` and the accepted forms; 0 is refused.
double parse_duration_s(const std::string& text, const std::string& flag);

/// Loads the config (applying --precision) and the file to resume (checking it was made by the same
/// config), parses --time-budget and decides the output path. Throws nm::Error (Usage) naming the file or
/// the flag and what is wrong.
PreparedSweep prepare_sweep(const SweepRequest& request);

/// Runs a prepared sweep: checks the choice of lab or peer, the permission to change settings, that the
/// peer (peer mode) is reachable, that its server takes every test of the config from us (its key and
/// limits: TrafficRunner::check_access) and, when the config changes the peer's side, that its agent
/// accepts our key and allows control of its interface — all before anything is changed (nm::Error Usage
/// or Refused) — then builds the lab or the peer's target and runs run_sweep.
SweepOutcome execute_sweep(const SweepRequest& request, const PreparedSweep& prepared, const SweepBackends& backends, SweepObserver* observer,
                           std::stop_token stop);

/// The numeric address a sweep talks to for `peer` (an IPv4 or IPv6 address, or a name resolved once
/// here, so the probe, the agent and the engine all use the same address): `ip_version` 4 or 6 asks for
/// that family (0: the first address the name has). Throws nm::Error (Usage) naming --peer when the name
/// does not resolve or the address is not of the asked family.
std::string resolve_peer(const std::string& peer, int ip_version);

/// True when the calling thread may change network settings (CAP_NET_ADMIN effective).
bool has_net_admin();

}  // namespace nm
