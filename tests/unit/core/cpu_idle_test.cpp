#include <catch2/catch.hpp>

#include <filesystem>

#include "core/host/cpu_idle.hpp"
#include "core/host/host_codec.hpp"
#include "tests/support/matrix_world.hpp"

using nm::test::put_file;

TEST_CASE("read_cpu_idle reads the driver, governor, each state with the CPUs that disable it, and the driver's parameters", "[unit]") {
    nm::test::TempDir dir;
    const std::filesystem::path sys = dir.path / "system";
    const std::filesystem::path mod = dir.path / "module";
    put_file(sys / "cpu/online", "0-1");
    put_file(sys / "cpu/cpuidle/current_driver", "intel_idle");
    put_file(sys / "cpu/cpuidle/current_governor_ro", "menu");
    const char* names[] = {"POLL", "C1", "C6"};
    const char* latency[] = {"0", "2", "170"};
    for (int cpu = 0; cpu < 2; ++cpu) {
        for (int k = 0; k < 3; ++k) {
            const auto d = sys / ("cpu/cpu" + std::to_string(cpu)) / ("cpuidle/state" + std::to_string(k));
            put_file(d / "name", names[k]);
            put_file(d / "latency", latency[k]);
            // C6 off on both CPUs, C1 on CPU 1 only (cpupower idle-set -d).
            put_file(d / "disable", (k == 2 || (k == 1 && cpu == 1)) ? "1" : "0");
        }
    }
    put_file(mod / "intel_idle/parameters/max_cstate", "9");
    put_file(mod / "intel_idle/parameters/states_off", "0");
    std::filesystem::create_directories(mod / "intel_idle/parameters/not_a_file");
    put_file(mod / "haltpoll/parameters/guest_halt_poll_ns", "200000");  // another driver's: not this host's

    auto idle = nm::read_cpu_idle(sys.string(), mod.string());
    REQUIRE(idle.has_value());
    CHECK(idle->driver == "intel_idle");
    CHECK(idle->governor == "menu");  // current_governor_ro when there is no current_governor
    REQUIRE(idle->states.size() == 3);
    CHECK(idle->states[0].name == "POLL");
    CHECK(idle->states[0].latency_us == 0u);
    CHECK(idle->states[0].disabled_cpus.empty());
    CHECK(idle->states[1].disabled_cpus == std::vector<uint32_t>{1});
    CHECK(idle->states[2].name == "C6");
    CHECK(idle->states[2].latency_us == 170u);
    CHECK(idle->states[2].disabled_cpus == std::vector<uint32_t>{0, 1});
    CHECK(idle->driver_parameters == std::map<std::string, std::string>{{"max_cstate", "9"}, {"states_off", "0"}});

    // current_governor, where the governor may be switched, wins over _ro; a latency that is not a number is none.
    put_file(sys / "cpu/cpuidle/current_governor", "teo");
    put_file(sys / "cpu/cpu0/cpuidle/state1/latency", "");
    idle = nm::read_cpu_idle(sys.string(), mod.string());
    REQUIRE(idle.has_value());
    CHECK(idle->governor == "teo");
    CHECK_FALSE(idle->states[1].latency_us.has_value());

    // Through the codec and back, the unknown latency as null; and inside a host.
    const nm::Json j = *idle;
    CHECK(j.at("states")[1].at("latency_us").is_null());
    CHECK(j.at("states")[2].at("disabled_cpus") == nm::Json::array({0, 1}));
    const auto back = j.get<nm::CpuIdle>();
    CHECK(back.driver == idle->driver);
    CHECK(back.governor == idle->governor);
    REQUIRE(back.states.size() == 3);
    CHECK(back.states[2].disabled_cpus == idle->states[2].disabled_cpus);
    CHECK(back.states[2].latency_us == 170u);
    CHECK_FALSE(back.states[1].latency_us.has_value());
    CHECK(back.driver_parameters == idle->driver_parameters);
    nm::HostInfo h;
    CHECK_FALSE(nm::Json(h).contains("cpu_idle"));  // not read: absent, and absent reads as none
    CHECK_FALSE(nm::Json(h).get<nm::HostInfo>().cpu_idle.has_value());
    h.cpu_idle = idle;
    REQUIRE(nm::Json(h).get<nm::HostInfo>().cpu_idle.has_value());
    CHECK(nm::Json(h).get<nm::HostInfo>().cpu_idle->states.size() == 3);

    // No cpuidle (a kernel without it, a made tree without it): none, nothing thrown.
    nm::test::TempDir empty;
    CHECK_FALSE(nm::read_cpu_idle(empty.path.string(), empty.path.string()).has_value());
}
