#include "core/base/error.hpp"
#include "core/base/lab_codec.hpp"

namespace nm {

void to_json(Json& j, const LabTopology& v) { j = v == LabTopology::Bridge ? "bridge" : "pair"; }

void from_json(const Json& j, LabTopology& v) {
    const auto s = j.get<std::string>();
    if (s == "pair") {
        v = LabTopology::Pair;
    } else if (s == "bridge") {
        v = LabTopology::Bridge;
    } else {
        throw usage_error("topology: expected \"pair\" or \"bridge\", got \"" + s + "\"");
    }
}

void to_json(Json& j, const LabInterface& v) {
    j = Json{{"role", v.role}, {"netns", v.netns}, {"ifname", v.ifname}, {"ipv4", v.ipv4}, {"ipv6", v.ipv6}};
    if (!v.device_model.empty()) j["device_model"] = v.device_model;
    if (!v.driver.empty()) j["driver"] = v.driver;
    if (!v.mac.empty()) j["mac"] = v.mac;
}

void from_json(const Json& j, LabInterface& v) {
    j.at("role").get_to(v.role);
    j.at("netns").get_to(v.netns);
    j.at("ifname").get_to(v.ifname);
    j.at("ipv4").get_to(v.ipv4);
    j.at("ipv6").get_to(v.ipv6);
    v.device_model = j.value("device_model", "");
    v.driver = j.value("driver", "");
    v.mac = j.value("mac", "");
}

void to_json(Json& j, const VmInfo& v) {
    j = Json{{"emulator", v.emulator}, {"accel", v.accel}, {"virtualization", v.virtualization},
             {"kernel", v.kernel},     {"state_dir", v.state_dir}, {"pid", v.pid}};
}

void from_json(const Json& j, VmInfo& v) {
    j.at("emulator").get_to(v.emulator);
    j.at("accel").get_to(v.accel);
    j.at("virtualization").get_to(v.virtualization);
    v.kernel = j.value("kernel", "");
    v.state_dir = j.value("state_dir", "");
    v.pid = j.value("pid", 0);
}

void to_json(Json& j, const LabInfo& v) {
    j = Json{{"name", v.name}, {"topology", v.topology}, {"namespaces", v.namespaces}, {"interfaces", v.interfaces}};
    if (v.vm) j["vm"] = *v.vm;
}

void from_json(const Json& j, LabInfo& v) {
    j.at("name").get_to(v.name);
    j.at("topology").get_to(v.topology);
    j.at("namespaces").get_to(v.namespaces);
    j.at("interfaces").get_to(v.interfaces);
    if (const auto it = j.find("vm"); it != j.end() && it->is_object()) v.vm = it->get<VmInfo>();
}

}  // namespace nm
