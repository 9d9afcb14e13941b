#pragma once
// The VM lab of the tests/vm suite: one guest for the whole suite. Under CTest the [vm-setup] test boots it
// and the [vm-cleanup] test ends it (the fixture vm_lab); a test run on its own boots it on first use and
// ends it when the process exits. Tests reach the guest through `nicmatrix lab exec`, so ethtool, ip and
// /proc inside the guest are the oracles.
#include <string>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/command.hpp"

namespace nm::test {

/// The suite's lab: its name, and its NICs (nic0 e1000e + nic1 8139cp on hub 0, nic2 vmxnet3 + nic3 tulip on hub 1).
inline constexpr const char* kVmLabName = "nmtestvm";
inline constexpr const char* kVmLabNics = "e1000e,8139cp,vmxnet3,tulip";

/// Skips (exit 77) when QEMU is not installed, then returns the running suite lab (booting it when none runs).
const LabInfo& suite_vm_lab();

/// Runs `shell` (one /bin/sh command line) inside the suite lab's guest through `nicmatrix lab exec`,
/// bounded by `limit`; stdout and stderr together, the command's exit status.
CommandResult vm_exec(const std::string& shell, std::chrono::seconds limit = std::chrono::seconds(60));

/// The same in namespace `netns` of the guest (each NIC's).
CommandResult vm_exec_in(const std::string& netns, const std::string& shell, std::chrono::seconds limit = std::chrono::seconds(60));

/// Shell quoting for one word.
std::string shell_quote(const std::string& word);

}  // namespace nm::test
