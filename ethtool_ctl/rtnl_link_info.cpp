#include "ethtool_ctl/rtnl_link_info.hpp"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "core/base/error.hpp"

namespace nm {
namespace {

std::string operstate_name(uint8_t state) {
    switch (state) {
        case IF_OPER_NOTPRESENT: return "notpresent";
        case IF_OPER_DOWN: return "down";
        case IF_OPER_LOWERLAYERDOWN: return "lowerlayerdown";
        case IF_OPER_TESTING: return "testing";
        case IF_OPER_DORMANT: return "dormant";
        case IF_OPER_UP: return "up";
        default: return "unknown";
    }
}

LinkCounters counters_of(nl::Bytes raw) {
    // Older kernels send a shorter struct; missing trailing fields stay zero.
    rtnl_link_stats64 s{};
    std::memcpy(&s, raw.data(), std::min(raw.size(), sizeof s));
    LinkCounters c;
    c.rx_packets = s.rx_packets;
    c.tx_packets = s.tx_packets;
    c.rx_bytes = s.rx_bytes;
    c.tx_bytes = s.tx_bytes;
    c.rx_errors = s.rx_errors;
    c.tx_errors = s.tx_errors;
    c.rx_dropped = s.rx_dropped;
    c.tx_dropped = s.tx_dropped;
    c.multicast = s.multicast;
    c.collisions = s.collisions;
    c.rx_length_errors = s.rx_length_errors;
    c.rx_over_errors = s.rx_over_errors;
    c.rx_crc_errors = s.rx_crc_errors;
    c.rx_frame_errors = s.rx_frame_errors;
    c.rx_fifo_errors = s.rx_fifo_errors;
    c.rx_missed_errors = s.rx_missed_errors;
    c.tx_aborted_errors = s.tx_aborted_errors;
    c.tx_carrier_errors = s.tx_carrier_errors;
    c.tx_fifo_errors = s.tx_fifo_errors;
    c.tx_heartbeat_errors = s.tx_heartbeat_errors;
    c.tx_window_errors = s.tx_window_errors;
    c.rx_nohandler = s.rx_nohandler;
    return c;
}

std::string hardware_address(nl::Bytes raw) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (const uint8_t b : raw) {
        if (!out.empty()) out += ':';
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
    }
    return out;
}

std::string link_kind(nl::Bytes linkinfo) {
    static constexpr nl::AttrPolicy kInfo[] = {{IFLA_INFO_KIND, nl::AttrType::String}};
    const auto attrs = nl::parse_attrs<IFLA_INFO_KIND>(linkinfo, kInfo, "link info");
    return attrs[IFLA_INFO_KIND] ? nl::attr_string(attrs[IFLA_INFO_KIND]) : "";
}

}  // namespace

RtnlLinkInfo decode_link_message(nl::Bytes message) {
    constexpr size_t kHeaders = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
    const auto* hdr = reinterpret_cast<const nlmsghdr*>(message.data());
    if (message.size() < kHeaders || hdr->nlmsg_len < kHeaders || hdr->nlmsg_type != RTM_NEWLINK) {
        throw Error(ErrorKind::Failed, "decode link message from the kernel: not an RTM_NEWLINK", std::make_error_code(std::errc::bad_message));
    }
    static constexpr nl::AttrPolicy kPolicy[] = {
        {IFLA_IFNAME, nl::AttrType::String},       {IFLA_MTU, nl::AttrType::U32},
        {IFLA_MIN_MTU, nl::AttrType::U32},         {IFLA_MAX_MTU, nl::AttrType::U32},
        {IFLA_OPERSTATE, nl::AttrType::U8},        {IFLA_STATS64, nl::AttrType::Binary},
        {IFLA_PERM_ADDRESS, nl::AttrType::Binary}, {IFLA_LINKINFO, nl::AttrType::Nested},
        {IFLA_CARRIER, nl::AttrType::U8},          {IFLA_CARRIER_DOWN_COUNT, nl::AttrType::U32},
    };
    const auto attrs = nl::parse_attrs<IFLA_PERM_ADDRESS>(message.subspan(kHeaders, hdr->nlmsg_len - kHeaders), kPolicy, "link");
    RtnlLinkInfo out;
    ifinfomsg ifi{};
    std::memcpy(&ifi, message.data() + NLMSG_HDRLEN, sizeof ifi);
    out.ifindex = ifi.ifi_index;
    if (attrs[IFLA_IFNAME]) out.name = nl::attr_string(attrs[IFLA_IFNAME]);
    if (attrs[IFLA_MTU]) out.mtu = nl::attr_u32(attrs[IFLA_MTU]);
    if (attrs[IFLA_MIN_MTU]) out.mtu_min = nl::attr_u32(attrs[IFLA_MIN_MTU]);
    if (attrs[IFLA_MAX_MTU]) out.mtu_max = nl::attr_u32(attrs[IFLA_MAX_MTU]);
    out.operstate = attrs[IFLA_OPERSTATE] ? operstate_name(nl::attr_u8(attrs[IFLA_OPERSTATE])) : "unknown";
    if (attrs[IFLA_STATS64]) out.counters = counters_of(nl::attr_payload(attrs[IFLA_STATS64]));
    // The kernel sends a permanent address only when the device has one (not all zeros): real NICs do.
    if (attrs[IFLA_PERM_ADDRESS]) out.perm_address = hardware_address(nl::attr_payload(attrs[IFLA_PERM_ADDRESS]));
    if (attrs[IFLA_LINKINFO]) out.kind = link_kind(nl::attr_payload(attrs[IFLA_LINKINFO]));
    out.link.admin_up = (ifi.ifi_flags & IFF_UP) != 0;
    // IFLA_CARRIER since 3.5; IFF_LOWER_UP says the same on older kernels.
    out.link.carrier = attrs[IFLA_CARRIER] ? nl::attr_u8(attrs[IFLA_CARRIER]) != 0 : (ifi.ifi_flags & IFF_LOWER_UP) != 0;
    out.link.operstate = out.operstate;
    if (attrs[IFLA_CARRIER_DOWN_COUNT]) out.link.carrier_down_count = nl::attr_u32(attrs[IFLA_CARRIER_DOWN_COUNT]);
    return out;
}

}  // namespace nm
