#include "core/message_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <vector>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

std::string to_hex(const unsigned char* data, size_t n) {
    std::string out(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = kDigits[data[i] >> 4];
        out[2 * i + 1] = kDigits[data[i] & 0xf];
    }
    return out;
}

// What a MAC covers: the direction label, then the message without its "mac" and "v". A string that is
// not valid UTF-8 is replaced, not thrown on (a hostile peer's bytes then fail the MAC).
std::string signed_text(const Json& message, std::string_view direction) {
    Json body = message;
    body.erase("mac");
    body.erase("v");
    std::string text(direction);
    text += '\n';
    text += body.dump(-1, ' ', false, Json::error_handler_t::replace);
    return text;
}

}  // namespace

std::string random_hex(size_t bytes) {
    std::vector<unsigned char> buf(bytes);
    if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) throw Error(ErrorKind::Failed, "RAND_bytes failed");
    return to_hex(buf.data(), buf.size());
}

bool is_hex(std::string_view s, size_t length) {
    return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
             &len) == nullptr) {
        throw Error(ErrorKind::Failed, "HMAC-SHA256 failed");
    }
    return to_hex(mac, len);
}

bool macs_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string handshake_proof(std::string_view key, std::string_view nonce, std::string_view client_nonce, std::string_view role,
                            std::string_view transcript) {
    std::string data;
    data.append(nonce).append(client_nonce).append("nicmatrix/control/v1 ").append(role);
    if (!transcript.empty()) data.append("\n").append(transcript);
    return hmac_sha256_hex(key, data);
}

std::string session_key(std::string_view key, std::string_view nonce, std::string_view client_nonce) {
    return handshake_proof(key, nonce, client_nonce, "session");
}

void sign_message(Json& message, std::string_view key, std::string_view direction) {
    message["mac"] = hmac_sha256_hex(key, signed_text(message, direction));
}

bool verify_message(const Json& message, std::string_view key, std::string_view direction) {
    if (!message.is_object() || !message.contains("mac") || !message.at("mac").is_string()) return false;
    return macs_equal(message.at("mac").get<std::string>(), hmac_sha256_hex(key, signed_text(message, direction)));
}

}  // namespace nm
