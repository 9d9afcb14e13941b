#pragma once
// The peer agent's settings control (`nicmatrix serve --allow-control IFACE --key-file F`): the engine's
// server hands it every control connection that does not open with a test's "hello". It authenticates
// the client (agent/agent_protocol.hpp), applies the allowed kinds of setting (MTU, offloads, channels,
// RPS, ...: --allow-kinds) on the allowed interfaces only,
// journals the originals before the first change, reverts changes that are not confirmed in time
// (commit confirmed, with change ids), and restores everything when the controlling client disconnects,
// goes silent, or the agent stops.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_protocol.hpp"
#include "agent/key_file.hpp"
#include "core/base/clock.hpp"
#include "core/control/control_handler.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

struct PeerAgentOptions {
    std::set<std::string> allowed;  ///< interfaces a client may change (--allow-control)
    /// Kinds of setting a client may change on them (--allow-kinds; agent_protocol.hpp kAgentSettingKinds).
    std::vector<std::string> kinds = default_agent_kinds();
    /// Kinds of `kinds` this agent cannot change where it runs, with the reason (unavailable_kinds(), at
    /// start): not offered, refused with the reason, named in the challenge.
    std::map<std::string, std::string> unavailable;
    std::optional<SecretKey> key;                        ///< the pre-shared key; none = every settings change is refused
    std::chrono::milliseconds heartbeat_timeout{10000};  ///< silence after which the controller is gone
    /// One line per refusal, restore or rollback (the CLI prints them on stderr); already made safe
    /// (safe_log_line). Must not throw; called from connection threads (the agent serializes the calls).
    std::function<void(const std::string&)> log;
};

/// Whether this agent changes settings, and why not; what it tells every client at connect.
struct PeerCapabilities {
    bool control = false;
    std::vector<std::string> interfaces;
    std::vector<std::string> kinds;  ///< the kinds of setting a client may change there (kAgentSettingKinds names)
    /// Kinds the agent allows but cannot change where it runs (its sandbox), each with the reason.
    std::map<std::string, std::string> unavailable;
    std::string why;  ///< when !control
};

/// The ControlHandler of `nicmatrix serve`. Thread-safe: one controlling client at a time (a second gets
/// "busy" for apply, confirm and restore), any number of clients that ping, read and validate.
class PeerAgent final : public ControlHandler {
public:
    /// `device` acts in the agent's namespace; `journal` is the agent's own; `clock` times the confirm
    /// windows and the heartbeat timeout. All must outlive the agent.
    PeerAgent(DeviceControl& device, SettingsJournal& journal, Clock& clock, PeerAgentOptions options);

    PeerCapabilities capabilities() const;

    /// Restores the entries an agent that crashed or was killed left in the journal (never those of an
    /// agent that still runs: they are reported LeftAlone); returns what was done with each entry.
    std::vector<JournalReport> restore_leftover();

    /// Restores every journalled interface (used when the agent stops). Throws nm::Error (Failed).
    std::vector<ApplyReport> restore_all();

    void serve_control(ControlChannel channel, Json first, std::stop_token stop) override;

private:
    struct Session;
    bool handshake(Session& session, const Json& first);
    bool verify(Session& session, const ReceivedMessage& received);
    Json dispatch(Session& session, const AgentRequest& request);
    Json apply(Session& session, const AgentRequest& request);
    void rollback(Session& session, const std::string& reason);
    void end_session(Session& session);
    void send_signed(Session& session, std::string_view type, Json body);
    void refuse(Session& session, WireError kind, const std::string& message, std::optional<uint64_t> seq);
    void check_allowed(const std::string& ifname) const;
    /// `unavailable_ok`: an unavailable kind passes (validate and unsupported; only apply refuses it).
    void check_kinds(const LinkSettings& settings, bool unavailable_ok = false) const;
    std::string unavailable_why(const LinkSettings& settings) const;
    void log(const std::string& line);

    // The journal, in one place: remembered before every change, restored when a controller goes away,
    // when the agent stops, and (a previous agent's) at start. Called with device_mutex_ held.
    void journal_before_change(const LinkState& before);
    std::vector<ApplyReport> restore_journal();

    DeviceControl& device_;
    SettingsJournal& journal_;
    Clock& clock_;
    PeerAgentOptions options_;
    std::mutex device_mutex_;  // the device, the journal, controller_ and next_change_
    std::mutex log_mutex_;
    bool controller_ = false;   // a session holds control
    uint64_t next_change_ = 0;  // change ids, unique for the agent's lifetime
};

}  // namespace nm
