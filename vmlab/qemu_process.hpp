#pragma once
// Starting and ending the QEMU process of a VM lab. The command line is built by a pure function (tested
// without QEMU); starting and ending it are the only parts that touch the system.
#include <chrono>
#include <string>
#include <vector>

#include "vmlab/nic_models.hpp"

namespace nm {

/// What a guest is booted with.
struct QemuSpec {
    std::string binary = "qemu-system-x86_64";
    std::string kernel;       ///< the image's vmlinuz
    std::string initrd;       ///< the image's initrd.gz
    std::string share_dir;    ///< shared with the guest over virtio-9p (mount tag "nmshare")
    std::string console_log;  ///< the guest's serial console goes here
    std::string pid_file;
    std::vector<NicModel> nics;
    bool kvm = false;  ///< -accel kvm, else tcg
    int memory_mb = 512;
    int cpus = 2;
};

/// The MAC address of the lab's NIC `index` (52:54:00:4e:4d:XX, QEMU's locally administered prefix).
std::string nic_mac(size_t index);

/// QEMU's arguments for `spec`: no network but the NICs' (`-nic none`), NIC 2k and 2k+1 on hub k (a
/// last odd NIC joins the hub before it), NIC i at PCI slot 0x10+i with nic_mac(i).
std::vector<std::string> qemu_argv(const QemuSpec& spec);

/// True when KVM is usable: /dev/kvm opens for reading and writing and the CPU shows vmx or svm (a /dev/kvm
/// without them, as in a VM without nested virtualization, runs no guest). $NICMATRIX_VM_ACCEL (kvm or
/// tcg) decides instead when set.
bool kvm_usable();

/// "7.2.19" from `BINARY --version`; throws nm::Error (Failed) naming the binary when it does not run.
std::string qemu_version(const std::string& binary);

/// How the QEMU process relates to the nicmatrix that starts it.
enum class QemuLifetime {
    Tied,      ///< killed by the kernel when the starting thread ends, even after SIGKILL (PR_SET_PDEATHSIG)
    Detached,  ///< a session of its own, outliving the starter (`lab up`); `lab down` ends it
};

/// Starts QEMU with `argv` (argv[0] the binary, looked up in PATH), stdin from /dev/null and stdout and
/// stderr into `log_file`, every signal unblocked. Returns its pid once the child runs QEMU itself (its
/// exec done, so /proc/PID/cmdline is QEMU's); throws nm::Error (Failed) when the fork fails or QEMU cannot
/// be run (the binary missing, the log not writable), with the reason.
int start_qemu(const std::vector<std::string>& argv, const std::string& log_file, QemuLifetime lifetime);

/// True while process `pid` runs and is not a zombie (reaping a child of ours when it has ended).
bool process_running(int pid);

/// Ends process `pid`: SIGTERM, then SIGKILL when it still runs after `grace`; returns once it is gone
/// (at most `grace` + 5 s). Throws nm::Error (Failed) when it survives SIGKILL that long.
void end_process(int pid, std::chrono::milliseconds grace);

}  // namespace nm
