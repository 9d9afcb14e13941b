#include "matrix/real_backends.hpp"

#include "core/base/error.hpp"

// MERGE: the device control (NetlinkDeviceControl, FileSettingsJournal) and the traffic engine (its client
// and TrafficServer) are built on their own branches. Once they are merged, real_backends() becomes:
//   SweepBackends b;
//   b.journal = [](const std::string& path) { return std::make_unique<FileSettingsJournal>(path); };
//   b.device  = [] { return std::make_unique<NetlinkDeviceControl>(); };
//   b.traffic = [] { return std::make_unique<TrafficClient>(); };
//   b.lab     = [] { return LabFactories{[](const std::string&) { return std::make_unique<NetlinkDeviceControl>(); },
//                                        [] { return std::make_unique<TrafficClient>(); },
//                                        [] { return std::make_unique<LabServerAdapter<TrafficServer>>(); }}; };
// (LabSession calls every lab factory on a thread already inside the end's namespace; if the device
// control works on the caller's namespace only, wrap it: device_in_netns(netns, std::make_unique<...>()).)
namespace nm {
namespace {

[[noreturn]] void not_merged(const std::string& what) {
    throw Error(ErrorKind::Failed, "this build has no " + what +
                                       " yet (the sweep runs against its interfaces; the real classes come with the "
                                       "device-control and traffic-engine branches)");
}

}  // namespace

SweepBackends real_backends() {
    SweepBackends b;
    b.journal = [](const std::string&) -> std::unique_ptr<SettingsJournal> { not_merged("settings journal"); };
    b.device = []() -> std::unique_ptr<DeviceControl> { not_merged("netlink device control"); };
    b.traffic = []() -> std::unique_ptr<TrafficRunner> { not_merged("traffic engine client"); };
    b.lab = []() -> LabFactories { not_merged("device control and traffic engine"); };
    return b;
}

}  // namespace nm
