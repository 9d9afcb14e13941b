#pragma once
// A sweep's progress read as it comes, for tests that look at the interface while each cell is measured.
#include <chrono>
#include <functional>
#include <string>

namespace nm::test {

struct FollowedSweep {
    std::string output;   ///< everything it printed (stdout and stderr)
    int wait_status = 0;  ///< as pclose(3) gives it (WIFEXITED, WEXITSTATUS)
};

/// Runs `command` under /bin/sh, bounded by coreutils `timeout` at `limit`, its stderr with its stdout, and
/// calls `on_cell_start` with the key of each cell (or visit of a cell) the moment its progress line says
/// it is being measured ("[1/4] KEY  local: ... ... "); returns once the command has ended.
FollowedSweep follow_sweep(const std::string& command, std::chrono::seconds limit, const std::function<void(const std::string& key)>& on_cell_start);

/// The MTU a cell key names ("all-on/mtu1500/tcp-p1" -> "1500").
std::string mtu_of_key(const std::string& key);

}  // namespace nm::test
