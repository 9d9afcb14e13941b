#include "tests/support/vm_lab.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>

#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "tests/support/require.hpp"
#include "vmlab/vm_lab.hpp"

namespace nm::test {
namespace {

// Ends the lab this process booted (not one the CTest fixture booted) when the process exits.
struct BootedHere {
    bool booted = false;
    ~BootedHere() {
        if (booted) run_command(nicmatrix_binary() + " lab down --name " + kVmLabName, std::chrono::seconds(60));
    }
};

struct SuiteLab {
    BootedHere booted;
    std::optional<LabInfo> info;
};

SuiteLab& suite() {
    static SuiteLab lab;  // NOLINT: one lab per test process, by design (booting is the expensive part)
    return lab;
}

}  // namespace

std::string shell_quote(const std::string& word) {
    std::string q = "'";
    for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

const LabInfo& suite_vm_lab() {
    require_tool("qemu-system-x86_64");
    auto& lab = suite();
    if (lab.info) return *lab.info;
    // Another test process booted the suite's lab. Its lab.json once existed but was not seen running (CI,
    // on a loaded machine: a second boot of the same name then failed at once while the first guest ran on),
    // so a lab whose folder is there is looked for again, with a deadline, before this process boots one.
    std::optional<LabInfo> running;
    bool folder_there = false;
    const auto look = [&] {
        try {
            auto info = vm_lab_find(kVmLabName);
            folder_there = info.has_value();
            if (info && vm_lab_running(*info)) running = std::move(info);
        } catch (const std::exception&) {
            folder_there = true;  // half written, or being rewritten
        }
        return running.has_value();
    };
    if (!look() && folder_there) {
        try {
            wait_until(look, std::chrono::seconds(20), "the suite's VM lab to be seen running");
        } catch (const std::exception&) {
            // Not running after all: boot it below.
        }
    }
    if (running) {
        lab.info = *running;
        return *lab.info;
    }
    // Boots under TCG in tens of seconds on a loaded 2-core machine; the first run also downloads the kernel.
    const auto r = run_command(nicmatrix_binary() + " lab up --topology vm --nics " + kVmLabNics + " --name " + kVmLabName + " --json",
                               std::chrono::seconds(900));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    lab.booted.booted = true;
    const auto found = vm_lab_find(kVmLabName);
    REQUIRE(found);
    lab.info = *found;
    return *lab.info;
}

CommandResult vm_exec(const std::string& shell, std::chrono::seconds limit) {
    return run_command(
        nicmatrix_binary() + " lab exec --name " + kVmLabName + " --timeout " + std::to_string(limit.count()) + " -- sh -c " + shell_quote(shell),
        limit + std::chrono::seconds(15));
}

CommandResult vm_exec_in(const std::string& netns, const std::string& shell, std::chrono::seconds limit) {
    return vm_exec("ip netns exec " + netns + " sh -c " + shell_quote(shell), limit);
}

}  // namespace nm::test
