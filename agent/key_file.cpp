#include "agent/key_file.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"

namespace nm {
namespace {

std::string octal_mode(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

// "lets group and others read it", "lets others write it": what the mode's group and other bits allow.
std::string what_mode_allows(mode_t mode) {
    const bool group = (mode & 070) != 0;
    const bool others = (mode & 007) != 0;
    const std::string who = group && others ? "group and others" : group ? "group" : "others";
    std::string what;
    if ((mode & 044) != 0) what = "read";
    if ((mode & 022) != 0) what += what.empty() ? "write" : " and write";
    if (what.empty()) what = "use";
    return "lets " + who + " " + what + " it";
}

}  // namespace

SecretKey::SecretKey(SecretKey&& other) noexcept : bytes_(std::move(other.bytes_)) { wipe(other.bytes_); }

SecretKey& SecretKey::operator=(const SecretKey& other) {
    if (this != &other) {
        wipe(bytes_);
        bytes_ = other.bytes_;
    }
    return *this;
}

SecretKey& SecretKey::operator=(SecretKey&& other) noexcept {
    if (this != &other) {
        wipe(bytes_);
        bytes_ = std::move(other.bytes_);
        wipe(other.bytes_);
    }
    return *this;
}

SecretKey::~SecretKey() { wipe(bytes_); }

void wipe(std::string& s) {
    if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
    s.clear();
}

std::string key_file_from(const std::string& flag) {
    if (!flag.empty()) return flag;
    const char* env = std::getenv("NICMATRIX_KEY_FILE");
    return env != nullptr ? std::string(env) : std::string();
}

SecretKey load_key(const std::string& path) {
    // O_NONBLOCK: a FIFO must not hang the open; the fstat below refuses it.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd) throw usage_error("key file " + path + ": cannot be read (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw usage_error("key file " + path + ": cannot be read (" + std::strerror(errno) + ")");
    if (!S_ISREG(st.st_mode)) throw usage_error("key file " + path + ": not a regular file");
    if ((st.st_mode & 077) != 0) {
        throw usage_error("key file " + path + ": mode " + octal_mode(st.st_mode) + " " + what_mode_allows(st.st_mode) + "; chmod 600 " + path);
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        throw usage_error("key file " + path + ": owned by uid " + std::to_string(st.st_uid) + ", neither root nor this user (uid " +
                          std::to_string(::geteuid()) + "); chown it");
    }
    std::string bytes(kMaxKeyFileBytes + 1, '\0');
    size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            wipe(bytes);
            throw usage_error("key file " + path + ": cannot be read (" + std::strerror(err) + ")");
        }
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    if (got > kMaxKeyFileBytes) {
        wipe(bytes);
        throw usage_error("key file " + path + ": longer than " + std::to_string(kMaxKeyFileBytes) + " bytes; a key is " +
                          std::to_string(kMinKeyBytes) + " random bytes (head -c 32 /dev/urandom > " + path + ")");
    }
    if (got < kMinKeyBytes) {
        wipe(bytes);
        throw usage_error("key file " + path + ": " + std::to_string(got) + " bytes; at least " + std::to_string(kMinKeyBytes) +
                          " (make one with: head -c 32 /dev/urandom > " + path + ")");
    }
    SecretKey key(std::string(bytes.data(), got));
    wipe(bytes);
    return key;
}

}  // namespace nm
