#pragma once
// Message authentication for the control protocol: an HMAC-SHA256 challenge-response over two nonces and
// an HMAC on every later message under a session key derived from both (OpenSSL's libcrypto; nothing
// home-made). The peer agent's session uses it, and any exchange that must prove both ends hold the
// pre-shared key can.
#include <cstddef>
#include <string>
#include <string_view>

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

/// `text` (one JSON object's text as it will be sent, without its newline) with a last member
/// `"mac":"<64 hex digits>"`: the HMAC under `key` of `direction` (a label naming who sends to whom, e.g.
/// "client->agent"), a newline and `text` exactly. What is signed is the bytes sent, so the receiver
/// checks the bytes it received (verify_text) without parsing or re-serializing them; the label keeps a
/// message signed for one direction from being reflected back as one of the other. `text` must already
/// carry the message's "type" and sequence number. Throws nm::Error (Failed) when `text` is not an
/// object with members.
std::string sign_text(std::string_view text, std::string_view key, std::string_view direction);

/// True when `line` (as received, without its newline) ends in the member `,"mac":"<64 hex digits>"}`
/// and that MAC is sign_text()'s over the rest of the line (the member taken out) and `direction` under
/// `key`. Reads only the bytes: nothing is parsed, copied into JSON or dumped.
bool verify_text(std::string_view line, std::string_view key, std::string_view direction);

}  // namespace nm
