#pragma once
// Message authentication for the control protocol: an HMAC-SHA256 challenge-response over two nonces and
// an HMAC on every later message under a session key derived from both (OpenSSL's libcrypto; nothing
// home-made). The peer agent's session uses it, and any exchange that must prove both ends hold the
// pre-shared key can.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/json_codec.hpp"

namespace nm {

/// Bytes of every nonce (64 hex digits on the wire).
inline constexpr size_t kNonceBytes = 32;

/// `bytes` random bytes from RAND_bytes, as lowercase hex. Throws nm::Error (Failed) when the generator fails.
std::string random_hex(size_t bytes);

/// True when `s` is exactly `length` lowercase hex digits.
bool is_hex(std::string_view s, size_t length);

/// HMAC-SHA256 of `data` under `key`, lowercase hex (64 characters).
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// Constant-time comparison of two MACs (CRYPTO_memcmp); false when the lengths differ.
bool macs_equal(std::string_view a, std::string_view b);

/// The handshake proof of `role` ("client" or "agent") over both nonces and `transcript`: what the proving
/// end vouches for besides the nonces (the agent's challenge fields, so a changed challenge fails the
/// proof). The same inputs give the same proof on both ends.
std::string handshake_proof(std::string_view key, std::string_view nonce, std::string_view client_nonce, std::string_view role,
                            std::string_view transcript = {});

/// The key that signs a session's messages, derived from the pre-shared key and both nonces.
std::string session_key(std::string_view key, std::string_view nonce, std::string_view client_nonce);

/// Adds "mac": the HMAC of `direction` (a label naming who sends to whom, e.g. "client->agent") and the
/// message without "mac" and "v" (nlohmann's dump sorts keys, so both ends serialize alike). The label
/// keeps a message signed for one direction from being reflected back as one of the other. `message`
/// must already carry its "type" and sequence number.
void sign_message(Json& message, std::string_view key, std::string_view direction);

/// True when `message` carries a "mac" that matches its content and `direction` under `key`.
bool verify_message(const Json& message, std::string_view key, std::string_view direction);

}  // namespace nm
