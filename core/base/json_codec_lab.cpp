#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"

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
}

void from_json(const Json& j, LabInterface& v) {
    j.at("role").get_to(v.role);
    j.at("netns").get_to(v.netns);
    j.at("ifname").get_to(v.ifname);
    j.at("ipv4").get_to(v.ipv4);
    j.at("ipv6").get_to(v.ipv6);
}

void to_json(Json& j, const LabInfo& v) {
    j = Json{{"name", v.name}, {"topology", v.topology}, {"namespaces", v.namespaces}, {"interfaces", v.interfaces}};
}

void from_json(const Json& j, LabInfo& v) {
    j.at("name").get_to(v.name);
    j.at("topology").get_to(v.topology);
    j.at("namespaces").get_to(v.namespaces);
    j.at("interfaces").get_to(v.interfaces);
}

}  // namespace nm
