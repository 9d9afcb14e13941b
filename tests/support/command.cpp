#include "tests/support/command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>

namespace nm::test {

CommandResult run_command(const std::string& command, std::chrono::seconds limit) {
    const std::string line = "timeout -k 2 " + std::to_string(limit.count()) + " sh -c '" + [&] {
        std::string quoted;
        for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return quoted;
    }() + "' 2>&1";
    FILE* pipe = ::popen(line.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("popen failed for: " + command);
    CommandResult result;
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
    const int status = ::pclose(pipe);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

CommandResult run_in_netns(const std::string& netns, const std::string& command, std::chrono::seconds limit) {
    return run_command("ip netns exec " + netns + " " + command, limit);
}

std::string nicmatrix_binary() { return NM_BINARY; }

}  // namespace nm::test
