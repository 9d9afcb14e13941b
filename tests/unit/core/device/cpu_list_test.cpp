#include "core/device/cpu_list.hpp"

#include <catch2/catch.hpp>

#include "core/base/error.hpp"

TEST_CASE("CPU lists: the kernel's forms, masks both ways, and CPUs that do not exist", "[unit]") {
    CHECK(nm::format_cpu_list(nm::parse_cpu_list("0-2,4,6-7", 8)) == "0-2,4,6-7");
    CHECK(nm::format_cpu_list(nm::parse_cpu_list("none", 8)) == "none");
    CHECK(nm::format_cpu_list(nm::parse_cpu_list("all", 3)) == "0-2");
    CHECK(nm::cpu_mask_hex({0, 1}) == "3");
    CHECK(nm::cpu_mask_hex({}) == "0");
    CHECK(nm::cpu_mask_hex({0, 33}) == "2,00000001");
    CHECK(nm::format_cpu_list(nm::parse_cpu_mask_hex("00000000,00000003\n")) == "0-1");
    CHECK(nm::format_cpu_list(nm::parse_cpu_mask_hex("2,00000001")) == "0,33");
    CHECK(nm::canonical_cpu_list("3,1-2") == "1-3");
    CHECK(nm::canonical_cpu_list("all") == "all");
    CHECK_THROWS_WITH(nm::parse_cpu_list("0,8", 2), "CPU 8 in \"0,8\" does not exist on this host");
    CHECK_THROWS_AS(nm::parse_cpu_list("1-x", 2), nm::Error);
    CHECK_THROWS_AS(nm::parse_cpu_list("3-1", 8), nm::Error);
    CHECK_THROWS_AS(nm::canonical_cpu_list("0,,1"), nm::Error);
}
