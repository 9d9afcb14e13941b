#include "ethtool_ctl/lab_types.hpp"

#include "core/base/error.hpp"

namespace nm {

const LabInterface& LabInfo::by_role(const std::string& role) const {
    for (const auto& itf : interfaces) {
        if (itf.role == role) return itf;
    }
    throw usage_error("lab " + name + " has no interface with role " + role);
}

std::string strip_prefix(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

}  // namespace nm
