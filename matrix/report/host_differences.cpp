// compare's warning that the two files' hosts differ where it changes results (comparison.hpp).
#include <set>
#include <tuple>

#include "core/base/version.hpp"
#include "core/host/cpu_affinity.hpp"
#include "matrix/report/comparison.hpp"

namespace nm {

namespace {

// "POLL (0 us), C1 (2 us, disabled on 0-1)": the states in order, as compare shows a difference.
std::string idle_states_text(const CpuIdle& idle) {
    std::string out;
    for (const auto& s : idle.states) {
        if (!out.empty()) out += ", ";
        out += s.name + " (" + (s.latency_us ? std::to_string(*s.latency_us) + " us" : std::string("latency unknown"));
        if (!s.disabled_cpus.empty()) out += ", disabled on " + format_cpu_list(s.disabled_cpus);
        out += ")";
    }
    return out.empty() ? std::string("(none)") : out;
}

}  // namespace

std::vector<std::string> host_differences(const ResultsFile& a, const ResultsFile& b) {
    std::vector<std::string> out;
    const auto differ = [&](const std::string& end, const std::string& what, const std::string& x, const std::string& y) {
        if (!x.empty() && !y.empty() && x != y) out.push_back(end + " " + what + ": " + x + " vs " + y);
    };
    const auto sysctl = [](const HostInfo& h, const std::string& name) {
        const auto it = h.sysctls.find(name);
        return it == h.sysctls.end() ? std::string() : it->second;
    };
    for (const auto& [end, ha, hb] : {std::tuple{"local", &a.local, &b.local}, std::tuple{"remote", &a.remote, &b.remote}}) {
        differ(end, "kernel", ha->kernel, hb->kernel);
        differ(end, "CPU model", ha->cpu_model, hb->cpu_model);
        // Figures of an emulated end are the emulator's: a guest against a host of its own is said too.
        if (ha->virtualization != hb->virtualization) {
            out.push_back(std::string(end) + " virtualization: " + (ha->virtualization.empty() ? "(none recorded)" : ha->virtualization) + " vs " +
                          (hb->virtualization.empty() ? "(none recorded)" : hb->virtualization));
        }
        if (ha->interface && hb->interface) {
            differ(end, "emulated NIC", ha->interface->device_model, hb->interface->device_model);
            differ(end, "emulator", ha->interface->emulator, hb->interface->emulator);
            differ(end, "driver", ha->interface->driver, hb->interface->driver);
            differ(end, "driver version", ha->interface->driver_version, hb->interface->driver_version);
            differ(end, "firmware", ha->interface->firmware, hb->interface->firmware);
        }
        differ(end, "congestion control", sysctl(*ha, "net.ipv4.tcp_congestion_control"), sysctl(*hb, "net.ipv4.tcp_congestion_control"));
        // Mitigations change what every system call costs; compared where both files list them.
        if (!ha->cpu_vulnerabilities.empty() && !hb->cpu_vulnerabilities.empty()) {
            std::set<std::string> names;
            for (const auto* h : {ha, hb}) {
                for (const auto& [name, line] : h->cpu_vulnerabilities) names.insert(name);
            }
            const auto line = [](const HostInfo& h, const std::string& name) {
                const auto it = h.cpu_vulnerabilities.find(name);
                return it == h.cpu_vulnerabilities.end() ? std::string("(not listed)") : it->second;
            };
            for (const auto& name : names) differ(end, "CPU vulnerability " + name, line(*ha, name), line(*hb, name));
        }
        // The idle policy sets what waking a sleeping receiver costs: compared where both files read it.
        if (ha->cpu_idle && hb->cpu_idle) {
            const CpuIdle& ia = *ha->cpu_idle;
            const CpuIdle& ib = *hb->cpu_idle;
            differ(end, "cpuidle driver", ia.driver, ib.driver);
            differ(end, "cpuidle governor", ia.governor, ib.governor);
            differ(end, "idle states", idle_states_text(ia), idle_states_text(ib));
            std::set<std::string> names;
            for (const auto* i : {&ia, &ib}) {
                for (const auto& [name, value] : i->driver_parameters) names.insert(name);
            }
            const auto value = [](const CpuIdle& i, const std::string& name) {
                const auto it = i.driver_parameters.find(name);
                return it == i.driver_parameters.end() ? std::string("(not listed)") : it->second;
            };
            if (ia.driver == ib.driver) {
                for (const auto& name : names) differ(end, ia.driver + " parameter " + name, value(ia, name), value(ib, name));
            }
        }
        // Another engine may measure differently: which build wrote each end's figures.
        const auto build = [](const ToolInfo& t) { return t.version.empty() ? std::string() : build_label(t.version, t.commit); };
        differ(end, "nicmatrix build", build(ha->tool), build(hb->tool));
    }
    return out;
}

}  // namespace nm
