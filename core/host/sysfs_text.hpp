#pragma once
// Reading the one-line files of sysfs: a file that is missing or unreadable is none, never an error (what
// a host does not show stays unknown in a results file).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace nm {

/// The first line of `path`, trailing newline and spaces removed; none when it cannot be read.
std::optional<std::string> read_sysfs_line(const std::filesystem::path& path);

/// The first line of `path` as a number; none when it cannot be read or is not one.
template <typename T>
std::optional<T> read_sysfs_number(const std::filesystem::path& path) {
    const auto text = read_sysfs_line(path);
    if (!text || text->empty()) return std::nullopt;
    std::istringstream in(*text);
    T v{};
    if (!(in >> v)) return std::nullopt;
    return v;
}

/// The CPU list in `path` ("0-3,8"); empty when it cannot be read or parsed.
std::vector<uint32_t> read_sysfs_cpu_list(const std::filesystem::path& path);

}  // namespace nm
