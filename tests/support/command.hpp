#pragma once
#include <chrono>
#include <string>

namespace nm::test {

struct CommandResult {
    int exit_status = -1;  ///< the command's exit status; 124 when `timeout` ended it
    std::string output;    ///< stdout and stderr together
};

/// Runs `command` under /bin/sh, bounded by coreutils `timeout`, and collects its output.
CommandResult run_command(const std::string& command, std::chrono::seconds limit = std::chrono::seconds(30));

/// The same inside network namespace `netns` (`ip netns exec`).
CommandResult run_in_netns(const std::string& netns, const std::string& command, std::chrono::seconds limit = std::chrono::seconds(30));

/// Path of the built nicmatrix executable ($NM_TEST_BINARY when set: another build to test).
std::string nicmatrix_binary();

}  // namespace nm::test
