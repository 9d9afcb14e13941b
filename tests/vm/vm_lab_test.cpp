// The VM lab against QEMU and the guest's real drivers. One guest serves the whole suite: the [vm-setup]
// test boots it, the [vm-cleanup] test ends it (CTest fixture vm_lab, tests/CMakeLists.txt); the tests in
// between read the guest with its own ethtool, ip and /proc through `nicmatrix lab exec`.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <sys/wait.h>
#include <unistd.h>

#include "core/base/json.hpp"
#include "core/base/wait_until.hpp"
#include "tests/support/background.hpp"
#include "tests/support/require.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/vm_lab.hpp"
#include "vmlab/qemu_process.hpp"
#include "vmlab/vm_lab.hpp"

namespace {

using nm::test::run_command;
using nm::test::vm_exec;
using nm::test::vm_exec_in;

// QEMU processes whose command line names `dir` (pgrep, an oracle of its own).
std::string qemu_processes_of(const std::string& dir) {
    // [q]: the pattern does not match the shell that runs pgrep (its own command line holds the pattern).
    return run_command("pgrep -a -f '[q]emu-system-x86_64.*" + dir + "/' || true").output;
}

// Two cells of one second: the drivers' defaults run; LRO on is refused (fixed off on e1000e and 8139cp).
constexpr const char* kTinyConfig =
    R"({"name": "vm-tiny", "offloads": [{"name": "default", "features": {}}, {"name": "lro-on", "features": {"lro": "on"}}],
  "mtu": [1500], "traffic": [{"name": "tcp", "protocol": "tcp", "streams": 1}], "duration_s": 1, "omit_s": 0, "repetitions": 1, "cooldown_s": 0,
  "apply_to": {"offloads": "both", "mtu": "both"}})";

nm::Json load_json(const std::string& path) {
    std::ifstream in(path);
    return nm::Json::parse(in);
}

}  // namespace

TEST_CASE("VM lab up boots a guest whose real drivers bind the emulated NICs", "[vm-setup]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    REQUIRE(lab.vm);
    CHECK_THAT(lab.vm->virtualization, Catch::StartsWith("qemu ") && (Catch::EndsWith(" tcg") || Catch::EndsWith(" kvm")));
    CHECK_THAT(qemu_processes_of(lab.vm->state_dir), Catch::Contains("qemu-system-x86_64"));
    REQUIRE(lab.interfaces.size() == 4);
    // ethtool -i in the guest, each NIC in its own namespace: the driver the table says.
    const std::vector<std::pair<std::string, std::string>> want = {{"nic0", "e1000e"}, {"nic1", "8139cp"}, {"nic2", "vmxnet3"}, {"nic3", "tulip"}};
    for (const auto& [ns, driver] : want) {
        const auto r = vm_exec_in(ns, "ethtool -i " + ns);
        INFO(r.output);
        CHECK(r.exit_status == 0);
        CHECK_THAT(r.output, Catch::Contains("driver: " + driver + "\n"));
    }
    const auto addr = vm_exec("ip -n nic1 -o address show dev nic1");
    CHECK_THAT(addr.output, Catch::Contains("198.18.0.2/24") && Catch::Contains("2001:2::2/64"));
    // Joined by a hub: nic0 reaches nic1, and nothing else is there (no default route, no other interface).
    const auto ping = vm_exec_in("nic0", "ping -c 1 -W 5 198.18.0.2");
    INFO(ping.output);
    CHECK(ping.exit_status == 0);
    CHECK(vm_exec("ip -o link show | grep -v ' lo:' || true").output.empty());
}

TEST_CASE("lab exec passes on the guest command's output and exit status", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    const auto r = vm_exec("echo to-stdout; echo to-stderr >&2; exit 7");
    CHECK(r.exit_status == 7);
    CHECK_THAT(r.output, Catch::Contains("to-stdout") && Catch::Contains("to-stderr"));
    const auto version = vm_exec("cat /proc/version");
    CHECK(version.exit_status == 0);
    CHECK_THAT(version.output, Catch::Contains(lab.vm->kernel));
    // A command that outlives --timeout is stopped: exec fails, the guest goes on serving.
    const auto slow =
        run_command(nm::test::nicmatrix_binary() + " lab exec --name " + nm::test::kVmLabName + " --timeout 1 -- sleep 30", std::chrono::seconds(40));
    CHECK(slow.exit_status == 1);
    CHECK_THAT(slow.output, Catch::Contains("still running after"));
    CHECK(vm_exec("true").exit_status == 0);
    // No such lab: a clear error.
    const auto none = run_command(nm::test::nicmatrix_binary() + " lab exec --name nmnolabhere -- true");
    CHECK(none.exit_status == 2);
    CHECK_THAT(none.output, Catch::Contains("no VM lab named nmnolabhere"));
}

TEST_CASE("sweep --lab vm runs the sweep in the guest and writes its results on the host", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    nm::test::TempDir dir;
    { std::ofstream(dir.file("vm-tiny.json")) << kTinyConfig; }
    const auto r =
        run_command(nm::test::nicmatrix_binary() + " sweep " + dir.file("vm-tiny.json") + " --lab vm:e1000e,8139cp -o " + dir.file("out.json"),
                    std::chrono::seconds(300));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("running VM lab " + std::string(nm::test::kVmLabName)));
    CHECK_THAT(r.output, Catch::Contains("results: " + dir.file("out.json")));
    const auto results = load_json(dir.file("out.json"));
    REQUIRE(results["cells"].size() == 2);
    for (const auto& cell : results["cells"]) {
        const auto status = cell["status"].get<std::string>();
        INFO(cell["key"] << " " << status << " " << cell.value("error", ""));
        CHECK((status == "ok" || status == "infeasible"));
        const bool lro = cell["key"].get<std::string>().rfind("lro-on/", 0) == 0;
        CHECK(status == (lro ? "infeasible" : "ok"));
        if (lro) CHECK_THAT(cell.value("error", ""), Catch::Contains("fixed off"));
    }
    const auto& local = results["hosts"]["local"];
    CHECK(local["virtualization"] == lab.vm->virtualization);
    CHECK(local["interface"]["device_model"] == "e1000e");
    CHECK(local["interface"]["driver"] == "e1000e");
    CHECK(local["interface"]["emulator"] == lab.vm->emulator);
    CHECK(results["hosts"]["remote"]["interface"]["device_model"] == "rtl8139");
    CHECK(results["hosts"]["remote"]["interface"]["driver"] == "8139cp");
    CHECK_THAT(results["run"]["command"].get<std::string>(), Catch::Contains("--lab vm:e1000e,8139cp"));
    // The guest's own ethtool: the measured cell ran on the NICs' defaults, and they are as they were after.
    CHECK_THAT(vm_exec_in("nic0", "ethtool -k nic0").output, Catch::Contains("large-receive-offload: off [fixed]"));
    CHECK_THAT(vm_exec("ip -n nic0 -o link show nic0").output, Catch::Contains(" mtu 1500 "));
}

TEST_CASE("VM lab down ends QEMU and removes its state", "[vm-cleanup]") {
    nm::test::require_net_admin();
    const auto dir = (nm::vm_state_root() / nm::test::kVmLabName).string();
    const auto r = run_command(nm::test::nicmatrix_binary() + " lab down --name " + nm::test::kVmLabName, std::chrono::seconds(60));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(qemu_processes_of(dir).empty());
    CHECK_FALSE(std::filesystem::exists(dir));
    const auto again = run_command(nm::test::nicmatrix_binary() + " lab down --name " + nm::test::kVmLabName);
    CHECK(again.exit_status == 0);
    CHECK_THAT(again.output, Catch::Contains("nothing to remove"));
}

TEST_CASE("start_qemu returns once the child runs the program itself, and a program that cannot run is an error", "[vm-nolab]") {
    // Before this, a caller that asked "is the lab's QEMU running" (its /proc/PID/cmdline naming the lab's
    // folder) between fork and exec saw nicmatrix's own command line and took a booting guest for an ended
    // one; under load that window is long (two CI runs failed a boot that way). A stand-in program here:
    // sh, whose $0 carries a marker, so no QEMU is needed.
    nm::test::TempDir dir;
    for (int i = 0; i < 20; ++i) {
        const std::string marker = "nm-exec-marker-" + std::to_string(::getpid()) + "-" + std::to_string(i);
        const int pid = nm::start_qemu({"sh", "-c", "sleep 30", marker}, dir.file("log"), nm::QemuLifetime::Tied);
        std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
        std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
        nm::end_process(pid, std::chrono::seconds(2));
        INFO("the child's command line at once: " << text);
        REQUIRE(text.find(marker) != std::string::npos);
        CHECK_FALSE(nm::process_running(pid));
    }
    CHECK_THROWS_WITH(nm::start_qemu({"/nonexistent/qemu-system-x86_64"}, dir.file("log"), nm::QemuLifetime::Tied),
                      Catch::Contains("start /nonexistent/qemu-system-x86_64") && Catch::Contains("No such file"));
    CHECK_THROWS_WITH(nm::start_qemu({"sh", "-c", "true"}, dir.file("no-such-folder/log"), nm::QemuLifetime::Tied),
                      Catch::Contains("no-such-folder/log") && Catch::Contains("No such file"));
    // The children that could not run were reaped by start_qemu: no zombie is left for this process to collect.
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) <= 0);
}

TEST_CASE("Bad VM lab NICs are refused before anything boots", "[vm-nolab]") {
    nm::test::require_net_admin();
    nm::test::TempDir state;
    const std::string env = "NICMATRIX_VM_STATE=" + state.path.string() + " ";
    const auto up = run_command(env + nm::test::nicmatrix_binary() + " lab up --topology vm --nics e1000e,ne2000 --name nmbadnics");
    CHECK(up.exit_status == 2);
    CHECK_THAT(up.output, Catch::Contains("--nics: unknown NIC \"ne2000\"") && Catch::Contains("vmxnet3 (driver vmxnet3)"));
    const auto one = run_command(env + nm::test::nicmatrix_binary() + " lab up --topology vm --nics e1000e --name nmbadnics");
    CHECK(one.exit_status == 2);
    CHECK_THAT(one.output, Catch::Contains("at least 2"));
    const auto sweep =
        run_command(env + nm::test::nicmatrix_binary() + " sweep " + NM_SOURCE_DIR + "/configs/offload-mtu.json --lab vm:e1000e,bogus");
    CHECK(sweep.exit_status == 2);
    CHECK_THAT(sweep.output, Catch::Contains("unknown NIC \"bogus\""));
    CHECK(std::filesystem::is_empty(state.path));
    CHECK(qemu_processes_of(state.path.string()).empty());
}

TEST_CASE("SIGINT stops a sweep in a VM lab it booted: restored, saved, QEMU and its state gone", "[vm-own]") {
    nm::test::require_net_admin();
    nm::test::require_tool("qemu-system-x86_64");
    nm::test::TempDir dir;
    const auto state = dir.path / "state";
    std::filesystem::create_directories(state);
    {
        // Cells of 20 s: the signal comes while the first is measured.
        std::ofstream(dir.file("vm-long.json")) << R"({"name": "vm-long", "offloads": [{"name": "default", "features": {}}],
          "mtu": [1500], "traffic": [{"name": "tcp", "protocol": "tcp"}, {"name": "tcp2", "protocol": "tcp", "streams": 2}],
          "duration_s": 20, "omit_s": 0, "repetitions": 1, "cooldown_s": 0})";
    }
    // A state folder of its own: the suite's running lab is not seen, so the sweep boots one (tied to it).
    nm::test::Background sweep("env NICMATRIX_VM_STATE=" + state.string() + " " + nm::test::nicmatrix_binary() + " sweep " +
                                   dir.file("vm-long.json") + " --lab vm:e1000e,8139cp -o " + dir.file("out.json"),
                               dir.file("log"), std::chrono::seconds(600));
    nm::wait_until([&] { return sweep.output().find("/2] ") != std::string::npos || !sweep.running(); }, std::chrono::seconds(480),
                   "the sweep in the VM lab to start its first cell");
    INFO(sweep.output());
    REQUIRE(sweep.running());
    CHECK_FALSE(qemu_processes_of(state.string()).empty());
    ::kill(sweep.pid(), SIGINT);
    const auto status = sweep.wait(std::chrono::seconds(240));
    INFO(sweep.output());
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK_THAT(sweep.output(), Catch::Contains("interrupted"));
    CHECK(qemu_processes_of(state.string()).empty());
    CHECK(std::filesystem::is_empty(state));
    CHECK(std::filesystem::exists(dir.file("out.json")));
}
