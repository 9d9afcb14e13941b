#include "matrix/peer_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
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

Json unsigned_part(const Json& message) {
    Json body = message;
    body.erase("mac");
    body.erase("v");
    return body;
}

}  // namespace

std::string key_file_from(const std::string& flag) {
    if (!flag.empty()) return flag;
    const char* env = std::getenv("NICMATRIX_KEY_FILE");
    return env != nullptr ? std::string(env) : std::string();
}

std::string load_key(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw usage_error("key file " + path + ": cannot be read");
    std::ostringstream buf;
    buf << in.rdbuf();
    const std::string key = buf.str();
    if (key.size() < kMinKeyBytes) {
        throw usage_error("key file " + path + ": " + std::to_string(key.size()) + " bytes; at least " + std::to_string(kMinKeyBytes) +
                          " (make one with: head -c 32 /dev/urandom > " + path + ")");
    }
    return key;
}

std::string random_hex(size_t bytes) {
    std::vector<unsigned char> buf(bytes);
    if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) throw Error(ErrorKind::Failed, "RAND_bytes failed");
    return to_hex(buf.data(), buf.size());
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

std::string handshake_proof(std::string_view key, std::string_view nonce, std::string_view client_nonce, std::string_view role) {
    std::string data;
    data.append(nonce).append(client_nonce).append("nicmatrix/control/v1 ").append(role);
    return hmac_sha256_hex(key, data);
}

std::string session_key(std::string_view key, std::string_view nonce, std::string_view client_nonce) {
    return handshake_proof(key, nonce, client_nonce, "session");
}

void sign_message(Json& message, std::string_view key) { message["mac"] = hmac_sha256_hex(key, unsigned_part(message).dump()); }

bool verify_message(const Json& message, std::string_view key) {
    if (!message.is_object() || !message.contains("mac") || !message.at("mac").is_string()) return false;
    return macs_equal(message.at("mac").get<std::string>(), hmac_sha256_hex(key, unsigned_part(message).dump()));
}

}  // namespace nm
