#pragma once
// Authentication of the peer agent's settings control: a pre-shared key, an HMAC-SHA256 challenge-
// response in both directions, and an HMAC with a sequence number on every later message (OpenSSL's
// libcrypto; nothing home-made).
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

#include "core/base/json_codec.hpp"

namespace nm {

/// The shortest key accepted, in bytes (`head -c 32 /dev/urandom > key` gives 32).
inline constexpr size_t kMinKeyBytes = 16;

/// `flag` when not empty, else $NICMATRIX_KEY_FILE, else "".
std::string key_file_from(const std::string& flag);

/// The key in `path` (raw bytes, a trailing newline kept as is). Throws nm::Error (Usage) naming the file
/// when it cannot be read or is shorter than kMinKeyBytes.
std::string load_key(const std::string& path);

/// `bytes` random bytes from RAND_bytes, as lowercase hex. Throws nm::Error (Failed) when the generator fails.
std::string random_hex(size_t bytes);

/// HMAC-SHA256 of `data` under `key`, lowercase hex (64 characters).
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// Constant-time comparison of two MACs (CRYPTO_memcmp); false when the lengths differ.
bool macs_equal(std::string_view a, std::string_view b);

/// The handshake proof of `role` ("client" or "agent") over both nonces.
std::string handshake_proof(std::string_view key, std::string_view nonce, std::string_view client_nonce, std::string_view role);

/// The key that signs a session's messages, derived from the pre-shared key and both nonces.
std::string session_key(std::string_view key, std::string_view nonce, std::string_view client_nonce);

/// Adds "mac": the HMAC of the message without "mac" and "v" (nlohmann's dump sorts keys, so both ends
/// serialize alike). `message` must already carry its "type" and "seq".
void sign_message(Json& message, std::string_view key);

/// True when `message` carries a "mac" that matches its content under `key`.
bool verify_message(const Json& message, std::string_view key);

}  // namespace nm
