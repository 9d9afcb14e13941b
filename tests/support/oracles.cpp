#include "tests/support/oracles.hpp"

#include <sstream>
#include <stdexcept>

#include "tests/support/command.hpp"

namespace nm::test {

std::map<std::string, bool> ethtool_features(const std::string& netns, const std::string& ifname) {
    const auto r = run_in_netns(netns, "ethtool -k " + ifname);
    if (r.exit_status != 0) throw std::runtime_error("ethtool -k " + ifname + " in " + netns + ": " + r.output);
    std::map<std::string, bool> features;
    std::istringstream in(r.output);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || line.rfind("Features for", 0) == 0) continue;
        const size_t start = line.find_first_not_of('\t');
        features[line.substr(start, colon - start)] = line.compare(colon + 2, 2, "on") == 0;
    }
    return features;
}

std::string link_mtu(const std::string& netns, const std::string& ifname) {
    return run_in_netns(netns, "cat /sys/class/net/" + ifname + "/mtu").output;
}

}  // namespace nm::test
