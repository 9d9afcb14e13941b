#pragma once
// The peer agent's pre-shared key: the file it is kept in, the rules that file must follow, and the
// bytes in memory, wiped when no longer needed. The key never crosses the network; both ends prove they
// hold it (agent/agent_protocol.hpp) with the primitives in core/control/message_auth.hpp.
#include <cstddef>
#include <string>
#include <string_view>

namespace nm {

/// The shortest key accepted, in bytes (`head -c 32 /dev/urandom > key` gives 32).
inline constexpr size_t kMinKeyBytes = 32;
/// The largest key file read, in bytes.
inline constexpr size_t kMaxKeyFileBytes = 4096;

/// Key bytes that are wiped (OPENSSL_cleanse) when the object goes away. Copyable: every copy wipes its own.
class SecretKey {
public:
    explicit SecretKey(std::string bytes) : bytes_(std::move(bytes)) {}
    SecretKey(const SecretKey& other) = default;
    SecretKey(SecretKey&& other) noexcept;
    SecretKey& operator=(const SecretKey& other);
    SecretKey& operator=(SecretKey&& other) noexcept;
    ~SecretKey();

    std::string_view bytes() const { return bytes_; }
    size_t size() const { return bytes_.size(); }

private:
    std::string bytes_;
};

/// Overwrites `s`'s characters with zeros the compiler cannot drop (OPENSSL_cleanse), then empties it.
void wipe(std::string& s);

/// `flag` when not empty, else $NICMATRIX_KEY_FILE, else "".
std::string key_file_from(const std::string& flag);

/// The key in `path` (raw bytes, a trailing newline kept as is). The file must be a regular file owned
/// by root or by this user, not readable or writable by group or others, with kMinKeyBytes to
/// kMaxKeyFileBytes bytes. Throws nm::Error (Usage) naming the file and what is wrong, e.g.
/// "key file /etc/k: mode 0644 lets group and others read it; chmod 600 /etc/k".
SecretKey load_key(const std::string& path);

}  // namespace nm
