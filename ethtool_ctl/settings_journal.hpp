#pragma once
#include <string_view>
#include <vector>

#include "core/base/device_types.hpp"

namespace nm {

/// The restore journal: the original state of every interface a process is about to change, kept
/// durably so that whatever happens to the process (exit, signal, exception, SIGKILL, crash) the
/// interfaces can be put back. The real implementation keeps a JSON file (FileSettingsJournal); the
/// matrix layer sees only this interface.
class SettingsJournal {
public:
    virtual ~SettingsJournal() = default;

    /// Records `original` (every changeable feature's wanted state, and the MTU) for its interface and
    /// namespace, unless that interface is already recorded: the first state seen is the original. The
    /// record is on disk (written, fsynced, renamed) before this returns.
    virtual void remember(const LinkState& original) = 0;

    /// Puts every recorded interface back, reads back to verify, and drops the entries that now hold.
    /// An interface or namespace that no longer exists is dropped with a note in its report (a lab that
    /// was taken down has nothing to restore). Calling it again when nothing is recorded does nothing.
    virtual std::vector<ApplyReport> restore() = 0;
};

}  // namespace nm
