#include "core/control/message_auth.hpp"

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

// A signed line ends with this member, the MAC in hex between the two parts.
constexpr std::string_view kMacHead = ",\"mac\":\"";
constexpr std::string_view kMacTail = "\"}";
constexpr size_t kMacHexDigits = 64;

// What a MAC covers: the direction label, a newline, and the message's text as sent without its "mac".
std::string mac_of(std::string_view key, std::string_view direction, std::string_view unsigned_text) {
    std::string data(direction);
    data += '\n';
    data += unsigned_text;
    return hmac_sha256_hex(key, data);
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
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len) ==
        nullptr) {
        throw Error(ErrorKind::Failed, "HMAC-SHA256 failed");
    }
    return to_hex(mac, len);
}

bool macs_equal(std::string_view a, std::string_view b) { return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

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

std::string sign_text(std::string_view text, std::string_view key, std::string_view direction) {
    if (text.size() < 3 || text.front() != '{' || text.back() != '}') throw Error(ErrorKind::Failed, "sign_text: not a JSON object with members");
    std::string line(text.substr(0, text.size() - 1));
    line += kMacHead;
    line += mac_of(key, direction, text);
    line += kMacTail;
    return line;
}

bool verify_text(std::string_view line, std::string_view key, std::string_view direction) {
    const size_t member = kMacHead.size() + kMacHexDigits + kMacTail.size();
    if (line.size() < member + 2 || line.front() != '{' || !line.ends_with(kMacTail)) return false;
    const size_t head = line.size() - member;
    if (line.substr(head, kMacHead.size()) != kMacHead) return false;
    const std::string_view mac = line.substr(head + kMacHead.size(), kMacHexDigits);
    if (!is_hex(mac, kMacHexDigits)) return false;
    std::string unsigned_text(line.substr(0, head));
    unsigned_text += '}';
    return macs_equal(mac, mac_of(key, direction, unsigned_text));
}

}  // namespace nm
