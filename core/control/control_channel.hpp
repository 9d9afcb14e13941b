#pragma once
// The framing of the control protocol (core/control/control_protocol.hpp): newline-delimited JSON objects on one
// TCP connection, each {"v":1,"type":"...",...}, at most kMaxControlMessage bytes, every read and write
// bounded by a deadline.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/json.hpp"
#include "core/base/unique_fd.hpp"
#include "core/control/control_protocol.hpp"
#include "core/host/net.hpp"

namespace nm {

/// True when no array or object in the JSON text `text` is nested deeper than `limit` (strings skipped). Pure.
bool nesting_within(std::string_view text, size_t limit);

/// Decodes one line: a JSON object with "v" == kControlVersion and a string "type", nested at most
/// kMaxControlDepth deep (checked on the text before it is parsed). Throws nm::Error (Failed) saying what
/// is wrong (too long, too deep, not JSON, wrong version, no type).
Json decode_control_message(std::string_view line);

/// Encodes `body` (an object with "type") as one line, adding "v".
std::string encode_control_message(Json body);

/// The same, signed: the line's text without its newline is sign_text() of the encoded body
/// (core/control/message_auth.hpp), so the MAC covers exactly the bytes sent.
std::string encode_signed_message(Json body, std::string_view key, std::string_view direction);

/// One message as it arrived: the line's bytes (without the newline), the ones a MAC covers
/// (verify_text()), and the message decoded from them.
struct ReceivedMessage {
    std::string text;
    Json message;
};

/// The keys of an authenticated channel, one per direction (core/control/message_auth.hpp derives them).
struct ChannelKeys {
    std::string send;               ///< signs what this end sends
    std::string receive;            ///< verifies what it receives
    std::string send_direction;     ///< the direction label of what this end signs (e.g. "test client->server")
    std::string receive_direction;  ///< the label of what it verifies (the peer's send_direction)
};

/// One end of the control connection. Owns the socket (non-blocking). One thread may receive() while
/// another send()s (the peer agent's client reads on a thread of its own); two send()s must not overlap.
class ControlChannel {
public:
    explicit ControlChannel(UniqueFd fd);

    /// Sends a message of `type` with the fields of `body` by `deadline`. Throws nm::Error (Failed; Closed
    /// when the peer has closed the connection).
    void send(Msg type, Json body, Deadline deadline) { send(msg_name(type), std::move(body), deadline); }
    /// The same for a message type named on the wire `type` (a layer above's own: the peer agent's).
    void send(std::string_view type, Json body, Deadline deadline);

    /// The next message, or nullopt when `deadline` passes first. Throws nm::Error: Closed when the peer
    /// closed the connection, Failed on a socket error or a malformed message.
    std::optional<Json> receive(Deadline deadline);

    /// The same, with the line's bytes as received: for a caller that checks their MAC itself.
    std::optional<ReceivedMessage> receive_text(Deadline deadline);

    /// Sends a message named `type` signed under `key` with `direction` (encode_signed_message), for a
    /// caller that numbers and signs its messages itself (the peer agent's session); `body` carries the
    /// numbers.
    void send_signed(std::string_view type, Json body, std::string_view key, std::string_view direction, Deadline deadline);

    /// Sends one encoded line (with its newline) as it is; `type` (its name on the wire) names it in errors.
    void send_line(std::string_view line, std::string_view type, Deadline deadline);

    /// Like receive(), but a timeout is an error naming `waiting_for`.
    Json expect(Deadline deadline, const std::string& waiting_for);

    int fd() const { return fd_.get(); }

    /// From now on every message sent carries "seq" (one more each time, after `sent`) and a "mac" under
    /// keys.send, and every message received must carry the next "seq" (after `received`) and a valid
    /// "mac" under keys.receive; anything else makes receive() throw nm::Error (Failed). An unsigned
    /// "error" message is reported with its text, marked as unauthenticated.
    void sign_with(ChannelKeys keys, uint64_t sent = 0, uint64_t received = 0);
    bool authenticated() const { return keys_.has_value(); }

private:
    Json verified(std::string_view text);

    UniqueFd fd_;
    std::string buffer_;
    std::optional<ChannelKeys> keys_;
    uint64_t sent_ = 0;
    uint64_t received_ = 0;
};

/// Sends an "error" message (core/control/control_protocol.hpp: WireError) {kind, message[, seq]}; a peer that is already gone is not an error.
void send_error(ControlChannel& channel, WireError kind, const std::string& message, std::optional<uint64_t> seq = {});
/// The same for an nm::Error: its kind through wire_error(), its text as the message.
void send_error(ControlChannel& channel, const Error& error, std::optional<uint64_t> seq = {});

}  // namespace nm
