#pragma once
// The control protocol in one place: every message type, the data connection's header, the handshake
// timeouts and the one mapping between nm::Error's kinds and the error kinds on the wire. Tests
// (`nicmatrix run` against `nicmatrix serve`) and the peer agent's settings control share it.
//
// Messages are newline-delimited JSON objects, each {"v": kControlVersion, "type": "<name>", ...}, at most
// kMaxControlMessage bytes (core/control/control_channel.hpp frames them). A test:
//
//   client                              server
//   hello {spec[, client_nonce]} ->
//                                <-     ready {cookie, udp_port, spec}  | error {kind, message}
//   (TCP data connections, each opening with a DataHeader: "NMD1", cookie, stream id)
//   start {udp_port}             ->
//                                <-     started                         (both ends start their engines)
//   sent / stalled / abort       <->    sent / stalled / error          (an end's senders are done, ...)
//                                <-     result {parts, data}            (the server's EndReport as JSON text,
//                                <-     result_part {part, data} ...     in parts that each fit the cap)
//
// A server started with a key (serve --key-file) answers hello with challenge {nonce} instead of ready;
// the client proves it holds the key with auth {spec}, and from there on every message in both directions
// carries "seq" and a "mac" under a per-direction key derived from the key and both nonces
// (ControlChannel::sign_with, core/control/test_auth.hpp). A client holding a key refuses a server that answers
// hello with ready. UDP datagrams carry the test's cookie in their header (core/workers/udp_tracker.hpp).
//
// The peer agent's session opens with control_hello instead of hello. It shares challenge, auth and error
// with a test's authentication; its own message types (control_hello, welcome, request, reply, heartbeat,
// rolled_back) are declared, with the session, in the layer that implements it, which sends them by name
// (msg_name() of its own type) on the same channel.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/error.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace nm {

inline constexpr size_t kMaxControlMessage = size_t{64} * 1024;
/// Arrays and objects in a control message nest at most this deep (the deepest message sent is about 8).
inline constexpr size_t kMaxControlDepth = 32;
/// 2: a MAC covers the bytes of the line as sent (sign_text), no longer a re-serialized copy of it.
inline constexpr int kControlVersion = 2;

/// The message types of a test, and those a test's authentication shares with the peer agent's session.
enum class Msg {
    // a test
    Hello,
    Ready,
    Start,
    Started,
    Sent,
    Stalled,
    Abort,
    Result,
    ResultPart,
    Error,
    // a keyed test's authentication, and the peer agent's handshake
    Challenge,
    Auth,
};

/// The message's name on the wire ("hello", "result_part", ...).
std::string_view msg_name(Msg type);

/// The type a name stands for; nullopt for a name that is not a Msg (one of the agent's, or unknown).
std::optional<Msg> msg_from_name(std::string_view name);

/// The "type" field of a decoded message as it is on the wire; nullopt when it is missing or not a string.
std::optional<std::string_view> msg_type_name(const Json& message);

/// The type of a decoded message (its "type" field); nullopt when it is missing or not a Msg.
std::optional<Msg> msg_type(const Json& message);

/// True when `message` is of `type`.
bool is(const Json& message, Msg type);

/// The first bytes of a data connection: the magic "NMD1", the test's cookie and the stream id, both in
/// host byte order (client and server run the same build). A control connection starts with '{'.
struct DataHeader {
    static constexpr size_t kSize = 12;
    static constexpr std::array<char, 4> kMagic{'N', 'M', 'D', '1'};

    uint32_t cookie = 0;
    uint32_t id = 0;

    std::array<unsigned char, kSize> encode() const;
    /// nullopt when the bytes do not start with the magic.
    static std::optional<DataHeader> decode(std::span<const unsigned char, kSize> bytes);
};

/// How long each step of a handshake (connect, hello -> ready, data connections, start -> started, the
/// agent's challenge and welcome) may take.
inline constexpr std::chrono::seconds kHandshakeTimeout{5};
/// How long an error or a notice may take to send to a peer that may already be gone.
inline constexpr std::chrono::seconds kNoticeTimeout{1};
/// How long the final result may take to send.
inline constexpr std::chrono::seconds kResultTimeout{2};

/// A deadline `d` from now.
Deadline deadline_in(std::chrono::milliseconds d);

/// The error kinds an "error" message carries. Several wire kinds are one ErrorKind: the wire says why
/// a request was refused (busy, authentication, replay, a server limit), the ErrorKind only how to exit.
enum class WireError {
    Usage,     ///< the request is wrong (a bad spec, an unknown operation)
    Refused,   ///< the request is fine but not allowed (settings control off, an interface not allowed)
    Busy,      ///< another test or controller holds the server
    Auth,      ///< authentication failed or a MAC was wrong
    Replay,    ///< a message out of sequence
    Limit,     ///< over one of the server's limits (duration, memory, threads)
    Expired,   ///< a confirm named a change that was already rolled back (its window had passed)
    Protocol,  ///< a message that does not belong here
    Failed,    ///< it broke while doing it
};

std::string_view wire_error_name(WireError kind);
/// Unknown names are Failed (a newer peer's kind still ends the request).
WireError wire_error_from_name(std::string_view name);
/// How an error of this wire kind ends the local request.
ErrorKind error_kind(WireError kind);
/// The wire kind an nm::Error of `kind` is sent as.
WireError wire_error(ErrorKind kind);

/// The wire kind of an "error" message (Failed when it has none).
WireError wire_error_of(const Json& message);

/// The nm::Error an "error" message stands for: its kind through error_kind(), the text `who` + ": " +
/// its message (e.g. "server 198.18.0.2:5301: server busy: ...").
Error error_from_message(const Json& message, const std::string& who);

}  // namespace nm
