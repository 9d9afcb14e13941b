#pragma once
// Authentication of the peer agent's settings control: a pre-shared key, an HMAC-SHA256 challenge-
// response in both directions, and an HMAC with a sequence number on every later message (the primitives
// are in core/message_auth.hpp; this file holds the key).
//
//   client                                   agent
//   control_hello {client_nonce}      ->
//                                     <-     challenge {nonce, auth_required, control, interfaces, why,
//                                                       heartbeat_timeout_ms}
//   auth {mac = proof(key, nonce, client_nonce, "client")}  ->
//                                     <-     welcome {mac = proof(..., "agent")}   | error {kind "auth"}
//   request {seq, op, ..., mac}       ->     reply {seq, ...} | error {seq, kind, message}
//   heartbeat {seq, mac}              ->     (no reply)
//                                     <-     rolled_back {ifname, report}   (an unconfirmed change reverted)
//
// Later MACs use a session key derived from both nonces, so a message recorded on one connection is
// worthless on another, and the sequence number (strictly one more than the last) makes a replay on the
// same connection fail.
#include <string>
#include <string_view>

#include "core/message_auth.hpp"

namespace nm {

/// The shortest key accepted, in bytes (`head -c 32 /dev/urandom > key` gives 32).
inline constexpr size_t kMinKeyBytes = 16;

/// `flag` when not empty, else $NICMATRIX_KEY_FILE, else "".
std::string key_file_from(const std::string& flag);

/// The key in `path` (raw bytes, a trailing newline kept as is). Throws nm::Error (Usage) naming the file
/// when it cannot be read or is shorter than kMinKeyBytes.
std::string load_key(const std::string& path);

}  // namespace nm
