#pragma once
// The one place in matrix/ that names the concrete device control, journal and traffic engine classes.
// Everything else receives the interfaces.
#include <memory>
#include <string>

#include "core/traffic_runner.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"
#include "matrix/lab_session.hpp"

namespace nm {

/// Where a sweep journals the original settings unless --journal says otherwise; `nicmatrix restore`
/// reads the same file. Under /run: after a reboot the NICs are back at their defaults, and a journal
/// that survived would "restore" a stale state.
inline constexpr const char* kDefaultJournalPath = "/run/nicmatrix/journal.json";

/// The factories of a `sweep --lab`: NetlinkDeviceControl per namespace, the engine's client and its
/// in-process TrafficServer. Throws nm::Error (Failed) when this build lacks them.
LabFactories real_lab_factories();

/// NetlinkDeviceControl for the caller's namespace.
std::unique_ptr<DeviceControl> real_device_control();

/// FileSettingsJournal at `path`.
std::unique_ptr<SettingsJournal> real_journal(const std::string& path);

/// The traffic engine's client.
std::unique_ptr<TrafficRunner> real_traffic_client();

}  // namespace nm
