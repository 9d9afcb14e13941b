#include <catch2/catch.hpp>

#include <filesystem>

#include "core/base/error.hpp"
#include "core/device/device_types.hpp"
#include "core/host/host_codec.hpp"
#include "ethtool_ctl/interface_system.hpp"
#include "tests/support/matrix_world.hpp"

using nm::test::put_file;

// A PCI NIC's layout, which the lab's veth cannot show: MSI IRQs with their affinity, a NUMA node,
// queues ordered by number (rx-10 after rx-2). The real-kernel test is in tests/integration/ethtool_ctl.
TEST_CASE("read_interface_sysfs: MSI IRQs with affinity, NUMA node, RPS/XPS per queue in queue order", "[unit]") {
    nm::test::TempDir dir;
    const std::filesystem::path sys = dir.path / "sys", irq = dir.path / "irq";
    const auto dev = sys / "class/net/eth9";
    for (const char* q : {"rx-0", "rx-2", "rx-10"}) put_file(dev / "queues" / q / "rps_cpus", "00000000,0000000f");
    put_file(dev / "queues/tx-0/xps_cpus", "1");
    std::filesystem::create_directories(dev / "queues/tx-1");  // no xps_cpus shown: none
    put_file(dev / "device/numa_node", "1");
    for (const char* n : {"41", "40", "140"}) put_file(dev / "device/msi_irqs" / n, "msi");
    put_file(irq / "40/smp_affinity_list", "0-3");
    put_file(irq / "41/smp_affinity_list", "2");
    const auto s = nm::read_interface_sysfs(sys, "eth9", irq);
    REQUIRE(s.rps.size() == 3);
    CHECK(s.rps[0].queue == "rx-0");
    CHECK(s.rps[1].queue == "rx-2");
    CHECK(s.rps[2].queue == "rx-10");
    CHECK(s.rps[2].mask == "00000000,0000000f");
    REQUIRE(s.xps.size() == 2);
    CHECK(s.xps[0].mask == "1");
    CHECK_FALSE(s.xps[1].mask.has_value());
    CHECK(s.numa_node == 1);
    REQUIRE(s.irqs.size() == 3);
    CHECK(s.irqs[0].irq == 40);
    CHECK(s.irqs[0].affinity == "0-3");
    CHECK(s.irqs[1].affinity == "2");
    CHECK(s.irqs[2].irq == 140);
    CHECK(s.irqs[2].affinity.empty());  // unreadable: empty, the IRQ still listed

    // numa_node -1 (no affinity) is none; a legacy IRQ comes from device/irq.
    put_file(dev / "device/numa_node", "-1");
    std::filesystem::remove_all(dev / "device/msi_irqs");
    put_file(dev / "device/irq", "17");
    const auto legacy = nm::read_interface_sysfs(sys, "eth9", irq);
    CHECK_FALSE(legacy.numa_node.has_value());
    REQUIRE(legacy.irqs.size() == 1);
    CHECK(legacy.irqs[0].irq == 17);

    // Through the codec and back.
    const nm::Json j = s;
    CHECK(j.at("xps_cpus")[1].at("mask").is_null());
    CHECK(j.at("numa_node") == 1);
    const auto back = j.get<nm::InterfaceSystem>();
    CHECK(back.irqs.size() == 3);
    CHECK(back.rps[2].queue == "rx-10");
    CHECK_FALSE(back.xps[1].mask.has_value());

    CHECK_THROWS_WITH(nm::read_interface_sysfs(sys, "eth8", irq), Catch::Contains("interface eth8"));
}
