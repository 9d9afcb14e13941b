#include "matrix/real_backends.hpp"

#include "core/base/error.hpp"

// MERGE: the device control (NetlinkDeviceControl, FileSettingsJournal) and the traffic engine (client,
// TrafficServer) are built on their own branches. Once they are merged, each function below becomes one
// line, e.g.
//   real_device_control():  return std::make_unique<NetlinkDeviceControl>();
//   real_journal(path):     return std::make_unique<FileSettingsJournal>(path);
//   real_traffic_client():  return std::make_unique<TrafficClient>();
//   real_lab_factories():   return {[](const std::string&) { return real_device_control(); },
//                                   [] { return real_traffic_client(); },
//                                   [] { return std::make_unique<LabServerAdapter<TrafficServer>>(0); }};
// (LabSession calls every factory on a thread already inside the end's namespace.)
namespace nm {
namespace {

[[noreturn]] void not_merged(const std::string& what) {
    throw Error(ErrorKind::Failed, "this build has no " + what +
                                       " yet (the sweep runs against its interfaces; the real classes come with the "
                                       "device-control and traffic-engine branches)");
}

}  // namespace

LabFactories real_lab_factories() { not_merged("device control and traffic engine"); }

std::unique_ptr<DeviceControl> real_device_control() { not_merged("netlink device control"); }

std::unique_ptr<SettingsJournal> real_journal(const std::string& /*path*/) { not_merged("settings journal"); }

std::unique_ptr<TrafficRunner> real_traffic_client() { not_merged("traffic engine client"); }

}  // namespace nm
