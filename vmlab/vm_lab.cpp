#include "vmlab/vm_lab.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"
#include "core/base/file_text.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/lab_codec.hpp"

namespace nm {
namespace {

namespace fs = std::filesystem;

constexpr auto kSetupTimeout = std::chrono::seconds(120);
constexpr auto kCarrierWait = std::chrono::seconds(30);

fs::path state_dir(const std::string& name) { return vm_state_root() / name; }

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// The console's last lines, for an error that says why a guest did not come up.
std::string console_tail(const fs::path& dir) {
    const std::string text = read_file_text(dir / "console.log") + read_file_text(dir / "qemu.log");
    size_t pos = text.size();
    for (int lines = 0; lines < 12 && pos > 0; ++lines) {
        pos = text.rfind('\n', pos - 1);
        if (pos == std::string::npos) {
            pos = 0;
            break;
        }
    }
    return text.substr(pos);
}

// This QEMU process belongs to the lab in `dir` (a pid may be reused once the process is gone).
bool is_lab_qemu(int pid, const fs::path& dir) {
    if (!process_running(pid)) return false;
    std::string cmdline = read_file_text("/proc/" + std::to_string(pid) + "/cmdline");
    return cmdline.find(dir.string() + "/") != std::string::npos;
}

void remove_dir(const fs::path& dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// Ends the lab's QEMU (nothing in the guest needs a clean shutdown: it keeps no state) and removes its folder.
void take_down(const fs::path& dir, int pid) {
    if (pid > 0 && is_lab_qemu(pid, dir)) end_process(pid, std::chrono::seconds(5));
    remove_dir(dir);
}

void remove_stale_labs() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(vm_state_root(), ec)) {
        const auto info = vm_lab_find(entry.path().filename().string());
        if (info && !vm_lab_running(*info)) remove_dir(entry.path());
    }
}

}  // namespace

fs::path vm_state_root() {
    const char* env = std::getenv("NICMATRIX_VM_STATE");
    return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/run/nicmatrix/vm");
}

fs::path vm_image_dir() {
    const char* env = std::getenv("NICMATRIX_VM_IMAGE");
    if (env != nullptr && *env != '\0') return env;
    return fs::read_symlink("/proc/self/exe").parent_path() / "vm";
}

void ensure_vm_image(const fs::path& dir) {
    const fs::path script = fs::path(NM_SOURCE_DIR) / "scripts" / "vm-image.sh";
    if (fs::exists(script)) {
        const std::string exe = fs::read_symlink("/proc/self/exe").string();
        const std::string command = "timeout 1800 '" + script.string() + "' '" + dir.string() + "' '" + exe + "' >&2";
        const int status = std::system(command.c_str());
        if (status != 0) {
            throw Error(ErrorKind::Failed, "build the guest image: " + script.string() + " " + dir.string() + " failed (status " +
                                               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
        }
        return;
    }
    if (!fs::exists(dir / "vmlinuz") || !fs::exists(dir / "initrd.gz")) {
        throw usage_error("the VM lab's guest image is not in " + dir.string() + " (vmlinuz, initrd.gz): make it with scripts/vm-image.sh " +
                          dir.string() + " or point NICMATRIX_VM_IMAGE at one");
    }
}

std::vector<LabInterface> vm_lab_interfaces(const std::vector<NicModel>& nics) {
    std::vector<LabInterface> out;
    const size_t hubs = nics.size() / 2;
    for (size_t i = 0; i < nics.size(); ++i) {
        const size_t hub = std::min(i / 2, hubs == 0 ? 0 : hubs - 1);
        const size_t member = i - 2 * hub + 1;
        const std::string name = "nic" + std::to_string(i);
        LabInterface itf;
        itf.role = name;
        itf.netns = name;
        itf.ifname = name;
        itf.ipv4 = "198.18." + std::to_string(hub) + "." + std::to_string(member) + "/24";
        itf.ipv6 = (hub == 0 ? std::string("2001:2::") : "2001:2:0:" + std::to_string(hub) + "::") + std::to_string(member) + "/64";
        itf.device_model = nics[i].device;
        itf.driver = nics[i].driver;
        itf.mac = nic_mac(i);
        out.push_back(std::move(itf));
    }
    return out;
}

std::string guest_setup_script(const std::vector<LabInterface>& interfaces, std::chrono::seconds carrier_wait) {
    std::string s =
        "set -e\n"
        "setup() {\n"
        "  dev=\n"
        "  for d in /sys/class/net/*; do [ \"$(cat $d/address)\" = \"$1\" ] && dev=${d##*/}; done\n"
        "  [ -n \"$dev\" ] || { echo \"no interface has MAC $1: its driver did not bind\" >&2; exit 1; }\n"
        "  ip netns add \"$2\"\n"
        "  ip link set \"$dev\" netns \"$2\"\n"
        "  ip -n \"$2\" link set \"$dev\" name \"$3\"\n"
        "  ip -n \"$2\" link set lo up\n"
        "  ip -n \"$2\" address add \"$4\" dev \"$3\"\n"
        "  ip -n \"$2\" address add \"$5\" dev \"$3\" nodad\n"
        "  ip -n \"$2\" link set \"$3\" up\n"
        "}\n";
    for (const auto& i : interfaces) s += "setup " + i.mac + " " + i.netns + " " + i.ifname + " " + i.ipv4 + " " + i.ipv6 + "\n";
    // A real driver brings its carrier up after the link negotiates (e1000e: 2-3 s); tulip never reports an
    // operstate (UNKNOWN), so carrier (LOWER_UP) is what is waited for. Bounded by the guest's clock.
    s += "end=$(( $(cut -d. -f1 /proc/uptime) + " + std::to_string(carrier_wait.count()) + " ))\nwhile :; do\n  n=0\n";
    for (const auto& i : interfaces) s += "  ip -n " + i.netns + " -o link show " + i.ifname + " | grep -q LOWER_UP || n=$((n+1))\n";
    s += "  [ $n = 0 ] && break\n  [ $(cut -d. -f1 /proc/uptime) -lt $end ] || { echo \"$n interfaces without carrier after " +
         std::to_string(carrier_wait.count()) + " s\" >&2; exit 1; }\n  sleep 0.2\ndone\n";
    for (const auto& i : interfaces) s += "ip netns exec " + i.netns + " ethtool -i " + i.ifname + " | sed -n 's/^driver: //p'\n";
    return s;
}

LabInfo vm_lab_up(const VmLabRequest& request, std::stop_token stop) {
    validate_lab_name(request.name);
    if (request.nics.size() < 2) throw usage_error("lab up --topology vm: at least two NICs wanted (--nics e1000e,8139cp)");
    fs::create_directories(vm_state_root());
    remove_stale_labs();
    const fs::path dir = state_dir(request.name);
    if (fs::exists(dir)) {
        throw usage_error("VM lab " + request.name + " already exists (" + dir.string() + "); take it down with `nicmatrix lab down --name " +
                          request.name + "`");
    }
    const fs::path image = vm_image_dir();
    ensure_vm_image(image);

    LabInfo info;
    info.name = request.name;
    info.topology = LabTopology::Pair;
    info.interfaces = vm_lab_interfaces(request.nics);
    for (const auto& i : info.interfaces) info.namespaces.push_back(i.netns);
    VmInfo vm;
    QemuSpec spec;
    vm.emulator = "qemu " + qemu_version(spec.binary);
    spec.kvm = kvm_usable();
    vm.accel = spec.kvm ? "kvm" : "tcg";
    vm.virtualization = vm.emulator + " " + vm.accel;
    vm.kernel = trim(read_file_text(image / "kernel-release"));
    vm.state_dir = dir.string();

    fs::create_directories(dir / "share");
    try {
        spec.kernel = (image / "vmlinuz").string();
        spec.initrd = (image / "initrd.gz").string();
        spec.share_dir = (dir / "share").string();
        spec.console_log = (dir / "console.log").string();
        spec.pid_file = (dir / "qemu.pid").string();
        spec.nics = request.nics;
        vm.pid = start_qemu(qemu_argv(spec), (dir / "qemu.log").string(), request.lifetime);
        info.vm = vm;
        // Written at once: a `lab down` finds (and ends) a lab that is still booting.
        write_file_atomically((dir / "lab.json").string(), Json(info).dump(2) + "\n", 0644);
        const GuestChannel channel = vm_lab_channel(info);
        channel.wait_ready(request.boot_timeout, stop);
        const auto r = channel.run({"sh", "-c", guest_setup_script(info.interfaces, kCarrierWait)}, kSetupTimeout, stop);
        if (r.stopped) throw Error(ErrorKind::Failed, "set up the guest's NICs: not done after " + std::to_string(kSetupTimeout.count()) + " s");
        if (r.exit_code != 0) throw Error(ErrorKind::Failed, "set up the guest's NICs: " + trim(r.err));
        std::istringstream drivers(r.out);
        for (auto& itf : info.interfaces) {
            std::string driver;
            std::getline(drivers, driver);
            if (driver != itf.driver) {
                throw Error(ErrorKind::Failed,
                            "the guest's " + itf.ifname + " (QEMU " + itf.device_model + ") is driven by \"" + driver + "\", not " + itf.driver);
            }
        }
        write_file_atomically((dir / "lab.json").string(), Json(info).dump(2) + "\n", 0644);
        return info;
    } catch (const Error& e) {
        const std::string tail = console_tail(dir);
        take_down(dir, vm.pid);
        throw Error(e.kind(), "VM lab " + request.name + ": " + e.what() + (tail.empty() ? "" : "; the guest's console ended with:\n" + tail));
    } catch (...) {
        take_down(dir, vm.pid);
        throw;
    }
}

std::optional<LabInfo> vm_lab_find(const std::string& name) {
    validate_lab_name(name);
    const fs::path file = state_dir(name) / "lab.json";
    if (!fs::exists(file)) return std::nullopt;
    try {
        return Json::parse(read_file_text(file)).get<LabInfo>();
    } catch (const Json::exception& e) {
        throw Error(ErrorKind::Failed, "read " + file.string() + ": " + e.what());
    }
}

std::vector<LabInfo> vm_labs_running() {
    std::vector<LabInfo> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(vm_state_root(), ec)) {
        try {
            if (auto info = vm_lab_find(entry.path().filename().string()); info && vm_lab_running(*info)) out.push_back(std::move(*info));
        } catch (const Error&) {
            // A folder that is no lab of ours (or half written): not a running lab.
        }
    }
    return out;
}

bool vm_lab_down(const std::string& name) {
    validate_lab_name(name);
    const fs::path dir = state_dir(name);
    if (!fs::exists(dir)) return false;
    int pid = 0;
    try {
        if (const auto info = vm_lab_find(name); info && info->vm) pid = info->vm->pid;
    } catch (const Error&) {
        // An unreadable description: the folder goes anyway; QEMU's own pid file still names it.
    }
    if (pid == 0) {
        std::ifstream(dir / "qemu.pid") >> pid;
    }
    take_down(dir, pid);
    return true;
}

bool vm_lab_running(const LabInfo& info) { return info.vm && is_lab_qemu(info.vm->pid, info.vm->state_dir); }

GuestChannel vm_lab_channel(const LabInfo& info) {
    if (!info.vm) throw usage_error("lab " + info.name + " is not a VM lab");
    const int pid = info.vm->pid;
    const fs::path dir = info.vm->state_dir;
    return GuestChannel(dir / "share", [pid, dir] { return is_lab_qemu(pid, dir); });
}

}  // namespace nm
