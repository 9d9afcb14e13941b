#include "ethtool_ctl/capture.hpp"

#include "ethtool_ctl/ethtool_netlink.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/netns.hpp"
#include "ethtool_ctl/rtnl_socket.hpp"

namespace nm {

std::map<std::string, std::vector<uint8_t>> capture_replies(std::string_view netns, std::string_view ifname) {
    std::map<std::string, std::vector<uint8_t>> out;
    const auto rtnl = RtnlSocket::open(netns);
    rtnl.link_info(ifname, [&](nl::Bytes m) { out["rtnl_newlink"].assign(m.begin(), m.end()); });

    NetnsScope scope(netns);
    auto genl = EthtoolNetlink::open();
    std::string current;
    genl.socket().set_tap([&](nl::Bytes m) {
        // Keep the data messages, not the acks that follow them.
        if (m.size() >= sizeof(nlmsghdr) && reinterpret_cast<const nlmsghdr*>(m.data())->nlmsg_type >= NLMSG_MIN_TYPE) {
            out[current].assign(m.begin(), m.end());
        }
    });
    current = "strset_features";
    const auto names = genl.feature_names();
    current = "features_get_verbose";
    genl.features(ifname, false);
    current = "features_get_compact";
    const FeatureBits before = genl.features(ifname);
    current = "linkmodes_get";
    genl.link_modes(ifname);
    current = "channels_get";
    genl.channels(ifname);

    FeatureRequest off;
    FeatureRequest back;
    for (const auto& name : resolve_feature_name("tx", names, ifname).kernel_names) {
        const size_t bit = *before.index(name);
        if (before.fixed(bit)) continue;
        off[bit] = false;
        back[bit] = before.wanted[bit];
    }
    current = "features_set_reply_tx_off";
    genl.set_features(ifname, before, off);
    current = "scratch";
    const FeatureBits middle = genl.features(ifname);
    current = "features_set_reply_tx_back";
    genl.set_features(ifname, middle, back);
    out.erase("scratch");
    return out;
}

}  // namespace nm
