#pragma once
#include <vector>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/journal_types.hpp"

namespace nm {

/// What a restore may touch beyond the entries it is sure about.
struct RestoreOptions {
    /// Also the entries of owners that still run (`restore --force`: the person who knows better).
    bool force = false;
    /// Remove the entries that cannot be put back now instead of keeping them (`restore --forget`).
    bool forget = false;
};

/// The restore journal: the original state of every interface a process is about to change, kept
/// durably so that whatever happens to the process (exit, signal, exception, SIGKILL, crash) the
/// interfaces can be put back. Every entry has an owner (the process that made it) and names its
/// interface by identity (namespace inode, ifindex, permanent address or bus info; the name is for
/// people), so no process undoes another's running work and no restore acts on a same-named interface
/// elsewhere. The real implementation keeps a JSON file (FileSettingsJournal); the layers above see only
/// this interface.
class SettingsJournal {
public:
    virtual ~SettingsJournal() = default;

    /// Claims the interface of `original` for this process and records `original` (every changeable
    /// feature's wanted state, the MTU, the identity), unless this process has it already: the first
    /// state seen is the original. An entry whose owner is gone is taken over with its original (which is
    /// truer than the state now); one from an earlier boot is replaced. On disk (written, fsynced,
    /// renamed) before this returns. Throws nm::Error (Refused) naming the owner's pid and command when
    /// another live process holds the interface; nothing is written then, and the caller must change
    /// nothing.
    virtual void remember(const LinkState& original) = 0;

    /// Merges `writes` (setting_writes.hpp) into this process's entry for the interface of `link`, and
    /// their namespace-wide keys (sysctls) into this process's entry for the namespace (one owner entry per
    /// namespace, whichever interface's change wrote them), claiming either when there is none yet. On
    /// disk before it returns. Throws nm::Error (Refused) naming the owner when another live process
    /// holds the interface or the namespace's settings; nothing is written then.
    virtual void record(const LinkState& link, const SettingWrites& writes) = 0;

    /// What this process wrote on the interface of `link` and on its namespace's settings, as journalled.
    virtual SettingWrites writes(const LinkState& link) = 0;

    /// Drops this process's entry for the interface of `original`, after the caller put the interface
    /// back itself and the restore held, and its entry for the namespace when no other entry of this
    /// process is in that namespace. Does nothing when there is no such entry.
    virtual void release(const LinkState& original) = 0;

    /// Puts back the entries this process may act on: its own and those whose owner is gone (with
    /// `force`, also those of live owners, which are otherwise listed LeftAlone). Only what the entry's
    /// owner wrote is put back, and only where it still holds what it wrote; a setting someone else changed
    /// since is reported in the note and left as it is. Each is found by its
    /// identity, never by name alone: an interface that is not the one journalled is not touched. An
    /// entry is removed once its restore holds, or when nothing is left to restore (a veth gone with its
    /// namespace, an entry from an earlier boot), always with a report; everything else is kept with a
    /// note (removed instead with `forget`). Calling it again when nothing is recorded does nothing.
    virtual std::vector<JournalReport> restore(const RestoreOptions& options) = 0;

    /// restore({}) for callers that only log: the ApplyReport of each entry it acted on (restored,
    /// dropped or kept, each with a note saying which unless it was a plain restore); left-alone entries
    /// of live owners are not among them.
    std::vector<ApplyReport> restore();
};

}  // namespace nm
