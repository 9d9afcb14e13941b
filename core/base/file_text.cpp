#include "core/base/file_text.hpp"

#include <fstream>
#include <sstream>

namespace nm {

std::string read_file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

}  // namespace nm
