#include <iostream>

#include "cli/commands.hpp"
#include "core/base/json_codec.hpp"
#include "ethtool_ctl/lab.hpp"

namespace nm::cli {
namespace {

void print_lab(const LabInfo& lab) {
    std::cout << "lab " << lab.name << " (" << (lab.topology == LabTopology::Bridge ? "bridge" : "pair") << ")\n";
    for (const auto& itf : lab.interfaces) {
        std::cout << "  " << itf.netns << "  " << itf.ifname << "  " << itf.role;
        if (!itf.ipv4.empty()) std::cout << "  " << itf.ipv4;
        if (!itf.ipv6.empty()) std::cout << "  " << itf.ipv6;
        std::cout << '\n';
    }
}

}  // namespace

void add_lab_commands(CLI::App& app) {
    auto* lab = app.add_subcommand("lab", "Bring the built-in veth lab (network namespaces joined by veth) up or down");
    lab->require_subcommand(1);

    struct Options {
        std::string name = "nmlab";
        std::string topology = "pair";
        bool json = false;
    };
    auto opts = std::make_shared<Options>();

    auto* up = lab->add_subcommand("up", "Create the lab's namespaces, veth pair, addresses; print what was made");
    up->add_option("--name", opts->name, "Lab name; namespaces are NAME-a, NAME-b (and NAME-dut)")->capture_default_str();
    up->add_option("--topology", opts->topology, "pair: two namespaces; bridge: sender, bridge DUT, receiver")
        ->check(CLI::IsMember({"pair", "bridge"}))
        ->capture_default_str();
    up->add_flag("--json", opts->json, "Print the lab as JSON");
    up->callback([opts] {
        const LabInfo info = lab_up(opts->name, Json(opts->topology).get<LabTopology>());
        if (opts->json) {
            std::cout << Json(info).dump(2) << '\n';
        } else {
            print_lab(info);
        }
    });

    auto* down = lab->add_subcommand("down", "Remove the lab's namespaces and everything in them");
    down->add_option("--name", opts->name, "Lab name")->capture_default_str();
    down->add_flag("--json", opts->json, "Print what was removed as JSON");
    down->callback([opts] {
        const auto removed = lab_down(opts->name);
        if (opts->json) {
            std::cout << Json{{"name", opts->name}, {"removed", removed}}.dump(2) << '\n';
        } else if (removed.empty()) {
            std::cout << "lab " << opts->name << ": nothing to remove\n";
        } else {
            for (const auto& ns : removed) std::cout << "removed netns " << ns << '\n';
        }
    });

    auto* show = lab->add_subcommand("show", "Print an existing lab");
    show->add_option("--name", opts->name, "Lab name")->capture_default_str();
    show->add_flag("--json", opts->json, "Print the lab as JSON");
    show->callback([opts] {
        const LabInfo info = lab_describe(opts->name);
        if (opts->json) {
            std::cout << Json(info).dump(2) << '\n';
        } else {
            print_lab(info);
        }
    });
}

}  // namespace nm::cli
