#include "matrix/peer_auth.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"

namespace nm {

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

}  // namespace nm
