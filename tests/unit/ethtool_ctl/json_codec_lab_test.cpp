#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab_codec.hpp"

TEST_CASE("LabInfo round-trips through JSON", "[unit]") {
    nm::LabInfo lab;
    lab.name = "x";
    lab.topology = nm::LabTopology::Bridge;
    lab.namespaces = {"x-a", "x-dut", "x-b"};
    lab.interfaces = {{"client", "x-a", "nm-a", "198.18.0.1/24", "2001:2::1/64"}, {"dut-bridge", "x-dut", "br0", "", ""}};
    const nm::Json j = lab;
    CHECK(j.at("topology") == "bridge");
    CHECK(j.at("interfaces").at(0).at("ipv6") == "2001:2::1/64");
    const auto back = j.get<nm::LabInfo>();
    CHECK(back.name == lab.name);
    CHECK(back.topology == lab.topology);
    CHECK(back.namespaces == lab.namespaces);
    REQUIRE(back.interfaces.size() == 2);
    CHECK(back.interfaces[1].ifname == "br0");
    CHECK(back.by_role("client").netns == "x-a");
    CHECK_THROWS_AS(back.by_role("server"), nm::Error);
}

TEST_CASE("An unknown topology is a usage error naming the field", "[unit]") {
    CHECK_THROWS_WITH(nm::Json("ring").get<nm::LabTopology>(), Catch::Contains("topology") && Catch::Contains("ring"));
}

TEST_CASE("strip_prefix drops the prefix length", "[unit]") {
    CHECK(nm::strip_prefix("198.18.0.1/24") == "198.18.0.1");
    CHECK(nm::strip_prefix("2001:2::2/64") == "2001:2::2");
    CHECK(nm::strip_prefix("10.0.0.1") == "10.0.0.1");
}
