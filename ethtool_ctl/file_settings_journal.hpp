#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ethtool_ctl/journal_system.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

/// The restore journal as a JSON file, {"schema": "nicmatrix/journal/v3", "entries": [JournalEntry, ...]},
/// one entry per interface (by identity) and one per namespace whose sysctls were written, each with
/// every setting its owner wrote (before, written). A file not owned by this user (root) or writable by
/// group or others is refused, and every name in it passes the checks of core/device/setting_rules.hpp. Every change is a read-modify-write under an flock on
/// `<path>.lock` (waited for at most `lock_wait`), written to a fresh temporary file (O_EXCL) that is
/// fsynced and renamed over the journal, then the directory is fsynced: after a crash the file is
/// either the old or the new journal, never a torn one. The file is removed with its last entry.
/// Names that are not UTF-8 are written with U+FFFD in their place (the identity still finds them).
/// Files of v2 (an original state per interface, no writes) are restored as v2 did: every setting that
/// differs from the original goes back. Entries of v1 (no identity) are reported, never matched by name.
class FileSettingsJournal : public SettingsJournal {
public:
    /// `path` "" = default_path(). `system` empty = real_journal_system().
    explicit FileSettingsJournal(std::string path = {}, std::shared_ptr<JournalSystem> system = {});

    /// $NICMATRIX_JOURNAL when set and not empty, else /run/nicmatrix/journal.json: `set`, `sweep`.
    static std::string default_path();
    /// Where `nicmatrix serve` journals by default: /run/nicmatrix/agent-journal.json. Under /run, so a
    /// reboot (which resets the interfaces) also clears it.
    static std::string default_agent_path();

    /// What `nicmatrix restore` reads without --journal: default_path(), default_agent_path(), and every
    /// other agent journal in that directory (`agent-IFACE.json`, as the packaged agent unit names them).
    static std::vector<std::string> default_paths();

    /// The agent journals in `dir`: its files named agent*.json, sorted (not their locks or temporaries).
    static std::vector<std::string> agent_journals_in(const std::string& dir);

    const std::string& path() const noexcept { return path_; }

    /// How long a lock held by another process is waited for (default 10 s).
    void set_lock_wait(std::chrono::milliseconds wait) { lock_wait_ = wait; }

    /// The entries on disk now (none when the file does not exist). Throws nm::Error (Failed) naming the
    /// file when it exists but cannot be read or parsed.
    std::vector<JournalEntry> entries() const;

    void remember(const LinkState& original) override;
    void record(const LinkState& link, const SettingWrites& writes) override;
    SettingWrites writes(const LinkState& link) override;
    void release(const LinkState& original) override;
    std::vector<JournalReport> restore(const RestoreOptions& options) override;
    using SettingsJournal::restore;

private:
    void write(const std::vector<JournalEntry>& entries) const;
    JournalReport restore_entry(const JournalEntry& entry);
    JournalReport restore_netns_entry(const JournalEntry& entry);
    std::string where_of(const LinkState& link) const;
    JournalEntry& claim(std::vector<JournalEntry>& all, const LinkState& link, JournalScope scope);
    JournalReport put_back_found(const JournalEntry& entry, DeviceControl& device, const LinkState& now, const std::string& how);

    std::string path_;
    std::shared_ptr<JournalSystem> system_;
    std::chrono::milliseconds lock_wait_{10000};
};

}  // namespace nm
