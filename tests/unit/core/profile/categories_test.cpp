// The category table: globs, the shipped table's sorting of real kernel symbols, a bad table's errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "core/base/error.hpp"
#include "core/profile/categories.hpp"
#include "core/profile/profile_codec.hpp"

namespace {

std::string category_of(nm::profile::CategoryMatcher& m, const std::string& symbol) {
    const std::string* c = m.kernel_category(symbol);
    return c == nullptr ? "(none)" : *c;
}

std::string table_error(const std::string& text) {
    try {
        nm::parse_category_table(nm::Json::parse(text));
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("profile globs: * any run, ? one character, the whole name", "[unit]") {
    using nm::profile::glob_match;
    CHECK(glob_match("tcp_*", "tcp_sendmsg"));
    CHECK_FALSE(glob_match("tcp_*", "__tcp_push"));
    CHECK(glob_match("*_gro_*", "napi_gro_receive"));
    CHECK_FALSE(glob_match("*_gro_*", "cgroup_rstat_updated"));
    CHECK(glob_match("csum_?artial", "csum_partial"));
    CHECK(glob_match("*", ""));
    CHECK_FALSE(glob_match("a", ""));
    CHECK(glob_match("*a*b*c", "xxaxxbxxbxc"));
    CHECK_FALSE(glob_match("*a*b*c", "xxaxxbxxbx"));
}

TEST_CASE("profile categories: the shipped table sorts the network stack's symbols as the issue's categories", "[unit]") {
    const auto table = nm::profile::builtin_category_table();
    CHECK(table.source == "built-in");
    for (const char* c : {"copy", "checksum", "segmentation", "gro", "tcp_ip", "udp", "netdev", "skb", "memory", "locks", "scheduling", "syscall",
                          "epoll", "user", "idle", "other"}) {
        CHECK(std::find(table.categories.begin(), table.categories.end(), c) != table.categories.end());
    }
    nm::profile::CategoryMatcher m(table);
    CHECK(category_of(m, "rep_movs_alternative") == "copy");
    CHECK(category_of(m, "_copy_to_iter") == "copy");
    CHECK(category_of(m, "csum_partial") == "checksum");
    CHECK(category_of(m, "skb_checksum_help") == "checksum");
    CHECK(category_of(m, "csum_and_copy_from_iter_full") == "checksum");
    CHECK(category_of(m, "skb_segment") == "segmentation");
    CHECK(category_of(m, "tcp_gso_segment") == "segmentation");
    CHECK(category_of(m, "tcp4_gro_receive") == "gro");  // before tcp_ip: the first rule wins
    CHECK(category_of(m, "napi_gro_receive") == "gro");
    CHECK(category_of(m, "tcp_sendmsg_locked") == "tcp_ip");
    CHECK(category_of(m, "ip_finish_output2") == "tcp_ip");
    CHECK(category_of(m, "udp_sendmsg") == "udp");
    CHECK(category_of(m, "veth_xmit") == "netdev");
    CHECK(category_of(m, "__dev_queue_xmit") == "netdev");
    CHECK(category_of(m, "kfree_skb_reason") == "skb");
    CHECK(category_of(m, "kmem_cache_alloc_node") == "memory");
    CHECK(category_of(m, "_raw_spin_unlock_irqrestore") == "locks");
    CHECK(category_of(m, "__schedule") == "scheduling");
    CHECK(category_of(m, "entry_SYSCALL_64_after_hwframe") == "syscall");
    CHECK(category_of(m, "ep_poll") == "epoll");
    CHECK(category_of(m, "default_idle") == "idle");
    CHECK(category_of(m, "cgroup_rstat_updated") == "(none)");
}

TEST_CASE("profile categories: a bad table is refused with its JSON pointer, --profile-categories reads a file", "[unit]") {
    CHECK(table_error(R"([1])").find("/: expected a category table") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "user", "idle", "other"], "rule": []})").find("/rule: unknown key") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "idle", "other"], "rules": []})").find("must list \"user\"") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "Copy", "user", "idle", "other"], "rules": []})").find("/categories/1") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "user", "idle", "other"], "rules": [{"category": "cpy", "match": "x*"}]})")
              .find("/rules/0/category: expected one of the listed categories (\"copy\"") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "user", "idle", "other"], "rules": [{"category": "copy", "match": []}]})")
              .find("/rules/0/match: expected at least one pattern") != std::string::npos);
    CHECK(table_error(R"({"categories": ["copy", "user", "idle", "other"], "rules": [{"category": "user", "match": "x"}]})")
              .find("/rules/0/category: \"user\"") != std::string::npos);

    const std::string path = "/tmp/nm-profile-categories-" + std::to_string(::getpid()) + ".json";
    {
        std::ofstream out(path);
        out << R"({"categories": ["mine", "user", "idle", "other"], "rules": [{"category": "mine", "match": ["tcp_*", "ip_*"]}]})";
    }
    const auto t = nm::profile::load_category_table(path);
    CHECK(t.source == path);
    nm::profile::CategoryMatcher m(t);
    CHECK(category_of(m, "tcp_ack") == "mine");
    CHECK(category_of(m, "rep_movs_alternative") == "(none)");
    {
        std::ofstream out(path);
        out << "{not json";
    }
    try {
        nm::profile::load_category_table(path);
        FAIL("a file that is not JSON was accepted");
    } catch (const nm::Error& e) {
        CHECK(std::string(e.what()).find(path + ": not valid JSON") != std::string::npos);
    }
    std::remove(path.c_str());
    CHECK_THROWS_WITH(nm::profile::load_category_table(path), Catch::Contains("--profile-categories " + path + ": cannot be read"));
}
