#include <catch2/catch.hpp>

#include <linux/ethtool.h>

#include <sstream>

#include "core/base/error.hpp"
#include "ethtool_ctl/ethtool_netlink.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "tests/unit/ethtool_ctl/fixture.hpp"

using nm::test::fixture_bytes;

namespace {

std::vector<std::string> names() { return nm::decode_string_set(fixture_bytes("strset_features"), ETH_SS_FEATURES); }

std::vector<std::string> resolve(const std::string& typed) { return nm::resolve_feature_name(typed, names(), "nm-a").kernel_names; }

// Renders rows the way ethtool 6.1 prints them (the CLI's text is checked against ethtool -k itself in
// the integration tests; here the rows and states are checked against a captured ethtool -k).
std::string render(const std::vector<std::string>& n, const nm::FeatureBits& bits) {
    std::map<std::string, nm::FeatureState> features;
    for (size_t i = 0; i < bits.size(); ++i) features[bits.names[i]] = {bits.active[i], bits.wanted[i], bits.fixed(i)};
    std::ostringstream out;
    out << "Features for nm-a:\n";
    for (const auto& row : nm::ethtool_k_rows(n)) {
        const auto st = nm::row_state(row, features);
        out << (row.indented ? "\t" : "") << row.name << ": " << (st.active ? "on" : "off");
        if (!row.group_header && st.fixed) out << " [fixed]";
        if (!row.group_header && !st.fixed && st.active != st.wanted) out << (st.wanted ? " [requested on]" : " [requested off]");
        out << '\n';
    }
    return out.str();
}

}  // namespace

TEST_CASE("ethtool's patterns match like flag_pattern_match", "[unit]") {
    CHECK(nm::feature_pattern_match("tx-tcp-segmentation", "tx-tcp*-segmentation"));
    CHECK(nm::feature_pattern_match("tx-tcp6-segmentation", "tx-tcp*-segmentation"));
    CHECK(nm::feature_pattern_match("tx-tcp-accecn-segmentation", "tx-tcp*-segmentation"));
    CHECK_FALSE(nm::feature_pattern_match("tx-udp-segmentation", "tx-tcp*-segmentation"));
    CHECK(nm::feature_pattern_match("tx-scatter-gather", "tx-scatter-gather*"));
    CHECK_FALSE(nm::feature_pattern_match("rx-gro-list", "rx-gro"));
    CHECK_FALSE(nm::feature_pattern_match("tx-tcp-segmentatio", "tx-tcp*-segmentation"));
}

TEST_CASE("Names resolve like ethtool -K against the captured string set", "[unit]") {
    using V = std::vector<std::string>;
    CHECK(resolve("tx") == V{"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp"});
    CHECK(resolve("tx-checksumming") == resolve("tx"));
    CHECK(resolve("rx") == V{"rx-checksum"});
    CHECK(resolve("rx-checksumming") == V{"rx-checksum"});
    CHECK(resolve("sg") == V{"tx-scatter-gather", "tx-scatter-gather-fraglist"});
    const auto tso = resolve("tso");
    CHECK(tso.size() == 5);
    CHECK(std::find(tso.begin(), tso.end(), "tx-tcp-accecn-segmentation") != tso.end());
    CHECK(resolve("tcp-segmentation-offload") == tso);
    CHECK(resolve("gso") == V{"tx-generic-segmentation"});
    CHECK(resolve("gro") == V{"rx-gro"});
    CHECK(resolve("generic-receive-offload") == V{"rx-gro"});
    CHECK(resolve("lro") == V{"rx-lro"});
    CHECK(resolve("rxvlan") == V{"rx-vlan-hw-parse"});
    CHECK(resolve("txvlan") == V{"tx-vlan-hw-insert"});
    CHECK(resolve("ntuple") == V{"rx-ntuple-filter"});
    CHECK(resolve("rxhash") == V{"rx-hashing"});
    CHECK(resolve("rx-gro-list") == V{"rx-gro-list"});
    CHECK(resolve("tx-udp-segmentation") == V{"tx-udp-segmentation"});
    CHECK(nm::resolve_feature_name("tso", names(), "nm-a").group);
    CHECK_FALSE(nm::resolve_feature_name("rx-gro-list", names(), "nm-a").group);
}

TEST_CASE("Unknown names are usage errors naming the feature and the interface", "[unit]") {
    try {
        resolve("turbo");
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        CHECK_THAT(e.what(), Catch::Contains("turbo") && Catch::Contains("nm-a"));
    }
    // UFO left the kernel in 4.14: the group exists in ethtool but stands for nothing here.
    CHECK_THROWS_WITH(resolve("ufo"), Catch::Contains("ufo") && Catch::Contains("nm-a"));
    CHECK_THROWS_AS(resolve(""), nm::Error);
}

TEST_CASE("The ethtool -k rows and states reproduce ethtool 6.1's output for the same reply", "[unit]") {
    const auto n = names();
    const auto bits = nm::decode_features(fixture_bytes("features_get_compact"), n);
    CHECK(render(n, bits) == nm::test::fixture_text("ethtool_k.txt"));

    std::map<std::string, nm::FeatureState> features;
    for (size_t i = 0; i < bits.size(); ++i) features[bits.names[i]] = {bits.active[i], bits.wanted[i], bits.fixed(i)};
    const auto view = nm::ethtool_k_view(n, features);
    CHECK(view.at("tx-checksumming").active);
    CHECK_FALSE(view.at("tx-checksumming").fixed);  // some members can change
    CHECK(view.at("large-receive-offload").fixed);
    CHECK(view.count("rx-lro") == 0);                // single-member groups show under the group name
    CHECK(view.count("tx-tcp6-segmentation") == 1);  // members of larger groups show by kernel name
    CHECK(view.count("udp-fragmentation-offload") == 0);
}
