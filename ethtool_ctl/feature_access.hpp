#pragma once
// Reading and setting netdev features, whichever way the kernel offers: ethtool genetlink or the legacy
// SIOCETHTOOL ioctl. Both produce the same value, FeatureBits, indexed by the kernel's "features" string
// set as the running kernel defines it (never a table of bit positions).
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nm {

/// Every netdev feature of one interface, by bit of the kernel's ETH_SS_FEATURES string set.
struct FeatureBits {
    std::vector<std::string> names;  ///< names[i] is the kernel's name of bit i
    std::vector<bool> hw;            ///< changeable (ETHTOOL_A_FEATURES_HW / ethtool_get_features_block.available)
    std::vector<bool> wanted;        ///< requested (WANTED / requested)
    std::vector<bool> active;        ///< in effect (ACTIVE / active)
    std::vector<bool> nochange;      ///< never changeable (NOCHANGE / never_changed)

    size_t size() const noexcept { return names.size(); }
    /// True when the feature cannot be changed, as `ethtool -k` prints "[fixed]".
    bool fixed(size_t i) const { return !hw.at(i) || nochange.at(i); }
    /// Bit of kernel feature `name`, if the kernel has it.
    std::optional<size_t> index(std::string_view name) const;
};

/// Bits to change and the value each should be wanted at.
using FeatureRequest = std::map<size_t, bool>;

/// What the kernel did with a FeatureRequest.
struct FeatureSetResult {
    std::vector<bool> active_after;    ///< active state of every bit after the change
    std::vector<bool> wanted_differs;  ///< requested bits whose result differs from the request (kernel's diff)
};

/// One way of reaching the kernel's features. Implementations throw nm::Error; an Error whose code is
/// EOPNOTSUPP means "this way is not available here", which is what the fallback decision looks at.
class FeatureAccess {
public:
    virtual ~FeatureAccess() = default;
    /// "netlink" or "ioctl".
    virtual std::string path() const = 0;
    virtual FeatureBits read(std::string_view ifname) = 0;
    /// Sends the whole request at once; `before` is the state read just before (for the diff).
    virtual FeatureSetResult set(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request) = 0;
};

/// Features as read, and the access that read them (use the same one to set them).
struct FeatureReading {
    FeatureAccess* access = nullptr;
    FeatureBits bits;
};

/// THE fallback decision, made here and nowhere else: read through genetlink unless `force_ioctl`;
/// switch to the ioctl path only when genetlink is missing or answers EOPNOTSUPP (getting `netlink`
/// may itself throw that when the family is absent). Any other error propagates unchanged. When the
/// ioctl path answers EOPNOTSUPP too, throws nm::Error (Refused) saying neither way works on `ifname`.
FeatureReading read_features(const std::function<FeatureAccess&()>& netlink, FeatureAccess& ioctl, bool force_ioctl, std::string_view ifname);

}  // namespace nm
