#pragma once
// The ends of a sweep under control: their original state, claimed in the journal before the first
// change; a cell's settings applied to each (from the originals, the link waited out, the path probed
// after a drop, a peer agent's change confirmed or reverted on both ends); the peer agent recovered after
// a lost connection; and every claimed end put back at the end.
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/traffic/rfc2544_types.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/link_settle.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/sweep_plan.hpp"

namespace nm {

struct SweepEnd;
struct SweepTarget;
struct SweepServices;
struct SweepOptions;

/// The peer agent was lost and did not come back: the sweep stops, restoring its own side.
struct AgentGone {
    std::string why;
};

class SweepEnds {
public:
    SweepEnds(const SweepPlan& plan, const SweepTarget& target, SweepServices& services, const SweepOptions& options, std::stop_token stop);

    /// Restores the journal entries of processes that are gone (those of live ones are left alone), with
    /// a note for each, before any original is read.
    void restore_leftovers();
    /// Reads the original state of every end that has a device (local, remote, the DUT's ports).
    void open();
    /// The pre-check: the cells with a setting an end cannot take (an MTU outside the device's range, a
    /// tuning kind the end does not have), by key, with the kernel's reason. Changes nothing.
    std::map<std::string, std::string> infeasible_cells() const;
    /// hosts.local.interface and hosts.remote.interface as the sweep found them.
    void describe(ResultsFile& results) const;
    /// Journals (claims) every end the sweep changes on this host: nm::Error Refused, naming it, when a
    /// live process holds one.
    void claim();

    /// Applies `cell`'s settings on every end into `result` (its applied_* and, when they do not hold, its
    /// status). True when the peer agent confirmed the change (the path was probed at the cell's MTU).
    bool apply_cell(const CellSpec& cell, CellResult& result);
    /// What this visit's change did to the links, for its first run (taken by it).
    std::optional<ChangeLink>& pending_link() { return pending_link_; }
    /// True when an end's link dropped in this visit's change.
    bool link_dropped() const;
    /// Every end starts the next cell from the originals (after a failure or a lost agent).
    void start_over();

    /// True when the peer agent's control connection is gone.
    bool agent_lost() const;
    /// Reconnects to the peer agent within SweepOptions::agent_reconnect; throws AgentGone when it does not
    /// come back.
    void recover_agent();

    /// The local end's link speed as the cell leaves it (none without a local device or a known speed).
    std::optional<double> local_link_bps() const;
    /// Every end's coalescing as it was found, for a frame-size table.
    std::vector<InterfaceCoalesce> interfaces() const;

    /// Takes back on every claimed end what this process wrote there, and drops its journal entry once
    /// the restore holds; an end whose restore fails keeps its entry and gets a note.
    std::vector<ApplyReport> restore();

private:
    // The runtime of one end during a sweep: what it was before, and what the last cell left on it.
    struct End {
        const SweepEnd* end = nullptr;
        EndRole role = EndRole::Local;
        bool remote = false;
        bool changes = false;  // the sweep changes something on this end
        LinkState original;
        std::optional<InterfaceSystem> system;  // qdisc, IRQs, RPS/XPS as the sweep found them
        bool features_dirty = false;            // a profile's features were applied since the last reset
        bool claimed = false;                   // journalled under this process: ours to restore at the end
        SettingWrites writes;                   // what this process wrote on this end (as journalled)
    };

    ApplyReport apply(End& end, const LinkSettings& wanted, const LinkWait& link = {});
    bool apply_end(End& end, const CellSpec& cell, CellResult& result);
    bool note_link(const End& end, const ApplyReport& report, CellResult& result);
    bool confirm_change(const CellSpec& cell, CellResult& result, const std::vector<LinkState>& before);
    bool wait_for_path(const CellSpec& cell, CellResult& result, std::chrono::steady_clock::time_point changed);
    void roll_back_cell(const std::vector<LinkState>& before);
    LinkWait link_wait() const;
    void note(const std::string& text);

    const SweepPlan& plan_;
    const SweepConfig& config_;
    const SweepTarget& target_;
    SweepServices& s_;
    const SweepOptions& options_;
    std::stop_token stop_;
    std::vector<End> ends_;
    std::optional<size_t> current_profile_;
    std::optional<ChangeLink> pending_link_;
};

}  // namespace nm
