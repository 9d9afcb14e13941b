#pragma once
// The peer agent's session protocol in one place: its request operations and their fields, the
// direction labels of its MACs, the bounds it enforces, and the settings it lets a client change. The
// messages travel on the engine's control channel (core/control/control_protocol.hpp: framing, Msg, WireError);
// its own message types are AgentMsg.
//
//   client                                         agent
//   control_hello {client_nonce}            ->
//                                           <-     challenge {nonce, auth_required, control, interfaces, kinds,
//                                                             unavailable, why, heartbeat_timeout_ms, protocol, version}
//   auth {mac = proof(key, "client", challenge)}  ->
//                                           <-     welcome {mac = proof(key, "agent", challenge)} | error {kind "auth"}
//   ---- from here every message is signed under the session key, with its direction label ----
//   request {seq, op, ...fields of op}      ->
//                                           <-     reply {seq, aseq, ...}  |  error {seq, aseq, kind, message}
//   heartbeat {seq}                         ->     (no reply)
//                                           <-     rolled_back {aseq, changes, reports, reason}
//
// `seq` counts the client's messages (requests and heartbeats) from 1, each exactly one more than the
// last; `aseq` counts the agent's the same way. proof() is handshake_proof() over both nonces and the
// challenge's line as the agent sent it (its bytes without the newline, as the client received them),
// so a client holding the key accepts only a challenge the agent vouches for: nobody can turn
// `auth_required` off or change the interfaces on the way. Every later MAC covers its message's bytes
// as sent (sign_text, verify_text). The session key comes from session_key(); a message recorded on
// one connection is worthless on another.
//
// Commit confirmed: every `apply` is a change with an id (in its reply) and a window (`confirm_ms`). A
// `confirm {change}` keeps that change and the ones before it. When a window passes unconfirmed, the
// agent reverts every unconfirmed change, newest first, back to the last confirmed state, and says so in
// `rolled_back {changes: [ids]}`; a later confirm of one of those ids is refused with kind "expired".
// The agent restores everything it changed when the controlling client closes the connection, stops
// sending (heartbeat_timeout_ms since the last message it handled, but never inside a change's window),
// or the agent stops.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/control/control_protocol.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/device_types.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace nm {

/// Version of this protocol, in the challenge; a client refuses an agent that speaks another.
/// 3: the challenge names the kinds of setting (`kinds`); 4: and the allowed kinds the agent cannot change
/// there (`unavailable`: {kind: why}), and the op `unsupported`; 5: apply takes `link_wait_ms` and waits
/// for the link after the change (the report's `link`), and answers change 0 for a change it rolled back
/// itself because the link did not come back.
inline constexpr int kAgentProtocolVersion = 5;

/// The direction labels of the session's MACs (sign_text / verify_text).
inline constexpr std::string_view kClientToAgent = "client->agent";
inline constexpr std::string_view kAgentToClient = "agent->client";

/// The session's own message types. It shares challenge, auth and error with a test's authentication
/// (core's Msg); these it sends by name on the control channel (msg_name below).
enum class AgentMsg {
    ControlHello,
    Welcome,
    Request,
    Reply,
    Heartbeat,
    RolledBack,
};

/// The message's name on the wire ("control_hello", "rolled_back", ...).
std::string_view msg_name(AgentMsg type);
/// The agent message type of a decoded message; nullopt when its type is not one of AgentMsg.
std::optional<AgentMsg> agent_msg_type(const Json& message);
/// True when `message` is of `type`.
bool is(const Json& message, AgentMsg type);

/// What a request asks.
enum class AgentOp {
    Ping,         ///< {} -> {}: is the control path alive
    Read,         ///< {ifname} -> {state}
    Validate,     ///< {ifname, settings} -> {}: would the device take these (nothing changes)
    Apply,        ///< {ifname, settings, confirm_ms[, link_wait_ms]} -> {report, change (0: rolled back already, the link did not come back)}
    Confirm,      ///< {change} -> {change}
    Restore,      ///< {} -> {reports}: everything back to the originals the agent journalled
    Describe,     ///< {ifname} -> {host, system}: the agent's host (HostInfo) and how its kernel runs ifname (InterfaceSystem or null)
    Unsupported,  ///< {ifname, settings} -> {why}: why these cannot be had there ("" = nothing stands in the way); nothing changes
};

/// The op's name on the wire ("ping", "apply", ...).
std::string_view op_name(AgentOp op);
/// nullopt for a name this build does not know.
std::optional<AgentOp> op_from_name(std::string_view name);
/// True for the ops that need the agent's control (one client at a time): apply, confirm, restore.
/// Ping, read, validate, describe and unsupported are open to any authenticated client.
bool takes_control(AgentOp op);

/// The field names of requests, replies and notices.
namespace agent_field {
inline constexpr const char* kOp = "op";
inline constexpr const char* kIfname = "ifname";
inline constexpr const char* kSettings = "settings";
inline constexpr const char* kConfirmMs = "confirm_ms";
inline constexpr const char* kLinkWaitMs = "link_wait_ms";  ///< apply: how long to wait for the link after the change (0: not at all)
inline constexpr const char* kChange = "change";            ///< a change id (apply's reply, confirm)
inline constexpr const char* kChanges = "changes";          ///< change ids (rolled_back)
inline constexpr const char* kState = "state";              ///< a LinkState (read)
inline constexpr const char* kReport = "report";            ///< an ApplyReport (apply)
inline constexpr const char* kReports = "reports";          ///< ApplyReports (restore, rolled_back)
inline constexpr const char* kHost = "host";                ///< a HostInfo (describe)
inline constexpr const char* kSystem = "system";            ///< an InterfaceSystem or null (describe)
inline constexpr const char* kReason = "reason";            ///< why a rollback happened (rolled_back)
inline constexpr const char* kWhy = "why";                  ///< why settings cannot be had (unsupported)
inline constexpr const char* kSeq = "seq";                  ///< the client's message counter
inline constexpr const char* kAgentSeq = "aseq";            ///< the agent's message counter
inline constexpr const char* kMac = "mac";
}  // namespace agent_field

/// The bounds of a change's confirm window (confirm_ms).
inline constexpr std::chrono::milliseconds kMinConfirmWindow{100};
inline constexpr std::chrono::milliseconds kMaxConfirmWindow{60000};
/// The bounds of the wait for the link after a change (link_wait_ms), and the wait when none is asked.
inline constexpr std::chrono::milliseconds kDefaultLinkWait{10000};
inline constexpr std::chrono::milliseconds kMaxLinkWait{600000};
/// Unconfirmed changes one session may stack before a confirm; one more is refused (kind "limit").
inline constexpr size_t kMaxPendingChanges = 16;
/// Refused messages in a row (bad MAC, out of sequence) after which the agent ends the session.
inline constexpr unsigned kMaxRefusalsInARow = 16;

/// The feature names a client may change through the agent: the offloads a sweep sweeps. ethtool's group
/// names (short and long) of the checksum, scatter-gather, segmentation and receive-offload groups, and
/// kernel feature names matching these patterns (feature_pattern_match: one '*'). Anything else
/// (loopback, rx-fcs, rx-all, VLAN and filter features, ...) is refused by name.
inline constexpr std::array<std::string_view, 14> kAgentFeatureGroups{"rx",  "rx-checksumming",
                                                                      "tx",  "tx-checksumming",
                                                                      "sg",  "scatter-gather",
                                                                      "tso", "tcp-segmentation-offload",
                                                                      "gso", "generic-segmentation-offload",
                                                                      "gro", "generic-receive-offload",
                                                                      "lro", "large-receive-offload"};
inline constexpr std::array<std::string_view, 9> kAgentFeaturePatterns{"rx-checksum",           "tx-checksum-*", "tx-scatter-gather*",
                                                                       "tx-*segmentation",      "rx-gro",        "rx-gro-list",
                                                                       "rx-udp-gro-forwarding", "rx-gro-hw",     "rx-lro"};

/// True when a client may change the feature named `typed` through the agent.
bool agent_allows_feature(std::string_view typed);

/// The kinds of setting an agent can let a client change (`nicmatrix serve --allow-kinds`), THE table:
/// the MTU, the offloads (those of kAgentFeatureGroups/Patterns) and the tuning kinds by the names of the
/// sweep's axes (kTuningAxes). `by_default`: what an agent started without --allow-kinds lets a client
/// change; IRQ affinity and sysctls act beyond the interface (host-wide IRQs, the namespace's TCP stack)
/// and are off unless named.
struct AgentSettingKind {
    std::string_view name;
    bool by_default;
    std::string_view what;
};
inline constexpr std::array<AgentSettingKind, 11> kAgentSettingKinds{{
    {"mtu", true, "the MTU"},
    {"offloads", true, "the offload features above"},
    {"channels", true, "queue counts (ethtool -L)"},
    {"rings", true, "ring sizes (ethtool -G)"},
    {"coalesce", true, "interrupt coalescing (ethtool -C)"},
    {"rps", true, "receive packet steering (queues/rx-N/rps_cpus)"},
    {"xps", true, "transmit packet steering (queues/tx-N/xps_cpus)"},
    {"napi", true, "gro_flush_timeout and napi_defer_hard_irqs"},
    {"qdisc", true, "the root qdisc"},
    {"irq_affinity", false, "the interface's IRQs' smp_affinity (host-wide)"},
    {"sysctl", false, "the allow-listed network sysctls of the agent's namespace"},
}};

/// The kinds an agent allows when started without --allow-kinds (by_default), in table order.
std::vector<std::string> default_agent_kinds();

/// The kinds of `--allow-kinds` words (comma lists, repeatable; "default" stands for default_agent_kinds(),
/// "all" for every kind), in table order. Throws nm::Error (Usage) naming an unknown word and the kinds.
std::vector<std::string> parse_agent_kinds(const std::vector<std::string>& words);

/// The kinds a change touches, in table order ("mtu" when it sets the MTU, "offloads" for features, the
/// tuning kinds it names; "qdisc" also for a restore's qdisc_original).
std::vector<std::string> setting_kinds(const LinkSettings& settings);

/// A request the agent turns down, before or while acting: the kind goes back to the client, the text
/// to the client and the log.
struct AgentRefusal {
    WireError kind;
    std::string message;
};

/// A request, every field checked.
struct AgentRequest {
    AgentOp op = AgentOp::Ping;
    std::string ifname;                                     ///< read, validate, apply
    LinkSettings settings;                                  ///< validate, apply: not empty, allowed features only
    std::chrono::milliseconds confirm_window{};             ///< apply: within [kMinConfirmWindow, kMaxConfirmWindow]
    std::chrono::milliseconds link_wait{kDefaultLinkWait};  ///< apply: within [0, kMaxLinkWait]
    uint64_t change = 0;                                    ///< confirm: > 0
};

/// Decodes and checks a request message before anything is done with it: a known op, exactly the fields
/// that op takes (besides type, v, seq, mac), each of the right type and range; the settings an object
/// {mtu: unsigned or null, features: {name: bool}, tuning: {kind: ...}} naming only allowed features and
/// allow-listed sysctls (which kinds this agent allows is the agent's check, PeerAgent). Throws AgentRefusal
/// (Usage for a bad field, Refused for a feature that is not allowed, Protocol for an unknown op).
AgentRequest parse_agent_request(const Json& message);

/// `value` as a non-negative integer (JSON keeps small ones signed or unsigned alike); nullopt for
/// anything else (a negative number, a fraction, a string, ...).
std::optional<uint64_t> as_unsigned(const Json& value);

}  // namespace nm
