#pragma once
// A scratch directory for a test's files (traces, captures, results), removed at scope exit, a failed
// REQUIRE's included.
#include <filesystem>
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
};

}  // namespace nm::test
