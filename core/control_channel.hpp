#pragma once
// The control protocol between `nicmatrix run` and `nicmatrix serve`: newline-delimited JSON objects on
// one TCP connection, each {"v":1,"type":"...",...}, at most kMaxControlMessage bytes, every read and write
// bounded by a deadline.
//
//   client                              server
//   hello {spec}                 ->
//                                <-     ready {cookie, udp_port}        | error {kind, message} ("busy")
//   (TCP data connections, each starting with a 12-byte header: "NMD1", cookie, stream id)
//   start {udp_port}             ->
//                                <-     started                         (both ends start their engines)
//   sent / stalled / abort       <->    sent / stalled                  (an end's senders are done, ...)
//                                <-     result {report}                 (the server's EndReport)
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/json_codec.hpp"
#include "core/base/unique_fd.hpp"
#include "core/net.hpp"

namespace nm {

inline constexpr size_t kMaxControlMessage = 64 * 1024;
inline constexpr int kControlVersion = 1;
/// First bytes of a data connection; a control connection starts with '{'.
inline constexpr char kDataMagic[4] = {'N', 'M', 'D', '1'};

/// Decodes one line: a JSON object with "v" == kControlVersion and a string "type". Throws nm::Error
/// (Failed) saying what is wrong (too long, not JSON, wrong version, no type).
Json decode_control_message(std::string_view line);

/// Encodes `body` (an object with "type") as one line, adding "v".
std::string encode_control_message(Json body);

/// One end of the control connection. Owns the socket (non-blocking).
class ControlChannel {
public:
    explicit ControlChannel(UniqueFd fd);

    /// Sends a message of `type` with the fields of `body` by `deadline`. Throws nm::Error (Failed).
    void send(const std::string& type, Json body, Deadline deadline);

    /// The next message, or nullopt when `deadline` passes first. Throws nm::Error (Failed) when the
    /// peer closed the connection ("closed by peer"), on a socket error, or on a malformed message.
    std::optional<Json> receive(Deadline deadline);

    /// Like receive(), but a timeout is an error naming `waiting_for`.
    Json expect(Deadline deadline, const std::string& waiting_for);

    int fd() const { return fd_.get(); }

private:
    UniqueFd fd_;
    std::string buffer_;
};

}  // namespace nm
