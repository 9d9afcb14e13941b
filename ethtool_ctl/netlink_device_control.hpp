#pragma once
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/ethtool_ioctl.hpp"
#include "ethtool_ctl/ethtool_netlink.hpp"
#include "ethtool_ctl/netns.hpp"
#include "ethtool_ctl/qdisc.hpp"
#include "ethtool_ctl/rtnl_socket.hpp"

namespace nm {

/// How NetlinkDeviceControl reaches the kernel.
struct DeviceControlOptions {
    bool force_ioctl = false;  ///< read and set features over SIOCETHTOOL even where ethtool netlink works
};

/// The real DeviceControl for one network namespace: ethtool genetlink (features, link modes, rings,
/// coalescing, channels) with the SIOCETHTOOL fallback for features, SIOCETHTOOL for driver info, and
/// rtnetlink (libnl-route) for MTU, its range, operstate and counters. All sockets are opened in the
/// namespace at construction, so the object acts there from any thread. Not copyable or movable.
class NetlinkDeviceControl : public DeviceControl {
public:
    /// `netns` "" = the caller's namespace. Throws nm::Error (Usage) when the namespace does not exist.
    explicit NetlinkDeviceControl(std::string netns = {}, DeviceControlOptions options = {});
    NetlinkDeviceControl(const NetlinkDeviceControl&) = delete;
    NetlinkDeviceControl& operator=(const NetlinkDeviceControl&) = delete;

    /// Fills the identity too: the namespace the sockets were opened in, ifindex, permanent address, kind.
    LinkState read(std::string_view ifname) override;
    std::vector<std::string> link_names() override;
    /// Also checks the tuning part: CPU lists against this host's CPUs, coalescing names, and the qdisc
    /// against the kernel (probe_qdisc, in a scratch namespace).
    void validate(std::string_view ifname, const LinkSettings& wanted) override;
    std::string unsupported(std::string_view ifname, const LinkSettings& wanted) override;
    /// MTU first (through rtnetlink, put back if the feature change then fails), then every feature in
    /// one request, then the tuning (channels, rings, coalescing, NAPI, RPS, XPS, IRQs, sysctls, qdisc),
    /// then a read-back. A fixed feature asked to change is reported Fixed, not thrown.
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override;
    /// read_interface_system in this control's namespace; none (and no error) when it fails.
    std::optional<InterfaceSystem> describe(std::string_view ifname) override;
    std::optional<CarrierState> carrier(std::string_view ifname) override;

    const std::string& netns() const noexcept { return netns_; }

    /// Lets `tap` see every raw netlink reply (genetlink and the rtnetlink link message), for capturing
    /// test fixtures.
    void set_tap(const nl::MessageHandler& tap);

private:
    struct Plan;
    FeatureReading read_feature_bits(std::string_view ifname);
    TuningState read_tuning(std::string_view ifname, int32_t ifindex, const LinkState& base);
    void apply_tuning(std::string_view ifname, int32_t ifindex, const TuningRequest& wanted, ApplyReport& report, const LinkState& before);
    Plan plan(std::string_view ifname, const LinkSettings& wanted, const FeatureBits& bits, const RtnlLinkInfo& link) const;

    std::string netns_;
    DeviceControlOptions options_;
    RtnlSocket rtnl_;
    NetnsId netns_id_;  ///< where rtnl_ (and every socket here) was opened
    std::optional<EthtoolNetlink> genl_;
    std::exception_ptr genl_error_;  ///< why genl_ is empty (EOPNOTSUPP when the family is missing)
    std::unique_ptr<NetlinkFeatures> netlink_features_;
    SiocEthtool ioctl_;
    QdiscControl qdisc_;
    IoctlFeatures ioctl_features_;
    nl::MessageHandler tap_;
};

}  // namespace nm
