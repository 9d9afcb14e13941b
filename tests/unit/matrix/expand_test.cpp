#include <catch2/catch.hpp>

#include "matrix/config.hpp"

namespace {

nm::SweepConfig config_with(const std::string& exclude) {
    return nm::parse_sweep_config_text(R"({
      "offloads": [{"name": "on", "features": {"tso": "on"}}, {"name": "off", "features": {"tso": "off"}}],
      "mtu": [1500, 9000],
      "traffic": [{"streams": 1}, {"streams": 10}, {"protocol": "udp", "write_size": 18}],
      "exclude": )" + exclude + "}",
                                       "x");
}

std::vector<std::string> keys(const std::vector<nm::CellSpec>& cells) {
    std::vector<std::string> out;
    out.reserve(cells.size());
    for (const auto& c : cells) out.push_back(c.key);
    return out;
}

}  // namespace

TEST_CASE("Cells are the cartesian product in config order, profile outermost, with stable keys", "[unit]") {
    const auto cells = nm::expand_cells(config_with("[]"));
    CHECK(keys(cells) == std::vector<std::string>{"on/mtu1500/tcp-p1", "on/mtu1500/tcp-p10", "on/mtu1500/udp-l18", "on/mtu9000/tcp-p1",
                                                  "on/mtu9000/tcp-p10", "on/mtu9000/udp-l18", "off/mtu1500/tcp-p1", "off/mtu1500/tcp-p10",
                                                  "off/mtu1500/udp-l18", "off/mtu9000/tcp-p1", "off/mtu9000/tcp-p10", "off/mtu9000/udp-l18"});
    CHECK(cells[6].features_requested == std::map<std::string, bool>{{"tso", false}});
    CHECK(cells[6].profile_index == 1);
    CHECK(cells[5].traffic_index == 2);
    CHECK(keys(nm::expand_cells(config_with("[]"))) == keys(cells));
}

TEST_CASE("Exclude rules drop the cells matching every field they give", "[unit]") {
    // UDP only at 1500; the off profile never with 10 streams.
    const auto cells = nm::expand_cells(config_with(R"([{"mtu": 9000, "traffic": {"protocol": "udp"}},
                                                        {"offloads": "off", "traffic": {"streams": 10}}])"));
    CHECK(keys(cells) == std::vector<std::string>{"on/mtu1500/tcp-p1", "on/mtu1500/tcp-p10", "on/mtu1500/udp-l18", "on/mtu9000/tcp-p1",
                                                  "on/mtu9000/tcp-p10", "off/mtu1500/tcp-p1", "off/mtu1500/udp-l18", "off/mtu9000/tcp-p1"});
    // A rule with a length alias matches write_size.
    CHECK(nm::expand_cells(config_with(R"([{"traffic": {"length": 18}}])")).size() == 8);
    // A rule matching nothing keeps everything.
    CHECK(nm::expand_cells(config_with(R"([{"traffic": {"streams": 7}}])")).size() == 12);
}
