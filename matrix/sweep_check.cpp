// The checks of a sweep against its ends before anything is changed (runner.hpp: check_sweep,
// refuse_if_uncontrollable).
#include "core/base/error.hpp"
#include "matrix/runner.hpp"

namespace nm {
namespace {

void check_dut(const SweepPlan& plan, const SweepTarget& target) {
    const SweepConfig& config = plan.config;
    if (uses_dut(config) && target.dut.empty()) {
        throw usage_error("sweep " + config.name +
                          ": \"apply_to\": \"dut\" needs a device under test between the ends; run it with --lab --topology bridge");
    }
    for (const auto& d : target.dut) {
        if (d.device == nullptr || !uses_dut(config)) continue;
        d.device->read(d.ifname);
        try {
            for (const auto& p : config.offloads) {
                if (applies_to(config.apply_offloads_to, EndRole::Dut) && !p.features.empty())
                    d.device->validate(d.ifname, LinkSettings{std::nullopt, p.features, {}});
            }
        } catch (const Error& e) {
            throw Error(e.kind(), "device under test: " + std::string(e.what()));
        }
    }
}

// Every profile and tuning value the end gets passes the device's validate.
void check_end(const SweepConfig& config, const SweepEnd& end, bool remote) {
    const EndRole role = remote ? EndRole::Remote : EndRole::Local;
    const std::string where = std::string(remote ? "peer" : "local") + " end: ";
    try {
        for (const auto& p : config.offloads) {
            LinkSettings s;
            if (applies_to(config.apply_offloads_to, role)) s.features = p.features;
            if (!s.empty()) end.device->validate(end.ifname, s);
        }
    } catch (const Error& e) {
        throw Error(e.kind(), where + e.what());
    }
    for (const auto& [axis, values] : config.axes) {
        if (!applies_to(axis_applies_to(config, axis), role)) continue;
        for (size_t i = 0; i < values.size(); ++i) {
            LinkSettings s;
            s.tuning = values[i].tuning;
            try {
                end.device->validate(end.ifname, s);
            } catch (const Error& e) {
                throw Error(e.kind(), "/" + axis + "/" + std::to_string(i) + ": " + where + e.what());
            }
        }
    }
}

}  // namespace

void refuse_if_uncontrollable(const SweepPlan& plan, bool remote, const std::string& why) {
    if (!sweep_changes_end(plan, remote)) return;
    const SweepConfig& config = plan.config;
    throw usage_error(std::string("sweep ") + config.name + ": the config applies " +
                      (applies_to(config.apply_mtu_to, remote ? EndRole::Remote : EndRole::Local) ? "the MTU" : "offloads") + " to the " +
                      (remote ? "peer" : "local") + " end, which cannot be changed from here (" + why +
                      "); set \"apply_to\" to \"local\" and set the peer by hand, or use --lab");
}

void check_sweep(const SweepPlan& plan, const SweepTarget& target) {
    if (plan.cells.empty()) throw usage_error("sweep " + plan.config.name + ": the exclude rules leave no cell to run");
    check_dut(plan, target);
    for (const auto* end : {&target.local, &target.remote}) {
        const bool remote = end == &target.remote;
        const bool needed = sweep_changes_end(plan, remote);
        if (end->device == nullptr) {
            refuse_if_uncontrollable(plan, remote, end->why_no_control);
            continue;
        }
        // read() throws a usage error naming an unknown interface.
        const LinkState state = end->device->read(end->ifname);
        (void)state;
        if (!needed) continue;
        check_end(plan.config, *end, remote);
    }
}

}  // namespace nm
