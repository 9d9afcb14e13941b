// The VM lab's pure parts: NIC names, QEMU's command line, the guest's scripts and the addresses.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "vmlab/guest_channel.hpp"
#include "vmlab/qemu_process.hpp"
#include "vmlab/vm_lab.hpp"
#include "vmlab/vm_sweep.hpp"

namespace {

bool has_pair(const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == flag && argv[i + 1] == value) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("VM lab NIC names are QEMU devices or drivers, unknown ones refused with the known list", "[unit]") {
    const auto nics = nm::parse_nic_list("e1000e,8139cp,RTL8139,virtio_net,virtio-net-pci,Tulip", "--nics");
    REQUIRE(nics.size() == 6);
    CHECK(nics[0].device == "e1000e");
    CHECK(nics[1].device == "rtl8139");
    CHECK(nics[1].driver == "8139cp");
    CHECK(nics[2].device == "rtl8139");
    CHECK(nics[3].device == "virtio-net-pci");
    CHECK(nics[4].driver == "virtio_net");
    CHECK(nics[5].device == "tulip");
    CHECK_THROWS_WITH(nm::parse_nic_list("e1000e,ne2k", "--nics"), Catch::Contains("--nics: unknown NIC \"ne2k\"") &&
                                                                       Catch::Contains("e1000e (driver e1000e)") &&
                                                                       Catch::Contains("rtl8139 (driver 8139cp)"));
    CHECK_THROWS_WITH(nm::parse_nic_list("e1000e", "--nics"), Catch::Contains("at least 2"));
    CHECK_THROWS_WITH(nm::parse_nic_list("e1000e,", "--nics"), Catch::Contains("unknown NIC \"\""));
    CHECK_THROWS_AS(nm::parse_nic_list("e1000e,ne2k", "--nics"), nm::Error);
}

TEST_CASE("sweep --lab vm takes exactly two NICs, the device under test first", "[unit]") {
    const auto nics = nm::parse_vm_lab_spec("vm:vmxnet3,e1000e");
    REQUIRE(nics.size() == 2);
    CHECK(nics[0].device == "vmxnet3");
    CHECK(nics[1].device == "e1000e");
    CHECK_THROWS_WITH(nm::parse_vm_lab_spec("vm:e1000e,8139cp,tulip"), Catch::Contains("two NICs wanted"));
    CHECK_THROWS_WITH(nm::parse_vm_lab_spec("qemu:e1000e,8139cp"), Catch::Contains("expected vm:DUT,PEER"));
    CHECK_THROWS_WITH(nm::parse_vm_lab_spec("vm:e1000e,bogus"), Catch::Contains("unknown NIC \"bogus\""));
}

TEST_CASE("QEMU's command line joins the NICs pairwise by hubs, with no network to the outside", "[unit]") {
    nm::QemuSpec spec;
    spec.kernel = "/img/vmlinuz";
    spec.initrd = "/img/initrd.gz";
    spec.share_dir = "/run/x/share";
    spec.console_log = "/run/x/console.log";
    spec.pid_file = "/run/x/qemu.pid";
    spec.nics = nm::parse_nic_list("e1000e,8139cp,vmxnet3,e1000,tulip", "--nics");
    const auto argv = nm::qemu_argv(spec);
    CHECK(argv.front() == "qemu-system-x86_64");
    CHECK(has_pair(argv, "-accel", "tcg"));
    CHECK(has_pair(argv, "-nic", "none"));
    CHECK(has_pair(argv, "-serial", "file:/run/x/console.log"));
    CHECK(has_pair(argv, "-virtfs", "local,path=/run/x/share,mount_tag=nmshare,security_model=none,id=nmshare"));
    CHECK(has_pair(argv, "-netdev", "hubport,id=nic0,hubid=0"));
    CHECK(has_pair(argv, "-netdev", "hubport,id=nic1,hubid=0"));
    CHECK(has_pair(argv, "-netdev", "hubport,id=nic2,hubid=1"));
    CHECK(has_pair(argv, "-netdev", "hubport,id=nic3,hubid=1"));
    CHECK(has_pair(argv, "-netdev", "hubport,id=nic4,hubid=1"));  // the odd last NIC joins the hub before it
    CHECK(has_pair(argv, "-device", "rtl8139,netdev=nic1,mac=52:54:00:4e:4d:01,addr=0x11"));
    CHECK(std::count(argv.begin(), argv.end(), "-device") == 5);
    spec.kvm = true;
    CHECK(has_pair(nm::qemu_argv(spec), "-accel", "kvm"));
}

TEST_CASE("VM lab addresses: one subnet per hub from the benchmarking ranges", "[unit]") {
    const auto itf = nm::vm_lab_interfaces(nm::parse_nic_list("e1000e,8139cp,vmxnet3", "--nics"));
    REQUIRE(itf.size() == 3);
    CHECK(itf[0].ipv4 == "198.18.0.1/24");
    CHECK(itf[1].ipv4 == "198.18.0.2/24");
    CHECK(itf[2].ipv4 == "198.18.0.3/24");
    CHECK(itf[2].ipv6 == "2001:2::3/64");
    CHECK(nm::vm_lab_interfaces(nm::parse_nic_list("e1000e,8139cp,vmxnet3,tulip", "--nics"))[3].ipv6 == "2001:2:0:1::2/64");
    CHECK(itf[1].netns == "nic1");
    CHECK(itf[1].driver == "8139cp");
    CHECK(itf[1].mac == "52:54:00:4e:4d:01");
    const auto four = nm::vm_lab_interfaces(nm::parse_nic_list("e1000e,8139cp,vmxnet3,tulip", "--nics"));
    CHECK(four[3].ipv4 == "198.18.1.2/24");
    const auto script = nm::guest_setup_script(itf, std::chrono::seconds(30));
    CHECK_THAT(script, Catch::Contains("setup 52:54:00:4e:4d:02 nic2 nic2 198.18.0.3/24 2001:2::3/64"));
    // The lab's description round-trips with its VM part (lab show --json, sweep --lab-from).
    nm::LabInfo info;
    info.name = "v";
    info.interfaces = itf;
    info.vm = nm::VmInfo{"qemu 7.2.19", "tcg", "qemu 7.2.19 tcg", "6.1.0-57-amd64", "/run/nicmatrix/vm/v", 42};
    const auto back = nm::Json(info).get<nm::LabInfo>();
    REQUIRE(back.vm);
    CHECK(back.vm->virtualization == "qemu 7.2.19 tcg");
    CHECK(back.interfaces[1].device_model == "rtl8139");
}

TEST_CASE("A guest command is quoted word by word and prefers the real ip and ethtool to busybox's", "[unit]") {
    const auto s = nm::guest_script({"ip", "-n", "nic0", "it's"});
    CHECK_THAT(s, Catch::StartsWith("set -- 'ip' '-n' 'nic0' 'it'\\''s'\n"));
    CHECK_THAT(s, Catch::Contains("/usr/sbin /usr/bin"));
    CHECK_THROWS_AS(nm::guest_script({}), nm::Error);
}
