// JSON of who the ends of a measurement are: a host (kernel, CPUs, their layout and idle states, sysctls),
// its interface (driver, firmware, MTU range, settings before the sweep, IRQs and steering) and the build
// that described it. Read back tolerantly: what an older file or agent did not record reads as unknown.
// Most of it is the field lists' (host_types.hpp, device_types.hpp); here are the keys that are not one
// member each.
#include <map>
#include <string>

#include "core/base/json_integer.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/device/device_types.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/cpu_codec.hpp"

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
    for (const char* key : {"channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc", "unsupported"})
        any = any || j.contains(key);
    if (any) v.tuning = j.get<TuningState>();
}

// The listed fields (host_types.hpp) and the NUMA nodes, an object keyed by the node's number.
void to_json(Json& j, const CpuLayout& v) {
    write_fields(j, v, json_fields_and_more(&v));
    Json nodes = Json::object();
    for (const auto& [node, list] : v.numa_nodes) nodes[std::to_string(node)] = list;
    j["numa_nodes"] = std::move(nodes);
}

void from_json(const Json& j, CpuLayout& v) {
    read_fields(j, v, json_fields_and_more(&v));
    if (const auto it = j.find("numa_nodes"); it != j.end() && it->is_object()) {
        for (const auto& [node, list] : it->items()) v.numa_nodes[std::stoi(node)] = list.get<std::string>();
    }
}

// The listed fields (host_types.hpp) and the CPUs a state is disabled on, each checked as "disabled_cpus".
void to_json(Json& j, const CpuIdleState& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["disabled_cpus"] = v.disabled_cpus;
}

void from_json(const Json& j, CpuIdleState& v) {
    read_fields(j, v, json_fields_and_more(&v));
    if (const auto cpus = j.find("disabled_cpus"); cpus != j.end() && cpus->is_array()) {
        for (const auto& cpu : *cpus) v.disabled_cpus.push_back(checked_integer<uint32_t>(cpu, "disabled_cpus"));
    }
}

// The listed fields (host_types.hpp), the CPU layout when it was read (it has CPUs) and the build that
// described the host when it has a version.
void to_json(Json& j, const HostInfo& v) {
    write_fields(j, v, json_fields_and_more(&v));
    if (!v.cpu_layout.cpus.empty()) j["cpu_layout"] = v.cpu_layout;
    if (!v.tool.version.empty()) j["tool"] = v.tool;
}

void from_json(const Json& j, HostInfo& v) {
    read_fields(j, v, json_fields_and_more(&v));
    if (const auto it = j.find("cpu_layout"); it != j.end() && it->is_object()) v.cpu_layout = it->get<CpuLayout>();
    if (const auto it = j.find("tool"); it != j.end() && it->is_object()) it->get_to(v.tool);
}

}  // namespace nm
