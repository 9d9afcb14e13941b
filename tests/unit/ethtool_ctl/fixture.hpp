#pragma once
// Captured kernel replies (tests/fixtures/ethtool_ctl/*.hex), written by `nicmatrix capture-fixtures`
// on kernel 6.18 for a veth (nm-a), and the `ethtool -k` text (ethtool 6.1) of the same state.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ethtool_ctl/netlink_attrs.hpp"

namespace nm::test {

inline std::string fixture_text(const std::string& name) {
    std::ifstream in(std::string(NM_SOURCE_DIR) + "/tests/fixtures/ethtool_ctl/" + name);
    if (!in) throw std::runtime_error("missing fixture " + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::vector<uint8_t> fixture_bytes(const std::string& name) {
    const auto bytes = nl::from_hex(fixture_text(name + ".hex"));
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace nm::test
