#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/netns.hpp"

TEST_CASE("Lab names are checked before anything is made", "[unit]") {
    CHECK_NOTHROW(nm::validate_lab_name("nmlab"));
    CHECK_NOTHROW(nm::validate_lab_name("a_b-9"));
    CHECK_THROWS_WITH(nm::validate_lab_name(""), Catch::Contains("--name"));
    CHECK_THROWS_WITH(nm::validate_lab_name("a/b"), Catch::Contains("a/b"));
    CHECK_THROWS_AS(nm::validate_lab_name(std::string(33, 'x')), nm::Error);
    CHECK_THROWS_AS(nm::lab_up("bad name"), nm::Error);
}

TEST_CASE("Namespace names ip netns would refuse are rejected", "[unit]") {
    CHECK_THROWS_AS(nm::validate_netns_name(".."), nm::Error);
    CHECK_THROWS_AS(nm::validate_netns_name("a/b"), nm::Error);
    CHECK_NOTHROW(nm::validate_netns_name("lab-a"));
}
