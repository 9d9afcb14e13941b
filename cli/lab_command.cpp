#include <iostream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "vmlab/vm_lab.hpp"

namespace nm::cli {
namespace {

void print_lab(const LabInfo& lab) {
    std::cout << "lab " << lab.name << " (";
    if (lab.vm) {
        std::cout << "vm: " << lab.vm->virtualization << ", kernel " << lab.vm->kernel << ", pid " << lab.vm->pid
                  << (vm_lab_running(lab) ? "" : ", QEMU has ended") << ", " << lab.vm->state_dir;
    } else {
        std::cout << (lab.topology == LabTopology::Bridge ? "bridge" : "pair");
    }
    std::cout << ")\n";
    for (const auto& itf : lab.interfaces) {
        std::cout << "  " << itf.netns << "  " << itf.ifname << "  " << itf.role;
        if (!itf.device_model.empty()) std::cout << "  " << itf.device_model << " (" << itf.driver << ")";
        if (!itf.ipv4.empty()) std::cout << "  " << itf.ipv4;
        if (!itf.ipv6.empty()) std::cout << "  " << itf.ipv6;
        std::cout << '\n';
    }
}

void write_chunk(std::ostream& out, std::string_view chunk) {
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    out.flush();
}

}  // namespace

void add_lab_commands(CLI::App& app, std::stop_token stop) {
    auto* lab = app.add_subcommand("lab", "Bring a built-in lab up or down: namespaces joined by veth, or a QEMU guest with emulated NICs (vm)");
    lab->require_subcommand(1);

    struct Options {
        std::string name = "nmlab";
        std::string topology = "pair";
        std::string nics;
        bool json = false;
        double timeout_s = 60;
        std::vector<std::string> command;
    };
    auto opts = std::make_shared<Options>();

    auto* up = lab->add_subcommand("up", "Create the lab's namespaces, veth pair, addresses (or boot the VM lab); print what was made");
    up->add_option("--name", opts->name, "Lab name; namespaces are NAME-a, NAME-b (and NAME-dut); a VM lab's state is in /run/nicmatrix/vm/NAME")
        ->capture_default_str();
    up->add_option("--topology", opts->topology,
                   "pair: two namespaces; bridge: sender, bridge DUT, receiver; vm: a QEMU guest whose emulated NICs (--nics) its "
                   "real drivers bind, NICs 1+2, 3+4, ... joined by QEMU hubs, each in a namespace of its own in the guest")
        ->check(CLI::IsMember({"pair", "bridge", "vm"}))
        ->capture_default_str();
    std::string models;
    for (const auto& m : nic_models()) models += (models.empty() ? "" : ", ") + m.device + " (" + m.driver + ")";
    up->add_option("--nics", opts->nics, "With --topology vm: two or more NICs, comma-separated, by QEMU device or driver name: " + models);
    up->add_flag("--json", opts->json, "Print the lab as JSON");
    up->callback([opts, stop] {
        LabInfo info;
        if (opts->topology == "vm") {
            if (opts->nics.empty()) throw usage_error("lab up --topology vm: give the NICs, e.g. --nics e1000e,8139cp");
            VmLabRequest request;
            request.name = opts->name;
            request.nics = parse_nic_list(opts->nics, "--nics");
            info = vm_lab_up(request, stop);
        } else {
            if (!opts->nics.empty()) throw usage_error("--nics: only with --topology vm");
            info = lab_up(opts->name, Json(opts->topology).get<LabTopology>());
        }
        if (opts->json) {
            std::cout << Json(info).dump(2) << '\n';
        } else {
            print_lab(info);
        }
    });

    auto* down = lab->add_subcommand("down", "Remove the lab's namespaces and everything in them; end a VM lab's QEMU and remove its state");
    down->add_option("--name", opts->name, "Lab name")->capture_default_str();
    down->add_flag("--json", opts->json, "Print what was removed as JSON");
    down->callback([opts] {
        auto removed = lab_down(opts->name);
        if (vm_lab_down(opts->name)) removed.push_back((vm_state_root() / opts->name).string());
        if (opts->json) {
            std::cout << Json{{"name", opts->name}, {"removed", removed}}.dump(2) << '\n';
        } else if (removed.empty()) {
            std::cout << "lab " << opts->name << ": nothing to remove\n";
        } else {
            for (const auto& what : removed) std::cout << "removed " << (what.find('/') == std::string::npos ? "netns " : "VM lab ") << what << '\n';
        }
    });

    auto* show = lab->add_subcommand("show", "Print an existing lab");
    show->add_option("--name", opts->name, "Lab name")->capture_default_str();
    show->add_flag("--json", opts->json, "Print the lab as JSON");
    show->callback([opts] {
        const auto vm = vm_lab_find(opts->name);
        const LabInfo info = vm ? *vm : lab_describe(opts->name);
        if (opts->json) {
            std::cout << Json(info).dump(2) << '\n';
        } else {
            print_lab(info);
        }
    });

    auto* exec = lab->add_subcommand("exec",
                                     "Run a command inside a VM lab's guest (ethtool, ip, cat /proc/..., nicmatrix); print its output, "
                                     "exit with its status");
    exec->add_option("--name", opts->name, "Lab name")->capture_default_str();
    exec->add_option("--timeout", opts->timeout_s, "Seconds the command may run; then it gets SIGTERM and exec exits 1")
        ->check(CLI::Range(0.1, 86400.0))
        ->capture_default_str();
    exec->add_option("command", opts->command, "The command and its arguments (after --)")->required();
    exec->callback([opts, stop] {
        const auto info = vm_lab_find(opts->name);
        if (!info)
            throw usage_error("lab exec: there is no VM lab named " + opts->name + "; start one with `nicmatrix lab up --topology vm --nics ...`");
        if (!vm_lab_running(*info))
            throw Error(ErrorKind::Failed,
                        "lab exec: the QEMU of VM lab " + opts->name + " has ended; `nicmatrix lab down --name " + opts->name + "` cleans up");
        const auto r = vm_lab_channel(*info).run(
            opts->command, std::chrono::milliseconds(static_cast<int64_t>(opts->timeout_s * 1000)), stop,
            [](std::string_view c) { write_chunk(std::cout, c); }, [](std::string_view c) { write_chunk(std::cerr, c); }, std::chrono::seconds(10));
        if (r.stopped && !stop.stop_requested()) {
            throw Error(ErrorKind::Failed,
                        "lab exec: `" + opts->command.front() + "` still running after " + std::to_string(opts->timeout_s) + " s; stopped");
        }
        if (r.exit_code != 0) throw ExitStatus{r.exit_code};
    });
}

}  // namespace nm::cli
