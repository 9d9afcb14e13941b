// The --allow-from matcher.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/host/cidr.hpp"

using Catch::Contains;

namespace {

nm::SocketAddress addr(const std::string& host) { return nm::resolve_address(host, 1); }

// How a dual-stack listener ([::]) sees an IPv4 client.
nm::SocketAddress mapped(const std::string& v4) { return nm::resolve_address("::ffff:" + v4, 1); }

/// The block `cidr` holds every address of `inside` and none of `outside`.
void check_block(const std::string& cidr, const std::vector<std::string>& inside, const std::vector<std::string>& outside) {
    const auto block = nm::Cidr::parse(cidr);
    for (const auto& host : inside) {
        INFO(host << " in " << cidr);
        CHECK(block.contains(addr(host)));
    }
    for (const auto& host : outside) {
        INFO(host << " not in " << cidr);
        CHECK_FALSE(block.contains(addr(host)));
    }
}

}  // namespace

TEST_CASE("Cidr matches IPv4 blocks at any prefix length, mapped addresses included", "[unit]") {
    // ::ffff:A is how a dual-stack listener ([::]) sees an IPv4 client; another family never matches.
    check_block("198.18.0.0/15", {"198.18.0.1", "198.19.255.255", "::ffff:198.18.0.1"},
                {"198.20.0.0", "198.17.255.255", "::ffff:10.0.0.1", "2001:2::1"});
    check_block("198.18.0.1", {"198.18.0.1"}, {"198.18.0.2"});
    check_block("0.0.0.0/0", {"203.0.113.9"}, {});
    check_block("198.18.0.77/24", {"198.18.0.1"}, {});  // host bits ignored
    check_block("198.18.0.0/31", {"198.18.0.1"}, {"198.18.0.2"});
}

TEST_CASE("Cidr matches IPv6 blocks", "[unit]") {
    check_block("2001:2::/48", {"2001:2::1", "2001:2:0:ffff::1"}, {"2001:2:1::1", "198.18.0.1"});
    check_block("2001:2::1/128", {"2001:2::1"}, {});
    check_block("2001:2::1/127", {}, {"2001:2::2"});
    check_block("::/0", {"2001:db8::1"}, {});
}

TEST_CASE("Cidr refuses what is not a block, naming the text, an empty list allows all", "[unit]") {
    CHECK_THROWS_WITH(nm::Cidr::parse("10.0.0.0/33"), Contains("--allow-from 10.0.0.0/33: prefix length must be 0..32"));
    CHECK_THROWS_WITH(nm::Cidr::parse("2001:2::/129"), Contains("0..128"));
    CHECK_THROWS_WITH(nm::Cidr::parse("10.0.0.0/"), Contains("prefix length"));
    CHECK_THROWS_WITH(nm::Cidr::parse("10.0.0.0/-1"), Contains("prefix length"));
    CHECK_THROWS_WITH(nm::Cidr::parse("host.example"), Contains("not an IPv4 or IPv6 address"));
    CHECK_THROWS_WITH(nm::Cidr::parse("10.0.0/8"), Contains("not an IPv4 or IPv6 address"));
    CHECK(nm::allowed_by({}, addr("203.0.113.9")));
    const std::vector<nm::Cidr> list{nm::Cidr::parse("198.18.0.0/15"), nm::Cidr::parse("2001:2::/48")};
    CHECK(nm::allowed_by(list, addr("2001:2::5")));
    CHECK(nm::allowed_by(list, mapped("198.18.3.4")));
    CHECK_FALSE(nm::allowed_by(list, addr("203.0.113.9")));
}

TEST_CASE("source_group: an IPv4 client is its address, an IPv6 client its /64 (or the prefix asked)", "[unit]") {
    CHECK(nm::source_group(addr("198.18.0.1"), 64) == "198.18.0.1");
    CHECK(nm::source_group(mapped("198.18.0.1"), 64) == "198.18.0.1");  // a dual-stack listener's view of IPv4
    CHECK(nm::source_group(addr("2001:2:0:36::1"), 64) == "2001:2:0:36::/64");
    CHECK(nm::source_group(addr("2001:2:0:36:ffff:1:2:3"), 64) == "2001:2:0:36::/64");
    CHECK(nm::source_group(addr("2001:2:0:37::1"), 64) == "2001:2:0:37::/64");
    CHECK(nm::source_group(addr("2001:2:0:36::1"), 128) == "2001:2:0:36::1/128");
    CHECK(nm::source_group(addr("2001:2:0:36::1"), 48) == "2001:2::/48");
    CHECK(nm::source_group(addr("2001:2:0:36::1"), 52) == "2001:2::/52");
    CHECK(nm::source_group(addr("2001:2:0:f036::1"), 52) == "2001:2:0:f000::/52");
}
