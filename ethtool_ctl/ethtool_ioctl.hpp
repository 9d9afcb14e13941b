#pragma once
// The legacy SIOCETHTOOL ioctl: the fallback for features on kernels without ethtool netlink, and the
// source of driver info (ETHTOOL_GDRVINFO). The transport is a small interface so a scripted fake can
// answer (or refuse with EOPNOTSUPP) in unit tests; the encoding and decoding above it is the real code.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/unique_fd.hpp"
#include "core/device/device_types.hpp"
#include "ethtool_ctl/ethtool_netlink.hpp"
#include "ethtool_ctl/feature_access.hpp"

namespace nm {

/// Carries one SIOCETHTOOL command: `data` points at the command struct (its first u32 is the ETHTOOL_*
/// command), `len` is the size of the buffer behind it. Returns the ioctl's non-negative result; throws
/// nm::Error carrying the errno on failure (Usage for an unknown interface).
class EthtoolIoctl {
public:
    virtual ~EthtoolIoctl() = default;
    virtual int call(std::string_view ifname, void* data, size_t len) = 0;
};

/// The real transport: an AF_INET datagram socket opened in the calling thread's namespace.
class SiocEthtool : public EthtoolIoctl {
public:
    /// Throws nm::Error when the socket cannot be opened.
    SiocEthtool();
    int call(std::string_view ifname, void* data, size_t len) override;

private:
    UniqueFd sock_;
};

/// ETHTOOL_GDRVINFO: driver, version, firmware, bus info.
DriverInfo ioctl_driver_info(EthtoolIoctl& io, std::string_view ifname);

/// ETHTOOL_GSET: speed and duplex, for when ethtool netlink is missing or the ioctl path is forced.
LinkModes ioctl_link_modes(EthtoolIoctl& io, std::string_view ifname);

/// FeatureAccess over ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS (names) and ETHTOOL_GFEATURES/SFEATURES.
class IoctlFeatures : public FeatureAccess {
public:
    explicit IoctlFeatures(EthtoolIoctl& io) : io_(io) {}
    std::string path() const override { return "ioctl"; }
    FeatureBits read(std::string_view ifname) override;
    /// SFEATURES has no diff reply: the result is what GFEATURES reads back afterwards.
    FeatureSetResult set(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request) override;

private:
    EthtoolIoctl& io_;
};

}  // namespace nm
