#include "tests/support/sweep_progress.hpp"

#include <cstdio>
#include <stdexcept>

namespace nm::test {

FollowedSweep follow_sweep(const std::string& command, std::chrono::seconds limit, const std::function<void(const std::string& key)>& on_cell_start) {
    FILE* out = ::popen(("timeout " + std::to_string(limit.count()) + " " + command + " 2>&1").c_str(), "r");
    if (out == nullptr) throw std::runtime_error("popen failed: " + command);
    FollowedSweep sweep;
    std::string pending;  // the line so far
    int c = 0;
    while ((c = std::fgetc(out)) != EOF) {
        sweep.output += static_cast<char>(c);
        pending += static_cast<char>(c);
        if (c == '\n') pending.clear();
        if (pending.size() > 5 && pending.compare(pending.size() - 5, 5, " ... ") == 0 && pending[0] == '[') {
            const auto from = pending.find("] ") + 2;
            on_cell_start(pending.substr(from, pending.find("  ", from) - from));
        }
    }
    sweep.wait_status = ::pclose(out);
    return sweep;
}

std::string mtu_of_key(const std::string& key) {
    const auto from = key.find("/mtu") + 4;
    return key.substr(from, key.find('/', from) - from);
}

}  // namespace nm::test
