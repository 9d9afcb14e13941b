#include "core/host/sysfs_text.hpp"

#include <fstream>

#include "core/base/error.hpp"
#include "core/host/cpu_affinity.hpp"

namespace nm {

std::optional<std::string> read_sysfs_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

std::vector<uint32_t> read_sysfs_cpu_list(const std::filesystem::path& path) {
    const auto text = read_sysfs_line(path);
    if (!text) return {};
    try {
        return parse_cpu_list(*text, path.string());
    } catch (const Error&) {
        return {};
    }
}

}  // namespace nm
