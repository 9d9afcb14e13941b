#include "ethtool_ctl/lab.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "ethtool_ctl/netns.hpp"
#include "ethtool_ctl/rtnl_socket.hpp"

namespace nm {
namespace {

struct LabPlan {
    std::string client_ns, server_ns, dut_ns;
};

LabPlan plan_for(std::string_view name) {
    const std::string n(name);
    return {n + "-a", n + "-b", n + "-dut"};
}

LabInfo describe(std::string_view name, LabTopology topology) {
    const LabPlan plan = plan_for(name);
    LabInfo info;
    info.name = std::string(name);
    info.topology = topology;
    info.interfaces.push_back({"client", plan.client_ns, "nm-a", "198.18.0.1/24", "2001:2::1/64"});
    info.interfaces.push_back({"server", plan.server_ns, "nm-b", "198.18.0.2/24", "2001:2::2/64"});
    if (topology == LabTopology::Bridge) {
        info.namespaces = {plan.client_ns, plan.dut_ns, plan.server_ns};
        info.interfaces.push_back({"dut-client", plan.dut_ns, "dut-a", "", ""});
        info.interfaces.push_back({"dut-server", plan.dut_ns, "dut-b", "", ""});
        info.interfaces.push_back({"dut-bridge", plan.dut_ns, "br0", "", ""});
    } else {
        info.namespaces = {plan.client_ns, plan.server_ns};
    }
    return info;
}

// Removes the namespaces it was told about unless dismissed: a failed `lab up` leaves nothing behind.
class Rollback {
public:
    ~Rollback() {
        for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
            try {
                delete_netns(*it);
            } catch (const Error&) {
                // Best effort while another error is already on its way to the user.
            }
        }
    }
    void add(std::string ns) { made_.push_back(std::move(ns)); }
    void dismiss() { made_.clear(); }

private:
    std::vector<std::string> made_;
};

void bring_up_end(const LabInterface& end) {
    const RtnlSocket rtnl = RtnlSocket::open(end.netns);
    rtnl.set_up(end.ifname);
    if (!end.ipv4.empty()) rtnl.add_address(end.ifname, end.ipv4);
    if (!end.ipv6.empty()) rtnl.add_address(end.ifname, end.ipv6);
}

// A device that was just set up keeps the noop qdisc, which drops every packet, until the kernel's
// linkwatch work activates it, up to a second later; linkwatch sets the operstate in the same step. So
// a lab is ready when every port reports operstate "up", and lab_up returns only then.
void wait_until_running(const LabInterface& end) {
    const RtnlSocket rtnl = RtnlSocket::open(end.netns);
    wait_until([&] { return rtnl.link_info(end.ifname).operstate == "up"; }, std::chrono::seconds(5),
               end.ifname + " in netns " + end.netns + " to be operationally up");
}

}  // namespace

void validate_lab_name(std::string_view name) {
    const bool ok = !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
    if (!ok) throw usage_error("--name: lab name \"" + std::string(name) + "\" must be 1-32 letters, digits, '-' or '_'");
}

LabInfo lab_up(std::string_view name, LabTopology topology) {
    validate_lab_name(name);
    LabInfo info = describe(name, topology);  // not const: returned by move
    const LabPlan plan = plan_for(name);
    for (const auto& ns : {plan.client_ns, plan.server_ns, plan.dut_ns}) {
        if (netns_exists(ns)) {
            throw usage_error("lab " + std::string(name) + " already exists (netns " + ns + "); take it down with `nicmatrix lab down --name " +
                              std::string(name) + "`");
        }
    }

    Rollback rollback;
    for (const auto& ns : info.namespaces) {
        create_netns(ns);
        rollback.add(ns);
    }
    for (const auto& ns : info.namespaces) RtnlSocket::open(ns).set_up("lo");

    const RtnlSocket here = RtnlSocket::open();
    const UniqueFd client_fd = open_netns(plan.client_ns);
    const UniqueFd server_fd = open_netns(plan.server_ns);
    if (topology == LabTopology::Pair) {
        here.create_veth("nm-a", client_fd.get(), "nm-b", server_fd.get());
    } else {
        const UniqueFd dut_fd = open_netns(plan.dut_ns);
        here.create_veth("nm-a", client_fd.get(), "dut-a", dut_fd.get());
        here.create_veth("dut-b", dut_fd.get(), "nm-b", server_fd.get());
        const RtnlSocket dut = RtnlSocket::open(plan.dut_ns);
        dut.create_bridge("br0");
        dut.set_master("dut-a", "br0");
        dut.set_master("dut-b", "br0");
        dut.set_up("br0");
    }
    for (const auto& end : info.interfaces) {
        if (end.role != "dut-bridge") bring_up_end(end);
    }
    for (const auto& end : info.interfaces) wait_until_running(end);
    rollback.dismiss();
    return info;
}

LabInfo lab_describe(std::string_view name) {
    validate_lab_name(name);
    const LabPlan plan = plan_for(name);
    if (!netns_exists(plan.client_ns) || !netns_exists(plan.server_ns)) {
        throw usage_error("there is no lab named " + std::string(name) + "; start one with `nicmatrix lab up --name " + std::string(name) + "`");
    }
    return describe(name, netns_exists(plan.dut_ns) ? LabTopology::Bridge : LabTopology::Pair);
}

std::vector<std::string> lab_down(std::string_view name) {
    validate_lab_name(name);
    const LabPlan plan = plan_for(name);
    std::vector<std::string> removed;
    for (const auto& ns : {plan.client_ns, plan.dut_ns, plan.server_ns}) {
        if (delete_netns(ns)) removed.push_back(ns);
    }
    return removed;
}

}  // namespace nm
