#include <catch2/catch.hpp>

#include <filesystem>

#include "core/host/cpu_layout.hpp"
#include "core/host/host_codec.hpp"
#include "tests/support/matrix_world.hpp"

using nm::test::put_file;

TEST_CASE("read_cpu_layout reads SMT, NUMA nodes, each CPU's core, package, node and cpufreq, what is absent is none", "[unit]") {
    nm::test::TempDir dir;
    const std::filesystem::path root = dir.path;
    put_file(root / "cpu/online", "0-2");
    put_file(root / "cpu/smt/active", "1");
    put_file(root / "node/online", "0-1");
    put_file(root / "node/node0/cpulist", "0-1");
    put_file(root / "node/node1/cpulist", "2");
    for (int cpu = 0; cpu < 3; ++cpu) {
        const auto d = root / ("cpu/cpu" + std::to_string(cpu));
        put_file(d / "topology/core_id", std::to_string(cpu / 2));
        put_file(d / "topology/physical_package_id", std::to_string(cpu / 2));
        std::filesystem::create_directories(d / ("node" + std::to_string(cpu / 2)));
    }
    put_file(root / "cpu/cpu0/cpufreq/scaling_governor", "performance");
    put_file(root / "cpu/cpu0/cpufreq/scaling_cur_freq", "3500000");
    const auto l = nm::read_cpu_layout(root.string());
    REQUIRE(l.smt_active == true);
    CHECK(l.numa_nodes == std::map<int, std::string>{{0, "0-1"}, {1, "2"}});
    REQUIRE(l.cpus.size() == 3);
    CHECK(l.cpus[0].governor == "performance");
    CHECK(l.cpus[0].freq_khz == 3500000u);
    CHECK_FALSE(l.cpus[1].governor.has_value());  // no cpufreq: none, not an error
    CHECK_FALSE(l.cpus[1].freq_khz.has_value());
    CHECK(l.cpus[2].core == 1);
    CHECK(l.cpus[2].package == 1);
    CHECK(l.cpus[2].node == 1);
    // Through the codec and back, nulls included.
    const nm::Json j = l;
    CHECK(j.at("cpus")[1].at("governor").is_null());
    const auto back = j.get<nm::CpuLayout>();
    CHECK(back.cpus[0].governor == l.cpus[0].governor);
    CHECK(back.cpus[2].node == 1);
    CHECK(back.numa_nodes == l.numa_nodes);
    CHECK(back.smt_active == true);

    // An empty tree: nothing known, nothing thrown.
    nm::test::TempDir empty;
    const auto none = nm::read_cpu_layout(empty.path.string());
    CHECK(none.cpus.empty());
    CHECK_FALSE(none.smt_active.has_value());
    CHECK(none.numa_nodes.empty());
}
