#pragma once
// The client side of the peer agent's settings control: a DeviceControl whose interfaces are on the peer,
// reached through `nicmatrix serve`'s control port. The sweep uses it as the remote end.
#include <chrono>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "core/control_channel.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "matrix/peer_agent.hpp"
#include "matrix/runner.hpp"

namespace nm {

struct PeerClientOptions {
    std::string host;                        ///< the agent's address
    uint16_t port = kDefaultPort;
    std::string bind;                        ///< local address to connect from; "" = any
    std::optional<std::string> key;          ///< the pre-shared key; none = capabilities only
    std::chrono::milliseconds confirm_window{3000};   ///< an applied change not confirmed in this time is reverted by the agent
};

/// One authenticated control connection to a peer agent. Sends heartbeats from a thread of its own while
/// it lives; closing it (destruction) makes the agent restore what it changed. Thread-safe.
class PeerControlClient final : public DeviceControl, public ConfirmedEnd {
public:
    /// Connects, reads the agent's capabilities and, with a key, authenticates both ways. Throws nm::Error:
    /// Failed when the agent cannot be reached or does not answer; Refused for a wrong key ("the agent
    /// refused the key") or when the agent requires a key and none was given; Failed when the agent's
    /// own proof is wrong (it does not have the key).
    explicit PeerControlClient(PeerClientOptions options);
    ~PeerControlClient() override;
    PeerControlClient(const PeerControlClient&) = delete;
    PeerControlClient& operator=(const PeerControlClient&) = delete;

    /// What the agent said at connect: whether it changes settings, on which interfaces, and why not.
    const PeerCapabilities& capabilities() const { return caps_; }
    bool authenticated() const { return !session_key_.empty(); }

    /// Throws nm::Error (Usage) unless the agent may change `ifname` for this client.
    void require_control(const std::string& ifname) const;

    LinkState read(std::string_view ifname) override;
    void validate(std::string_view ifname, const LinkSettings& wanted) override;
    /// Applies on the peer; the agent reverts it unless confirm() follows within the confirm window.
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override;

    bool ping(std::chrono::milliseconds timeout) override;
    void confirm() override;
    bool await_rollback(std::chrono::milliseconds timeout) override;
    std::vector<ApplyReport> restore() override;

    /// Sends `body` as a signed request (type "request") and returns the reply; exposed for tests of the
    /// agent's refusals. Throws nm::Error with the agent's kind (usage -> Usage, refused/busy/auth/replay
    /// -> Refused, else Failed) and message.
    Json request(Json body, std::chrono::milliseconds timeout);

private:
    std::string where() const;
    void heartbeats(std::stop_token stop);

    PeerClientOptions options_;
    std::mutex mutex_;
    std::optional<ControlChannel> ch_;
    std::string session_key_;
    uint64_t seq_ = 0;
    PeerCapabilities caps_;
    std::chrono::milliseconds heartbeat_timeout_{10000};
    std::optional<Json> rolled_back_;   // a "rolled_back" notice that arrived while waiting for a reply
    std::jthread heartbeat_;
};

}  // namespace nm
