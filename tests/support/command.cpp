#include "tests/support/command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
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

std::string nicmatrix_binary() {
    // NM_TEST_BINARY runs the CLI tests against another build (say, main's, to see a new test fail there).
    const char* other = std::getenv("NM_TEST_BINARY");
    return other != nullptr && *other != '\0' ? std::string(other) : std::string(NM_BINARY);
}

}  // namespace nm::test
