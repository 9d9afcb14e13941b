#include "ethtool_ctl/netlink_device_control.hpp"

#include <netlink/socket.h>

#include <cerrno>

#include "core/base/error.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/interface_system.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {

struct NetlinkDeviceControl::Plan {
    FeatureRequest request;
    std::map<size_t, std::string> typed;  ///< bit -> the name the user typed for it
};

namespace {

// Sockets must be created inside the namespace; the scope is only needed while they are opened.
std::optional<EthtoolNetlink> open_genl(const std::string& netns, std::exception_ptr& error) {
    NetnsScope scope(netns);
    try {
        return EthtoolNetlink::open();
    } catch (const Error&) {
        error = std::current_exception();
        return std::nullopt;
    }
}

// The namespace the rtnetlink socket really lives in. SIOCGSKNS says so exactly but needs CAP_NET_ADMIN;
// without it (`show` as a user) the namespace file is looked at instead.
NetnsId netns_of(const RtnlSocket& rtnl, const std::string& netns) {
    if (const auto id = socket_netns_id(nl_socket_get_fd(rtnl.get()))) return *id;
    NetnsScope scope(netns);
    return current_netns_id();
}

SiocEthtool open_ioctl(const std::string& netns) {
    NetnsScope scope(netns);
    return SiocEthtool();
}

std::string where(std::string_view ifname, const std::string& netns) {
    return netns.empty() ? std::string(ifname) : std::string(ifname) + " (netns " + netns + ")";
}

void check_mtu_range(std::string_view ifname, const std::string& netns, uint32_t mtu, const RtnlLinkInfo& link) {
    const bool below = link.mtu_min != 0 && mtu < link.mtu_min;
    const bool above = link.mtu_max != 0 && mtu > link.mtu_max;
    if (below || above) {
        throw usage_error("set mtu=" + std::to_string(mtu) + " on " + where(ifname, netns) + ": outside the device's range " +
                          std::to_string(link.mtu_min) + ".." + std::to_string(link.mtu_max));
    }
}

SettingOutcome outcome_of(bool fixed, bool requested, bool before, bool after) {
    if (before == requested) return after == requested ? SettingOutcome::AlreadySet : SettingOutcome::Unsupported;
    if (fixed) return SettingOutcome::Fixed;
    return after == requested ? SettingOutcome::Applied : SettingOutcome::Unsupported;
}

}  // namespace

NetlinkDeviceControl::NetlinkDeviceControl(std::string netns, DeviceControlOptions options)
    : netns_(std::move(netns)),
      options_(options),
      rtnl_(RtnlSocket::open(netns_)),
      netns_id_(netns_of(rtnl_, netns_)),
      genl_(open_genl(netns_, genl_error_)),
      ioctl_(open_ioctl(netns_)),
      ioctl_features_(ioctl_) {
    if (genl_) netlink_features_ = std::make_unique<NetlinkFeatures>(*genl_);
}

void NetlinkDeviceControl::set_tap(const nl::MessageHandler& tap) {
    tap_ = tap;
    if (genl_) genl_->socket().set_tap(tap);
}

FeatureReading NetlinkDeviceControl::read_feature_bits(std::string_view ifname) {
    const auto netlink = [this]() -> FeatureAccess& {
        if (!netlink_features_) std::rethrow_exception(genl_error_);
        return *netlink_features_;
    };
    return read_features(netlink, ioctl_features_, options_.force_ioctl, ifname);
}

LinkState NetlinkDeviceControl::read(std::string_view ifname) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname, tap_ ? std::function<void(nl::Bytes)>(tap_) : nullptr);
    LinkState state;
    state.name = std::string(ifname);
    state.netns = netns_;
    state.mtu = link.mtu;
    state.mtu_min = link.mtu_min;
    state.mtu_max = link.mtu_max;
    state.operstate = link.operstate;
    state.counters = link.counters;
    state.identity.netns_dev = netns_id_.dev;
    state.identity.netns_ino = netns_id_.ino;
    state.identity.ifindex = link.ifindex;
    state.identity.perm_address = link.perm_address;
    state.identity.kind = link.kind;

    const FeatureBits bits = read_feature_bits(ifname).bits;
    for (size_t i = 0; i < bits.size(); ++i) {
        if (bits.names[i].empty()) continue;
        state.feature_order.push_back(bits.names[i]);
        state.features[bits.names[i]] = FeatureState{bits.active[i], bits.wanted[i], bits.fixed(i)};
    }
    try {
        state.driver = ioctl_driver_info(ioctl_, ifname);
    } catch (const Error& e) {
        if (e.code().value() != EOPNOTSUPP) throw;
    }
    // Speed and duplex follow the features' path: the ioctl when it is forced or genetlink is missing.
    try {
        const LinkModes modes = (genl_ && !options_.force_ioctl) ? genl_->link_modes(ifname) : ioctl_link_modes(ioctl_, ifname);
        state.speed_mbps = modes.speed_mbps;
        state.duplex = modes.duplex;
    } catch (const Error& e) {
        if (e.code().value() != EOPNOTSUPP) throw;
    }
    if (genl_) {
        state.rings = genl_->rings(ifname);
        state.coalesce = genl_->coalesce(ifname);
        state.channels = genl_->channels(ifname);
    }
    return state;
}

std::optional<InterfaceSystem> NetlinkDeviceControl::describe(std::string_view ifname) {
    try {
        return read_interface_system(netns_, ifname);
    } catch (const Error&) {
        return std::nullopt;
    }
}

std::vector<std::string> NetlinkDeviceControl::link_names() {
    std::vector<std::string> names;
    for (const auto& link : rtnl_.list_links()) names.push_back(link.name);
    return names;
}

NetlinkDeviceControl::Plan NetlinkDeviceControl::plan(std::string_view ifname, const LinkSettings& wanted,
                                                      const FeatureBits& bits, const RtnlLinkInfo& link) const {
    if (wanted.mtu) check_mtu_range(ifname, netns_, *wanted.mtu, link);
    Plan plan;
    for (const auto& [typed, on] : wanted.features) {
        const ResolvedFeature resolved = resolve_feature_name(typed, bits.names, where(ifname, netns_));
        std::vector<size_t> targets;
        for (const auto& name : resolved.kernel_names) targets.push_back(*bits.index(name));
        // A group stands for its changeable members (`tx` on veth includes the fixed tx-checksum-ipv4);
        // only a group whose members are all fixed asks the fixed ones, and gets them reported Fixed.
        if (resolved.group) {
            std::vector<size_t> changeable;
            for (size_t bit : targets) {
                if (!bits.fixed(bit)) changeable.push_back(bit);
            }
            if (!changeable.empty()) targets = changeable;
        }
        for (size_t bit : targets) {
            const auto [it, inserted] = plan.request.emplace(bit, on);
            if (!inserted && it->second != on) {
                throw usage_error("features " + plan.typed[bit] + " and " + typed + " ask opposite states of " +
                                  bits.names[bit] + " on " + where(ifname, netns_));
            }
            plan.typed.emplace(bit, typed);
        }
    }
    return plan;
}

void NetlinkDeviceControl::validate(std::string_view ifname, const LinkSettings& wanted) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname);
    const FeatureBits bits = wanted.features.empty() ? FeatureBits{} : read_feature_bits(ifname).bits;
    plan(ifname, wanted, bits, link);
}

ApplyReport NetlinkDeviceControl::apply(std::string_view ifname, const LinkSettings& wanted) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname);
    FeatureReading reading = read_feature_bits(ifname);
    const FeatureBits& before = reading.bits;
    // Everything is checked before the first change, so bad input changes nothing.
    const Plan planned = plan(ifname, wanted, before, link);

    ApplyReport report;
    report.ifname = std::string(ifname);
    report.netns = netns_;
    report.path = reading.access->path();

    const bool change_mtu = wanted.mtu && *wanted.mtu != link.mtu;
    if (change_mtu) rtnl_.set_mtu(ifname, *wanted.mtu);

    FeatureSetResult result{before.active, std::vector<bool>(before.size(), false)};
    if (!planned.request.empty()) {
        try {
            result = reading.access->set(ifname, before, planned.request);
        } catch (...) {
            // Leave the interface as it was found: the MTU went first, so take it back.
            if (change_mtu) {
                try {
                    rtnl_.set_mtu(ifname, link.mtu);
                } catch (const Error&) {
                    // The original error is the one to report; the journal still holds the MTU.
                }
            }
            throw;
        }
    }

    const FeatureBits after = reading.access->read(ifname);
    const RtnlLinkInfo link_after = rtnl_.link_info(ifname);
    for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
        const auto req = planned.request.find(i);
        if (req != planned.request.end()) {
            FeatureChange c;
            c.name = before.names[i];
            c.requested_as = planned.typed.at(i);
            c.requested = req->second;
            c.before = before.active[i];
            c.after = after.active[i];
            // The kernel's reply is the truth of what the request did; the read-back must agree with it.
            const bool did = result.active_after[i] == req->second && after.active[i] == req->second;
            c.outcome = outcome_of(before.fixed(i), req->second, before.active[i], did ? req->second : !req->second);
            report.features.push_back(c);
        } else if (before.active[i] != after.active[i] || before.active[i] != result.active_after[i]) {
            FeatureChange c;
            c.name = before.names[i];
            c.before = before.active[i];
            c.after = after.active[i];
            c.outcome = SettingOutcome::SideEffect;
            report.features.push_back(c);
        }
        if (!after.names[i].empty()) report.active_after[after.names[i]] = after.active[i];
    }
    if (wanted.mtu) {
        MtuChange m;
        m.requested = *wanted.mtu;
        m.before = link.mtu;
        m.after = link_after.mtu;
        m.outcome = !change_mtu ? SettingOutcome::AlreadySet
                    : link_after.mtu == *wanted.mtu ? SettingOutcome::Applied
                                                    : SettingOutcome::Unsupported;
        report.mtu = m;
    }
    report.mtu_after = link_after.mtu;
    return report;
}

}  // namespace nm
