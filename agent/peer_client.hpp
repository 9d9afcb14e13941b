#pragma once
// The client side of the peer agent's settings control: a DeviceControl whose interfaces are on the peer,
// reached through `nicmatrix serve`'s control port, and the ConfirmedEnd the sweep confirms changes on.
//
// Threads: the caller's thread sends requests and waits for their replies; a reader thread takes every
// message from the agent and hands replies to the waiting request by sequence number and rolled_back
// notices to the changes they name; a heartbeat thread keeps the session alive. Sends are serialized
// for the length of one write only, so a heartbeat never waits behind a request, a probe or a wait for
// a rollback.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/confirmed_end.hpp"
#include "agent/key_file.hpp"
#include "agent/peer_agent.hpp"
#include "core/device/device_codec.hpp"
#include "core/host/host_codec.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"
#include "ethtool_ctl/device_control.hpp"

namespace nm {

struct PeerClientOptions {
    std::string host;  ///< the agent's address
    uint16_t port = kDefaultPort;
    std::string bind;                                ///< local address to connect from; "" = any
    std::optional<SecretKey> key;                    ///< the pre-shared key; none = capabilities only
    std::chrono::milliseconds confirm_window{3000};  ///< an applied change not confirmed in this time is reverted by the agent
    std::chrono::milliseconds link_wait{10000};      ///< how long the agent waits for its link after a change (the sweep's link_wait_s)
};

/// One authenticated control connection to a peer agent (and a new one after reconnect()). Closing it
/// (destruction) makes the agent restore what it changed. The DeviceControl and ConfirmedEnd calls come
/// from one thread (the sweep's).
class PeerControlClient final : public DeviceControl, public ConfirmedEnd {
public:
    /// Connects, reads the agent's capabilities and, with a key, authenticates both ways. Throws nm::Error:
    /// Failed when the agent cannot be reached or does not answer; Refused when the agent refuses the key
    /// ("... refused the key"), when a client holding a key meets an agent that does not authenticate
    /// ("... does not authenticate"), or when the agent's proof is wrong (it does not hold the key, or the
    /// challenge was changed on the way).
    explicit PeerControlClient(PeerClientOptions options);
    ~PeerControlClient() override;
    PeerControlClient(const PeerControlClient&) = delete;
    PeerControlClient& operator=(const PeerControlClient&) = delete;

    /// What the agent said at connect: whether it changes settings, on which interfaces, and why not.
    const PeerCapabilities& capabilities() const { return caps_; }
    /// True when both ends proved they hold the key (always, when the client has one).
    bool authenticated() const;

    /// Throws nm::Error (Usage) unless the agent may change `ifname` for this client.
    void require_control(const std::string& ifname) const;

    LinkState read(std::string_view ifname) override;
    void validate(std::string_view ifname, const LinkSettings& wanted) override;
    /// The agent's answer to unsupported: the kinds it allows but cannot change where it runs (its
    /// sandbox: PeerCapabilities::unavailable) and what the peer's device does not have, "" when nothing
    /// stands in the way; the sweep makes such a cell infeasible before any change. Throws nm::Error as
    /// request() does (a kind the agent does not allow at all: Refused).
    std::string unsupported(std::string_view ifname, const LinkSettings& wanted) override;
    /// Applies on the peer; the agent reverts it unless confirm() follows within the confirm window.
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override;
    /// The agent's answer to describe: how the peer's kernel runs `ifname`; none when the agent does not
    /// say (an older agent, an error), never an exception.
    std::optional<InterfaceSystem> describe(std::string_view ifname) override;
    /// The peer's host as its agent reads it (kernel, CPU model and layout, sysctls, command line, CPU
    /// accounting; no interface). Throws nm::Error as request() does.
    HostInfo host_info(std::string_view ifname);

    bool ping(std::chrono::milliseconds timeout) override;
    Confirmation confirm() override;
    bool await_rollback(std::chrono::milliseconds timeout) override;
    std::vector<ApplyReport> restore() override;
    bool connected() const override;
    void reconnect(std::chrono::milliseconds within) override;

    /// Sends `body` as a signed request and returns the agent's (verified) reply; exposed for tests of
    /// the agent's refusals. Throws nm::Error with the agent's kind (usage -> Usage, refused, busy, auth,
    /// replay, limit, expired -> Refused, else Failed) and message; Closed when the connection is lost.
    Json request(Json body, std::chrono::milliseconds timeout);

    class Connection;

private:
    std::shared_ptr<Connection> connection() const;
    std::string where() const;

    PeerClientOptions options_;
    PeerCapabilities caps_;
    mutable std::mutex mutex_;  // conn_
    std::shared_ptr<Connection> conn_;
    std::vector<uint64_t> unconfirmed_;  // ids of the changes applied since the last confirm
};

}  // namespace nm
