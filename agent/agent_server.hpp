#pragma once
// `nicmatrix serve` put together: the traffic server and, on the connections that ask for it, the peer
// agent with its key, its allowed interfaces and its journal. The CLI parses flags into
// AgentServerOptions and calls serve(); everything else about starting and stopping an agent is here.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "agent/peer_agent.hpp"
#include "core/base/clock.hpp"
#include "core/session/traffic_server.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

struct AgentServerOptions {
    /// The traffic server's own options, passed through as they are; AgentServer sets `control` (and
    /// `on_refused` when it is empty: to `log`).
    ServerOptions server;
    std::vector<std::string> allow_control;                           ///< --allow-control: interfaces a client may change
    std::vector<std::string> allow_kinds;                             ///< --allow-kinds words (parse_agent_kinds); none = the default kinds
    std::string key_file;                                             ///< --key-file; "" = $NICMATRIX_KEY_FILE, else no key
    std::string journal = FileSettingsJournal::default_agent_path();  ///< used only when settings control is on
    std::chrono::milliseconds heartbeat_timeout{10000};               ///< --heartbeat-timeout
    /// One line for each thing worth telling (what the agent allows, refusals, rollbacks, restores), each
    /// made safe for a log (agent/log_line.hpp). Must not throw; called from several threads, serialized.
    std::function<void(const std::string&)> log;
};

/// The agent and the traffic server of one `nicmatrix serve`.
class AgentServer {
public:
    /// Loads the key (nm::Error Usage naming the file: unreadable, too short, readable by others, ...),
    /// checks every --allow-control interface exists and every --allow-kinds word is a kind (Usage), opens the journal and restores what an
    /// agent that crashed or was killed left in it (only when settings control is on), says what it
    /// allows, and binds (Failed for a port in use).
    explicit AgentServer(AgentServerOptions options);
    ~AgentServer();
    AgentServer(const AgentServer&) = delete;
    AgentServer& operator=(const AgentServer&) = delete;

    uint16_t port() const;
    PeerCapabilities capabilities() const { return agent_->capabilities(); }

    /// Serves tests and control connections until `stop` (or the first test with `once`), then restores
    /// every interface the agent changed.
    void serve(std::stop_token stop);

private:
    AgentServerOptions options_;
    std::function<void(const std::string&)> log_;  // options_.log, made safe and serialized
    SteadyClock clock_;
    NetlinkDeviceControl device_;
    std::unique_ptr<SettingsJournal> journal_;
    std::optional<PeerAgent> agent_;
    std::optional<TrafficServer> server_;
};

}  // namespace nm
