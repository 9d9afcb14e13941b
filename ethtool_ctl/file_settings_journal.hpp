#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

/// The restore journal as a JSON file, {"schema": "nicmatrix/journal/v1", "entries": [LinkState, ...]},
/// one entry per (netns, ifname). Every write goes to a temporary file that is fsynced and renamed over
/// the journal, then the directory is fsynced, so after a crash the file is either the old or the new
/// journal, never a torn one. The file is removed when its last entry is restored.
class FileSettingsJournal : public SettingsJournal {
public:
    /// Makes the DeviceControl that restores one namespace ("" = the caller's).
    using ControlFactory = std::function<std::unique_ptr<DeviceControl>(const std::string& netns)>;

    /// `path` "" = default_path(). `factory` empty = NetlinkDeviceControl.
    explicit FileSettingsJournal(std::string path = {}, ControlFactory factory = {});

    /// $NICMATRIX_JOURNAL when set and not empty, else /run/nicmatrix/journal.json.
    static std::string default_path();

    const std::string& path() const noexcept { return path_; }

    /// The entries on disk now (none when the file does not exist). Throws nm::Error (Failed) when the
    /// file exists but cannot be read or parsed.
    std::vector<LinkState> entries() const;

    void remember(const LinkState& original) override;

    /// See SettingsJournal::restore. A report whose `note` is not empty says why its entry was dropped
    /// (namespace or interface gone) or kept (the restore did not hold: it stays for the next try).
    std::vector<ApplyReport> restore() override;

private:
    void write(const std::vector<LinkState>& entries) const;

    std::string path_;
    ControlFactory factory_;
};

}  // namespace nm
