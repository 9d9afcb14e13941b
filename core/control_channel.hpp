#pragma once
// The framing of the control protocol (core/control_protocol.hpp): newline-delimited JSON objects on one
// TCP connection, each {"v":1,"type":"...",...}, at most kMaxControlMessage bytes, every read and write
// bounded by a deadline.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/json_codec.hpp"
#include "core/base/unique_fd.hpp"
#include "core/control_protocol.hpp"
#include "core/net.hpp"

namespace nm {

/// Decodes one line: a JSON object with "v" == kControlVersion and a string "type". Throws nm::Error
/// (Failed) saying what is wrong (too long, not JSON, wrong version, no type).
Json decode_control_message(std::string_view line);

/// Encodes `body` (an object with "type") as one line, adding "v".
std::string encode_control_message(Json body);

/// The keys of an authenticated channel, one per direction (core/message_auth.hpp derives them).
struct ChannelKeys {
    std::string send;      ///< signs what this end sends
    std::string receive;   ///< verifies what it receives
    std::string send_direction;      ///< the direction label of what this end signs (e.g. "test client->server")
    std::string receive_direction;   ///< the label of what it verifies (the peer's send_direction)
};

/// One end of the control connection. Owns the socket (non-blocking). One thread may receive() while
/// another send()s (the peer agent's client reads on a thread of its own); two send()s must not overlap.
class ControlChannel {
public:
    explicit ControlChannel(UniqueFd fd);

    /// Sends a message of `type` with the fields of `body` by `deadline`. Throws nm::Error (Failed; Closed
    /// when the peer has closed the connection).
    void send(Msg type, Json body, Deadline deadline);

    /// The next message, or nullopt when `deadline` passes first. Throws nm::Error: Closed when the peer
    /// closed the connection, Failed on a socket error or a malformed message.
    std::optional<Json> receive(Deadline deadline);

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
    Json verified(Json message);

    UniqueFd fd_;
    std::string buffer_;
    std::optional<ChannelKeys> keys_;
    uint64_t sent_ = 0;
    uint64_t received_ = 0;
};

}  // namespace nm
