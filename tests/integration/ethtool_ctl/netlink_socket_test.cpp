#include <catch2/catch.hpp>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include "core/base/error.hpp"
#include "ethtool_ctl/netlink_socket.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

TEST_CASE("A refused genetlink request carries errno and the kernel's extended ack text", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::NetnsScope scope(lab.client().netns);
    auto sock = nm::nl::NetlinkSocket::open(NETLINK_GENERIC);
    const uint16_t family = nm::nl::resolve_genl_family(sock, ETHTOOL_GENL_NAME);
    CHECK(family >= GENL_MIN_ID);

    auto req = nm::nl::NlRequest::genl(family, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    auto header = req.nest(ETHTOOL_A_FEATURES_HEADER);
    req.put_strz(ETHTOOL_A_HEADER_DEV_NAME, "nm-zz");
    header.close();
    try {
        sock.transact(req, [](nm::nl::Bytes) { FAIL("no data expected"); });
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.code().value() == ENODEV);
        CHECK_FALSE(e.context().extack.empty());
        CHECK_THAT(e.what(), Catch::Contains("kernel: \""));
    }
    // The socket stays usable after an error: sequence numbers move on, the next request is answered.
    auto ok = nm::nl::NlRequest::genl(family, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    auto h2 = ok.nest(ETHTOOL_A_FEATURES_HEADER);
    ok.put_strz(ETHTOOL_A_HEADER_DEV_NAME, lab.client().ifname);
    h2.close();
    int replies = 0;
    sock.transact(ok, [&](nm::nl::Bytes) { ++replies; });
    CHECK(replies == 1);

    CHECK_THROWS_WITH(nm::nl::resolve_genl_family(sock, "no-such-family"), Catch::Contains("not in this kernel"));
}
