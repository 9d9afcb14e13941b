#pragma once
// The state machine of one controlling session of the peer agent, without I/O: its unconfirmed changes
// (a stack, newest last), what became of every change id, and when the session counts as silent.
// PeerAgent does the device work and the messages; this decides what is due and when (tests drive it
// with a fake clock).
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/clock.hpp"
#include "core/device/device_types.hpp"
#include "ethtool_ctl/journal_types.hpp"

namespace nm {

class ChangeLedger {
public:
    /// One applied change: the interface, its state just before, what it wrote (each setting's value
    /// before it and after it: a rollback takes back only these), and when its window closes.
    struct Change {
        uint64_t id = 0;
        std::string ifname;
        LinkState before;
        Clock::time_point deadline;
        SettingWrites writes;
    };

    enum class Confirmation {
        Confirmed,         ///< it (and every older pending change) now stands
        AlreadyConfirmed,  ///< it stood already; nothing changes
        RolledBack,        ///< its window had passed (or a restore came): it was reverted; refuse the confirm
        Unknown,           ///< no change of this session has the id
    };

    /// `heartbeat_timeout`: silence after the last handled message that ends the session. `now`: the
    /// session's start, which counts as heard.
    ChangeLedger(std::chrono::milliseconds heartbeat_timeout, Clock::time_point now);

    /// A message passed the MAC and sequence checks and was handled at `now`.
    void heard(Clock::time_point now);

    /// Pushes an applied change. The caller keeps the stack under kMaxPendingChanges.
    void record(Change change);

    /// What a confirm of `id` does; Confirmed keeps `id` and the pending changes older than it.
    Confirmation confirm(uint64_t id);

    /// True when the window of some pending change has closed by `now`.
    bool rollback_due(Clock::time_point now) const;

    /// Takes every pending change, newest first, to be reverted (each its own writes: the last one
    /// reverted leaves the interfaces at the last confirmed state); their ids count as rolled back.
    std::vector<Change> take_for_rollback();

    /// Drops `id` from the pending changes as rolled back (an apply that failed half-way and was reverted).
    void drop(uint64_t id);

    /// True when the session is silent at `now`: heartbeat_timeout since the last handled message and
    /// no pending change still inside its window (a change's window always runs to its end).
    bool silent(Clock::time_point now) const;

    /// When something is next due (a window closing, or the silence limit).
    Clock::time_point next_due() const;

    const std::vector<Change>& pending() const { return pending_; }

private:
    enum class Fate { Pending, Confirmed, RolledBack };

    std::chrono::milliseconds heartbeat_timeout_;
    Clock::time_point last_heard_;
    std::vector<Change> pending_;    // oldest first
    std::map<uint64_t, Fate> fate_;  // every id this session made
};

}  // namespace nm
