#pragma once
// The peer agent's settings control (`nicmatrix serve --allow-control IFACE --key-file F`): the engine's
// server hands it every control connection that does not open with a test's "hello". It authenticates
// the client (matrix/peer_auth.hpp), applies MTU and offloads on the allowed interfaces only, journals
// the originals before the first change, reverts a change that is not confirmed in time (commit
// confirmed), and restores everything when the controlling client disconnects, stops sending heartbeats,
// or the agent stops.
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/control_handler.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

struct PeerAgentOptions {
    std::set<std::string> allowed;                  ///< interfaces a client may change (--allow-control)
    std::optional<std::string> key;                 ///< the pre-shared key; none = every settings change is refused
    std::chrono::milliseconds heartbeat_timeout{10000};   ///< silence after which the controller is gone
    /// One line per refusal, restore or rollback (the CLI prints them on stderr). Must not throw; called
    /// from connection threads (the agent serializes the calls).
    std::function<void(const std::string&)> log;
};

/// Whether this agent changes settings, and why not; what it tells every client at connect.
struct PeerCapabilities {
    bool control = false;
    std::vector<std::string> interfaces;
    std::string why;   ///< when !control
};

/// The ControlHandler of `nicmatrix serve`. Thread-safe: one controlling client at a time (a second gets
/// "busy"), any number of capability checks.
class PeerAgent final : public ControlHandler {
public:
    /// `device` acts in the agent's namespace; `journal` is the agent's own. Both must outlive the agent.
    PeerAgent(DeviceControl& device, SettingsJournal& journal, PeerAgentOptions options);

    PeerCapabilities capabilities() const;

    /// Restores a journal left by an agent that crashed or was killed; returns what was restored.
    std::vector<ApplyReport> restore_leftover();

    /// Restores every journalled interface (used when the agent stops). Throws nm::Error (Failed).
    std::vector<ApplyReport> restore_all();

    void serve_control(ControlChannel channel, Json first, std::stop_token stop) override;

private:
    struct Session;
    void log(const std::string& line);
    Json handle_request(Session& session, const Json& request);
    void rollback(Session& session);

    DeviceControl& device_;
    SettingsJournal& journal_;
    PeerAgentOptions options_;
    std::mutex device_mutex_;    // the device, the journal and controller_
    std::mutex log_mutex_;
    bool controller_ = false;    // a session holds control
};

}  // namespace nm
