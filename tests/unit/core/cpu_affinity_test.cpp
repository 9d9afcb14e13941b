#include <catch2/catch.hpp>

#include <sched.h>

#include "core/base/error.hpp"
#include "core/host/cpu_affinity.hpp"

using Catch::Contains;
using V = std::vector<uint32_t>;

TEST_CASE("parse_cpu_list reads the kernel's CPU-list format, format_cpu_list writes it back", "[unit]") {
    CHECK(nm::parse_cpu_list("0-3,8,10-11\n", "online") == V{0, 1, 2, 3, 8, 10, 11});
    CHECK(nm::parse_cpu_list("0", "online") == V{0});
    CHECK(nm::parse_cpu_list("", "online").empty());
    CHECK(nm::parse_cpu_list("3,1,1", "online") == V{1, 3});
    CHECK_THROWS_WITH(nm::parse_cpu_list("0-x", "online"), Contains("online") && Contains("\"x\" is not a CPU number"));
    CHECK_THROWS_WITH(nm::parse_cpu_list("4-2", "online"), Contains("goes down"));
    CHECK(nm::format_cpu_list({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
    CHECK(nm::format_cpu_list({5}) == "5");
    CHECK(nm::format_cpu_list({}).empty());
}

TEST_CASE("parse_affinity_option: -A CLIENT[,SERVER] as iperf3 takes it, '+' joins CPUs of one side", "[unit]") {
    CHECK(nm::parse_affinity_option("0,1") == std::pair<V, V>{{0}, {1}});
    CHECK(nm::parse_affinity_option("2") == std::pair<V, V>{{2}, {}});
    CHECK(nm::parse_affinity_option(",1") == std::pair<V, V>{{}, {1}});
    CHECK(nm::parse_affinity_option("0+2,1-3") == std::pair<V, V>{{0, 2}, {1, 2, 3}});
    for (const char* bad : {"", "a", "0,1,2", ",", "0,-1"}) {
        INFO(bad);
        try {
            nm::parse_affinity_option(bad);
            FAIL("accepted");
        } catch (const nm::Error& e) {
            CHECK(e.kind() == nm::ErrorKind::Usage);
            CHECK_THAT(e.what(), Contains("-A"));
        }
    }
}

TEST_CASE("check_cpus names the CPU that does not exist, and the online ones", "[unit]") {
    CHECK_NOTHROW(nm::check_cpus({0, 1}, {0, 1}, "client"));
    CHECK_NOTHROW(nm::check_cpus({}, {0}, "client"));
    CHECK_THROWS_WITH(nm::check_cpus({1, 7}, {0, 1, 2, 3}, "server"),
                      Contains("affinity: server CPU 7 does not exist on this host (online CPUs: 0-3)"));
}

TEST_CASE("online_cpus matches this process's affinity mask as the kernel sees it", "[unit]") {
    // The oracle: sched_getaffinity of a process nothing has restricted holds every online CPU.
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    const auto online = nm::online_cpus();
    REQUIRE_FALSE(online.empty());
    for (uint32_t c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) CHECK(std::find(online.begin(), online.end(), c) != online.end());
    }
}
