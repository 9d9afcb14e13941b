// JSON of who the ends of a measurement are: a host (kernel, CPUs, their layout and idle states, sysctls),
// its interface (driver, firmware, MTU range, settings before the sweep, IRQs and steering) and the build
// that described it. Read back tolerantly: what an older file or agent did not record reads as unknown.
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "core/base/cpu_codec.hpp"
#include "core/base/device_types.hpp"
#include "core/host/host_codec.hpp"
#include "core/base/tuning_codec.hpp"
#include "core/base/json_integer.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;
using codec::req;

void to_json(Json& j, const EndSettings& v) {
    j = Json{{"mtu", v.mtu}, {"features", v.features}};
    if (!v.tuning) return;
    // Only the kinds the sweep has axes of are kept; an empty kind is left out.
    Json t = *v.tuning;
    for (auto it = t.begin(); it != t.end();) {
        if (it->is_null() || (it->is_object() && it->empty())) {
            it = t.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& [key, value] : t.items()) j[key] = value;
}

void from_json(const Json& j, EndSettings& v) {
    req(j, "mtu", v.mtu);
    j.at("features").get_to(v.features);
    bool any = false;
    for (const char* key : {"channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc", "unsupported"}) any = any || j.contains(key);
    if (any) v.tuning = j.get<TuningState>();
}

namespace {

template <typename T>
Json or_null(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

template <typename T>
std::optional<T> optional_of(const Json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return checked_integer<T>(*it, key);
    } else {
        return it->get<T>();
    }
}

Json masks_json(const std::vector<QueueMask>& masks) {
    Json out = Json::array();
    for (const auto& m : masks) out.push_back({{"queue", m.queue}, {"mask", or_null(m.mask)}});
    return out;
}

std::vector<QueueMask> masks_of(const Json& j, const char* key) {
    std::vector<QueueMask> out;
    if (const auto it = j.find(key); it != j.end() && it->is_array()) {
        for (const auto& m : *it) out.push_back({m.at("queue").get<std::string>(), optional_of<std::string>(m, "mask")});
    }
    return out;
}

}  // namespace

void to_json(Json& j, const InterfaceSystem& v) {
    Json irqs = Json::array();
    for (const auto& i : v.irqs) irqs.push_back({{"irq", i.irq}, {"affinity", i.affinity}});
    j = Json{{"qdisc", {{"kind", v.qdisc}, {"handle", v.qdisc_handle}}},
             {"irqs", std::move(irqs)},
             {"rps_cpus", masks_json(v.rps)},
             {"xps_cpus", masks_json(v.xps)},
             {"numa_node", or_null(v.numa_node)}};
}

void from_json(const Json& j, InterfaceSystem& v) {
    if (const auto it = j.find("qdisc"); it != j.end() && it->is_object()) {
        v.qdisc = it->value("kind", "");
        v.qdisc_handle = it->value("handle", "");
    }
    if (const auto it = j.find("irqs"); it != j.end() && it->is_array()) {
        for (const auto& i : *it) v.irqs.push_back({checked_integer<uint32_t>(i.at("irq"), "irq"), i.value("affinity", "")});
    }
    v.rps = masks_of(j, "rps_cpus");
    v.xps = masks_of(j, "xps_cpus");
    v.numa_node = optional_of<int>(j, "numa_node");
}

void to_json(Json& j, const CpuLayout& v) {
    Json cpus = Json::array();
    for (const auto& c : v.cpus) {
        cpus.push_back({{"cpu", c.cpu},
                        {"core", or_null(c.core)},
                        {"package", or_null(c.package)},
                        {"node", or_null(c.node)},
                        {"governor", or_null(c.governor)},
                        {"freq_khz", or_null(c.freq_khz)}});
    }
    Json nodes = Json::object();
    for (const auto& [node, list] : v.numa_nodes) nodes[std::to_string(node)] = list;
    j = Json{{"smt_active", or_null(v.smt_active)}, {"numa_nodes", std::move(nodes)}, {"cpus", std::move(cpus)}};
}

void from_json(const Json& j, CpuLayout& v) {
    v.smt_active = optional_of<bool>(j, "smt_active");
    if (const auto it = j.find("numa_nodes"); it != j.end() && it->is_object()) {
        for (const auto& [node, list] : it->items()) v.numa_nodes[std::stoi(node)] = list.get<std::string>();
    }
    if (const auto it = j.find("cpus"); it != j.end() && it->is_array()) {
        for (const auto& c : *it) {
            CpuTopology t;
            t.cpu = checked_integer<uint32_t>(c.at("cpu"), "cpu");
            t.core = optional_of<int>(c, "core");
            t.package = optional_of<int>(c, "package");
            t.node = optional_of<int>(c, "node");
            t.governor = optional_of<std::string>(c, "governor");
            t.freq_khz = optional_of<uint64_t>(c, "freq_khz");
            v.cpus.push_back(std::move(t));
        }
    }
}

void to_json(Json& j, const CpuIdle& v) {
    Json states = Json::array();
    for (const auto& s : v.states) {
        states.push_back({{"name", s.name}, {"latency_us", or_null(s.latency_us)}, {"disabled_cpus", s.disabled_cpus}});
    }
    j = Json{{"driver", v.driver}, {"governor", v.governor}, {"states", std::move(states)}, {"driver_parameters", v.driver_parameters}};
}

void from_json(const Json& j, CpuIdle& v) {
    v.driver = j.value("driver", "");
    v.governor = j.value("governor", "");
    if (const auto it = j.find("states"); it != j.end() && it->is_array()) {
        for (const auto& s : *it) {
            CpuIdleState state;
            state.name = s.value("name", "");
            state.latency_us = optional_of<uint32_t>(s, "latency_us");
            if (const auto cpus = s.find("disabled_cpus"); cpus != s.end() && cpus->is_array()) {
                for (const auto& cpu : *cpus) state.disabled_cpus.push_back(checked_integer<uint32_t>(cpu, "disabled_cpus"));
            }
            v.states.push_back(std::move(state));
        }
    }
    v.driver_parameters = j.value("driver_parameters", std::map<std::string, std::string>{});
}

void to_json(Json& j, const InterfaceInfo& v) {
    j = Json{{"name", v.name},
             {"netns", v.netns},
             {"driver", v.driver},
             {"firmware", v.firmware},
             {"driver_version", v.driver_version},
             {"bus_info", v.bus_info},
             {"speed_mbps", v.speed_mbps ? Json(*v.speed_mbps) : Json(nullptr)},
             {"mtu_min", v.mtu_min},
             {"mtu_max", v.mtu_max},
             {"original", v.original},
             {"rings", v.rings},
             {"coalesce", v.coalesce},
             {"channels", v.channels},
             {"system", or_null(v.system)}};
    if (v.tuning) j["tuning"] = *v.tuning;
    if (!v.emulator.empty()) j["emulator"] = v.emulator;
    if (!v.device_model.empty()) j["device_model"] = v.device_model;
}

void from_json(const Json& j, InterfaceInfo& v) {
    j.at("name").get_to(v.name);
    v.netns = j.value("netns", "");
    j.at("driver").get_to(v.driver);
    v.firmware = j.value("firmware", "");
    v.bus_info = j.value("bus_info", "");
    opt(j, "speed_mbps", v.speed_mbps);
    req(j, "mtu_min", v.mtu_min);
    req(j, "mtu_max", v.mtu_max);
    j.at("original").get_to(v.original);
    opt(j, "rings", v.rings);
    opt(j, "coalesce", v.coalesce);
    opt(j, "channels", v.channels);
    if (const auto it = j.find("tuning"); it != j.end() && it->is_object()) v.tuning = it->get<TuningState>();
    v.driver_version = j.value("driver_version", "");
    v.system = optional_of<InterfaceSystem>(j, "system");
    v.emulator = j.value("emulator", "");
    v.device_model = j.value("device_model", "");
}

void to_json(Json& j, const HostInfo& v) {
    j = Json{{"hostname", v.hostname},
             {"kernel", v.kernel},
             {"cpu", {{"model", v.cpu_model}, {"count", v.cpu_count}}},
             {"cpu_accounting", v.cpu_accounting},
             {"interface", v.interface ? Json(*v.interface) : Json(nullptr)}};
    if (!v.sysctls.empty()) j["sysctls"] = v.sysctls;
    if (!v.kernel_cmdline.empty()) j["kernel_cmdline"] = v.kernel_cmdline;
    if (!v.cpu_vulnerabilities.empty()) j["cpu_vulnerabilities"] = v.cpu_vulnerabilities;
    if (!v.cpu_layout.cpus.empty()) j["cpu_layout"] = v.cpu_layout;
    if (v.cpu_idle) j["cpu_idle"] = *v.cpu_idle;
    if (!v.tool.version.empty()) j["tool"] = v.tool;
    if (!v.virtualization.empty()) j["virtualization"] = v.virtualization;
}

void from_json(const Json& j, HostInfo& v) {
    v.hostname = j.value("hostname", "");
    v.kernel = j.value("kernel", "");
    if (const auto it = j.find("cpu"); it != j.end() && it->is_object()) {
        v.cpu_model = it->value("model", "");
        opt(*it, "count", v.cpu_count);
    }
    if (const auto it = j.find("cpu_accounting"); it != j.end() && it->is_object()) v.cpu_accounting = it->get<CpuAccounting>();
    if (const auto it = j.find("interface"); it != j.end() && !it->is_null()) v.interface = it->get<InterfaceInfo>();
    v.sysctls = j.value("sysctls", std::map<std::string, std::string>{});
    v.kernel_cmdline = j.value("kernel_cmdline", "");
    v.cpu_vulnerabilities = j.value("cpu_vulnerabilities", std::map<std::string, std::string>{});
    if (const auto it = j.find("cpu_layout"); it != j.end() && it->is_object()) v.cpu_layout = it->get<CpuLayout>();
    if (const auto it = j.find("cpu_idle"); it != j.end() && it->is_object()) v.cpu_idle = it->get<CpuIdle>();
    if (const auto it = j.find("tool"); it != j.end() && it->is_object()) it->get_to(v.tool);
    v.virtualization = j.value("virtualization", "");
}

void to_json(Json& j, const ToolInfo& v) {
    j = Json{{"name", v.name}, {"version", v.version}};
    if (!v.commit.empty()) j["commit"] = v.commit;
}

void from_json(const Json& j, ToolInfo& v) {
    v.name = j.value("name", "nicmatrix");
    v.version = j.value("version", "");
    v.commit = j.value("commit", "");
}

}  // namespace nm
