#pragma once
// The parts of an RTM_NEWLINK message libnl-route does not expose (IFLA_MIN_MTU, IFLA_MAX_MTU) together
// with the ones it does, decoded by one pure function so tests can feed it a captured message.
#include <cstdint>
#include <string>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/netlink_attrs.hpp"

namespace nm {

/// What rtnetlink says about one link.
struct RtnlLinkInfo {
    int ifindex = 0;
    std::string name;
    uint32_t mtu = 0;
    uint32_t mtu_min = 0;      ///< IFLA_MIN_MTU (0 when the kernel sends none)
    uint32_t mtu_max = 0;      ///< IFLA_MAX_MTU (0 when the kernel sends none)
    std::string operstate;     ///< IFLA_OPERSTATE as `ip link` words: "up", "down", "unknown", ...
    std::string perm_address;  ///< IFLA_PERM_ADDRESS as "aa:bb:..."; "" when the kernel sends none (veth, dummy)
    std::string kind;          ///< IFLA_LINKINFO/IFLA_INFO_KIND ("veth", "bridge"); "" for a physical device
    LinkCounters counters;     ///< IFLA_STATS64
    CarrierState link;         ///< IFF_UP, IFLA_CARRIER, the operstate and IFLA_CARRIER_DOWN_COUNT
};

/// Decodes one RTM_NEWLINK message (nlmsghdr, ifinfomsg, IFLA_* attributes). Throws nm::Error (Failed)
/// when it is malformed.
RtnlLinkInfo decode_link_message(nl::Bytes message);

}  // namespace nm
