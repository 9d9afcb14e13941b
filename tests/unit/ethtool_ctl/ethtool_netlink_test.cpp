#include <catch2/catch.hpp>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <cstring>

#include "core/base/error.hpp"
#include "ethtool_ctl/ethtool_netlink.hpp"
#include "ethtool_ctl/netlink_socket.hpp"
#include "ethtool_ctl/rtnl_link_info.hpp"
#include "tests/unit/ethtool_ctl/fixture.hpp"

using nm::test::fixture_bytes;

namespace {

std::vector<std::string> names() { return nm::decode_string_set(fixture_bytes("strset_features"), ETH_SS_FEATURES); }

bool active(const nm::FeatureBits& b, const std::string& name) { return b.active.at(*b.index(name)); }

// Appends an attribute the decoder has never heard of (number 200) to a captured message.
std::vector<uint8_t> with_unknown_attr(std::vector<uint8_t> msg) {
    const uint8_t extra[] = {8, 0, 200, 0, 1, 2, 3, 4};
    msg.insert(msg.end(), std::begin(extra), std::end(extra));
    uint32_t len = 0;
    std::memcpy(&len, msg.data(), 4);
    len += sizeof extra;
    std::memcpy(msg.data(), &len, 4);
    return msg;
}

}  // namespace

TEST_CASE("The features string set of kernel 6.18 decodes to its names, by bit", "[unit]") {
    const auto n = names();
    REQUIRE(n.size() >= 60);
    CHECK(n.at(0) == "tx-scatter-gather");
    CHECK(std::find(n.begin(), n.end(), "tx-tcp-accecn-segmentation") != n.end());
    CHECK(std::find(n.begin(), n.end(), "rx-gro-list") != n.end());
    CHECK(std::count(n.begin(), n.end(), "tx-checksum-ipv4") == 1);
}

TEST_CASE("A captured FEATURES_GET reply decodes the same from compact and verbose bitsets", "[unit]") {
    const auto compact = nm::decode_features(fixture_bytes("features_get_compact"), names());
    const auto verbose = nm::decode_features(fixture_bytes("features_get_verbose"), names());
    CHECK(compact.hw == verbose.hw);
    CHECK(compact.wanted == verbose.wanted);
    CHECK(compact.active == verbose.active);
    CHECK(compact.nochange == verbose.nochange);
    // What `ethtool -k` printed for the same state (fixture ethtool_k.txt).
    CHECK(active(compact, "tx-checksum-ip-generic"));
    CHECK(active(compact, "tx-tcp-accecn-segmentation"));
    CHECK_FALSE(active(compact, "rx-gro"));
    CHECK(compact.fixed(*compact.index("tx-checksum-ipv4")));
    CHECK(compact.fixed(*compact.index("rx-lro")));
    CHECK_FALSE(compact.fixed(*compact.index("rx-gro")));
}

TEST_CASE("A FEATURES_SET reply's diffs give the side effects of tx off", "[unit]") {
    const auto before = nm::decode_features(fixture_bytes("features_get_compact"), names());
    const auto off = nm::decode_features_set_reply(fixture_bytes("features_set_reply_tx_off"), before);
    CHECK_FALSE(off.active_after.at(*before.index("tx-checksum-ip-generic")));
    CHECK_FALSE(off.active_after.at(*before.index("tx-tcp-segmentation")));
    CHECK_FALSE(off.active_after.at(*before.index("tx-tcp6-segmentation")));
    CHECK_FALSE(off.active_after.at(*before.index("tx-udp-segmentation")));
    CHECK(off.active_after.at(*before.index("tx-scatter-gather")));
    CHECK(off.active_after.at(*before.index("tx-generic-segmentation")));
    // Everything requested came out as requested: the kernel's wanted diff is empty.
    CHECK(std::none_of(off.wanted_differs.begin(), off.wanted_differs.end(), [](bool b) { return b; }));

    nm::FeatureBits middle = before;
    middle.active = off.active_after;
    const auto back = nm::decode_features_set_reply(fixture_bytes("features_set_reply_tx_back"), middle);
    CHECK(back.active_after == before.active);
}

TEST_CASE("Link modes, channels and the rtnetlink link message of a veth decode", "[unit]") {
    const auto modes = nm::decode_link_modes(fixture_bytes("linkmodes_get"));
    CHECK(modes.speed_mbps == 10000u);
    CHECK(modes.duplex == "full");
    const auto ch = nm::decode_channels(fixture_bytes("channels_get"));
    CHECK(ch.at("rx_max") == 2);
    CHECK(ch.at("tx_count") == 1);
    CHECK(ch.count("combined_max") == 0);
    const auto link = nm::decode_link_message(fixture_bytes("rtnl_newlink"));
    CHECK(link.name == "nm-a");
    CHECK(link.mtu == 1500);
    CHECK(link.mtu_min == 68);
    CHECK(link.mtu_max == 65535);
    CHECK(link.operstate == "up");
    CHECK(link.counters.tx_packets > 0);
    CHECK(link.ifindex > 0);
    CHECK(link.kind == "veth");        // IFLA_LINKINFO/IFLA_INFO_KIND
    CHECK(link.perm_address.empty());  // a veth has no IFLA_PERM_ADDRESS
}

TEST_CASE("The attribute parser skips attributes it does not know and rejects malformed ones", "[unit]") {
    const auto plain = nm::decode_features(fixture_bytes("features_get_compact"), names());
    const auto extended = nm::decode_features(with_unknown_attr(fixture_bytes("features_get_compact")), names());
    CHECK(plain.active == extended.active);
    CHECK(nm::decode_link_modes(with_unknown_attr(fixture_bytes("linkmodes_get"))).speed_mbps == 10000u);

    auto truncated = fixture_bytes("features_get_compact");
    truncated.resize(truncated.size() - 6);
    uint32_t len = static_cast<uint32_t>(truncated.size());
    std::memcpy(truncated.data(), &len, 4);
    CHECK_THROWS_AS(nm::decode_features(truncated, names()), nm::Error);

    // A known u32 attribute with a 1-byte payload is a type error, not a silent misread.
    std::vector<uint8_t> bad(NLMSG_HDRLEN + GENL_HDRLEN, 0);
    const uint8_t speed[] = {5, 0, ETHTOOL_A_LINKMODES_SPEED, 0, 7, 0, 0, 0};
    bad.insert(bad.end(), std::begin(speed), std::end(speed));
    len = static_cast<uint32_t>(bad.size());
    std::memcpy(bad.data(), &len, 4);
    CHECK_THROWS_WITH(nm::decode_link_modes(bad), Catch::Contains("bad length"));

    // A features reply whose bitsets disagree with the string set is refused.
    auto fewer = names();
    fewer.pop_back();
    CHECK_THROWS_AS(nm::decode_features(fixture_bytes("features_get_compact"), fewer), nm::Error);
}

TEST_CASE("The request builder cancels a nest that was never closed", "[unit]") {
    auto req = nm::nl::NlRequest::genl(20, ETHTOOL_MSG_FEATURES_GET, 1, 0);
    const auto base = req.bytes().size();
    {
        auto nest = req.nest(ETHTOOL_A_FEATURES_HEADER);
        req.put_strz(ETHTOOL_A_HEADER_DEV_NAME, "nm-a");
    }
    CHECK(req.bytes().size() == base);
    {
        auto nest = req.nest(ETHTOOL_A_FEATURES_HEADER);
        req.put_strz(ETHTOOL_A_HEADER_DEV_NAME, "nm-a");
        nest.close();
    }
    CHECK(req.bytes().size() == base + 4 + 12);
    CHECK_THROWS_AS(req.put_binary(1, std::string(20000, 'x').data(), 20000), nm::Error);
}
