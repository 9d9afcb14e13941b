#pragma once
// The VM lab: a QEMU guest (Debian's kernel, an initramfs of busybox and nicmatrix) whose emulated NICs
// are bound by the guest's real drivers, each NIC in a network namespace of its own inside the guest.
// Its state lives in one folder on the host, /run/nicmatrix/vm/NAME: lab.json (the LabInfo), the console
// log, QEMU's log and the 9p share the command channel runs through. Nothing of it touches the host's
// network: the NICs are joined only to each other, by QEMU hubs.
#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"
#include "vmlab/guest_channel.hpp"
#include "vmlab/nic_models.hpp"
#include "vmlab/qemu_process.hpp"

namespace nm {

/// Where VM labs keep their state: $NICMATRIX_VM_STATE, else /run/nicmatrix/vm.
std::filesystem::path vm_state_root();

/// Where the guest image is: $NICMATRIX_VM_IMAGE, else the folder vm/ next to the running nicmatrix
/// (build/vm for build/nicmatrix).
std::filesystem::path vm_image_dir();

/// Makes the image current: runs scripts/vm-image.sh of the source tree this nicmatrix was built from
/// (when that tree is still there) with this very binary, which downloads the kernel once and rebuilds the
/// initramfs when nicmatrix changed. Throws nm::Error (Usage) when there is no script and no image, or
/// (Failed) when the script fails.
void ensure_vm_image(const std::filesystem::path& dir);

/// The lab's interfaces as `lab up` makes them: NIC i in namespace nicI, renamed nicI, with the addresses
/// of its hub (hub k: 198.18.k.0/24 and 2001:2:0:k::/64, its members .1, .2, ...). Roles "nic0", "nic1", ...
std::vector<LabInterface> vm_lab_interfaces(const std::vector<NicModel>& nics);

/// The guest's shell script that puts each NIC (found by its MAC) into its namespace, names and addresses
/// it, sets it up, then waits (at most `carrier_wait`) for every one to report operstate up.
std::string guest_setup_script(const std::vector<LabInterface>& interfaces, std::chrono::seconds carrier_wait);

struct VmLabRequest {
    std::string name;
    std::vector<NicModel> nics;
    QemuLifetime lifetime = QemuLifetime::Detached;
    std::chrono::milliseconds boot_timeout = std::chrono::minutes(5);
};

/// Boots the guest, waits for it to answer, sets up its NICs and checks the drivers that bound them;
/// writes and returns the lab's description. Throws nm::Error (Usage) for a bad or taken name, (Failed)
/// when QEMU or the guest fails (with the console's last lines); nothing is left behind then. State folders
/// of labs whose QEMU has ended are removed first.
LabInfo vm_lab_up(const VmLabRequest& request, std::stop_token stop);

/// The VM lab `name` when its folder exists (its QEMU may have ended: vm->pid no longer running).
std::optional<LabInfo> vm_lab_find(const std::string& name);

/// Every VM lab whose QEMU runs.
std::vector<LabInfo> vm_labs_running();

/// Ends the lab's QEMU and removes its folder. False when there was no such lab (not an error).
bool vm_lab_down(const std::string& name);

/// The command channel of a lab that runs; throws nm::Error (Usage) when `info` is no VM lab.
GuestChannel vm_lab_channel(const LabInfo& info);

/// True while the lab's QEMU runs.
bool vm_lab_running(const LabInfo& info);

}  // namespace nm
