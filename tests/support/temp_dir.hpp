#pragma once
// A scratch directory for a test's files (traces, captures, results), removed at scope exit, a failed
// REQUIRE's included.
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/scoped_lab.hpp"

namespace nm::test {

struct TempDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / unique_name("nmsweep");
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
    /// Writes `text` to the file `name` here (a config, a key) and returns its path.
    std::string write(const std::string& name, const std::string& text) const {
        std::string out = file(name);
        std::ofstream(out) << text;
        return out;
    }
};

/// Writes `text` and a newline to `file`, making the folders on its way: one file of a fake /sys or /proc.
inline void put_file(const std::filesystem::path& file, const std::string& text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text << '\n';
}

}  // namespace nm::test
