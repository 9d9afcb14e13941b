#include "ethtool_ctl/feature_access.hpp"

#include <algorithm>
#include <cerrno>

#include "core/base/error.hpp"

namespace nm {
namespace {

bool not_supported(const Error& e) { return e.code().value() == EOPNOTSUPP; }

}  // namespace

std::optional<size_t> FeatureBits::index(std::string_view name) const {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return std::nullopt;
    return static_cast<size_t>(it - names.begin());
}

FeatureReading read_features(const std::function<FeatureAccess&()>& netlink, FeatureAccess& ioctl, bool force_ioctl, std::string_view ifname) {
    if (!force_ioctl) {
        try {
            FeatureAccess& access = netlink();
            return {&access, access.read(ifname)};
        } catch (const Error& e) {
            // Only "not available" switches paths: a permission problem or an unknown interface would
            // fail the same way over ioctl and hide the real message.
            if (!not_supported(e)) throw;
        }
    }
    try {
        return {&ioctl, ioctl.read(ifname)};
    } catch (const Error& e) {
        if (!not_supported(e)) throw;
        throw Error(ErrorKind::Refused, "read features: neither ethtool netlink nor the SIOCETHTOOL ioctl is supported", e.code(),
                    {std::string(ifname), "features", ""});
    }
}

}  // namespace nm
