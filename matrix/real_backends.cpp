#include "matrix/real_backends.hpp"

#include "core/iperf3/iperf3_client.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/session/traffic_client.hpp"
#include "core/session/traffic_server.hpp"
#include "core/session/traffic_session.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "matrix/iperf3_lab_server.hpp"

namespace nm {

SweepBackends real_backends() {
    SweepBackends b;
    b.journal = [](const std::string& path) { return std::make_unique<FileSettingsJournal>(path); };
    b.device = [] { return std::make_unique<NetlinkDeviceControl>(); };
    b.traffic = [](const std::string& key) {
        TrafficClientOptions o;
        o.key = key;
        return std::make_unique<TrafficClient>(std::move(o));
    };
    b.lab = [] {
        LabFactories f;
        // NetlinkDeviceControl opens its sockets in the namespace it is given; TrafficClient and
        // TrafficServer act in the namespace of the thread that uses them (LabSession puts them there).
        f.device = [](const std::string& netns) { return std::make_unique<NetlinkDeviceControl>(netns); };
        f.client = [] { return std::make_unique<TrafficClient>(); };
        f.server = [] {
            ServerOptions options;
            options.port = 0;  // any free port: the lab's server namespace is ours alone
            // The lab's own server serves only this sweep: whatever the config asks is the user's choice.
            options.limits.max_duration = std::chrono::seconds(static_cast<int64_t>(kMaxDurationS + kMaxOmitS));
            options.limits.max_stall_timeout_s = kMaxStallTimeoutS;
            return std::make_unique<LabServerAdapter<TrafficServer>>(std::move(options));
        };
        return f;
    };
    b.iperf3_traffic = [] { return std::make_unique<Iperf3Client>(); };
    b.iperf3_lab = [lab = b.lab] {
        LabFactories f = lab();
        f.client = [] { return std::make_unique<Iperf3Client>(); };
        // The lab's server namespace is ours alone: iperf3's own port is free there.
        f.server = [] { return std::make_unique<Iperf3LabServer>(iperf3::kDefaultPort); };
        return f;
    };
    return b;
}

}  // namespace nm
