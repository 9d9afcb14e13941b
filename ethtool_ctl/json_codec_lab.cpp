// JSON of the lab's topology word; the lab, its interfaces and its VM are their field lists' (lab_types.hpp).
#include "core/base/error.hpp"
#include "ethtool_ctl/lab_codec.hpp"

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

}  // namespace nm
