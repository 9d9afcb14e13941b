// The qdisc tree value (issue 36): its canonical JSON, the allow-list check every tree passes before it
// is rebuilt, and what restore asks for (tuning_back_to) from trees and from older journals' summaries.
#include <catch2/catch.hpp>

#include "core/device/qdisc_tree.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/device/tuning_types.hpp"

using nm::Json;
using nm::QdiscTree;
using nm::TcNode;
using nm::TcObject;

namespace {

constexpr uint32_t kRoot = 0xFFFFFFFFU;

QdiscTree htb_tree() {
    QdiscTree t;
    t.qdiscs.push_back(TcNode{"htb", 0x10000, kRoot, 0, 0, 0, {{"r2q", 10}, {"default", 0x20}, {"direct_qlen", 1000}}, {}});
    t.qdiscs.push_back(TcNode{"pfifo", 0x100000, 0x10010, 0, 0, 0, {{"limit", 300}}, {}});
    t.classes.push_back(TcNode{"htb", 0x10010, kRoot, 0, 0, 0, {{"rate", 6250000}, {"ceil", 12500000}, {"prio", 1}}, {}});
    t.filters.push_back(
        TcNode{"u32", 0x80000800, 0x10000, 0x0800, 1, 0, {{"classid", 0x10010}, {"sel_flags", 1}}, {{"keys", {0xc6120002, 0xffffffff, 16, 0}}}});
    nm::canonicalize(t);
    return t;
}

}  // namespace

TEST_CASE("A qdisc tree round-trips through its JSON: named integer options, no bytes, canonical order", "[unit]") {
    const QdiscTree t = htb_tree();
    const Json j = t;
    CHECK(j.dump().find("hex") == std::string::npos);
    CHECK(j.at("filters").at(0).at("options").at("keys") == Json::array({0xc6120002U, 0xffffffffU, 16, 0}));
    CHECK(j.at("qdiscs").at(0).at("options").at("limit") == 300);  // sorted by parent: the leaf (1:10) before the root (root)
    CHECK(j.get<QdiscTree>() == t);
    // Read in any order, it compares equal: the reader sorts.
    Json shuffled = j;
    std::swap(shuffled["qdiscs"][0], shuffled["qdiscs"][1]);
    CHECK(shuffled.get<QdiscTree>() == t);
    // A float or a negative where an integer goes is refused, not narrowed.
    Json bad = j;
    bad["qdiscs"][0]["options"]["limit"] = -1;
    CHECK_THROWS(bad.get<QdiscTree>());
    bad = j;
    bad["filters"][0]["options"]["keys"][0] = 1.5;
    CHECK_THROWS(bad.get<QdiscTree>());
}

TEST_CASE("check_qdisc_tree: allow-listed kinds and options only, one root, no node twice, and it names the node", "[unit]") {
    CHECK(nm::check_qdisc_tree(htb_tree()).empty());
    QdiscTree t = htb_tree();
    t.qdiscs[0].kind = "netem";
    CHECK(nm::check_qdisc_tree(t) == "qdisc netem 10: parent 1:10: the kind is not on nicmatrix's allow-list");
    t = htb_tree();
    t.qdiscs[1].options["peakrate"] = 1;
    CHECK(nm::check_qdisc_tree(t) == "qdisc htb 1: root: option peakrate is not one nicmatrix can set");
    t = htb_tree();
    t.filters[0].kind = "bpf";
    CHECK(nm::check_qdisc_tree(t) == "filter bpf parent 1: pref 1 handle 2147485696: the kind is not on nicmatrix's allow-list");
    t = htb_tree();
    t.filters[0].lists["keys"].push_back(1);
    CHECK(nm::check_qdisc_tree(t) == "filter u32 parent 1: pref 1 handle 800::800: keys must be 4 numbers a key");
    t = htb_tree();
    t.qdiscs.push_back(t.qdiscs[1]);
    CHECK(nm::check_qdisc_tree(t) == "qdisc htb 1: root: twice in the tree");
    t = htb_tree();
    t.qdiscs.erase(t.qdiscs.begin() + 1);
    CHECK(nm::check_qdisc_tree(t) == "a qdisc tree needs exactly one root qdisc, this one has 0");
    CHECK(nm::qdisc_kind_allowed("htb"));
    CHECK_FALSE(nm::qdisc_kind_allowed("netem"));
    CHECK_FALSE(nm::qdisc_kind_allowed("pfifo_head_drop"));
    CHECK(nm::filter_kind_allowed("u32"));
    CHECK_FALSE(nm::filter_kind_allowed("flower"));
}

TEST_CASE("Restore asks for the tree when it moved, never for a refused one, and an old journal's default root still comes back", "[unit]") {
    nm::TuningState original, now;
    original.qdisc_tree = htb_tree();
    now.qdisc_tree = htb_tree();
    CHECK_FALSE(nm::tuning_back_to(original, now).qdisc_original);
    QdiscTree tbf;
    tbf.qdiscs.push_back(TcNode{"tbf", 0x80010000, kRoot, 0, 0, 0, {{"rate", 125000000}}, {}});
    now.qdisc_tree = tbf;
    const auto back = nm::tuning_back_to(original, now);
    REQUIRE(back.qdisc_original);
    CHECK(*back.qdisc_original == *original.qdisc_tree);
    CHECK(nm::qdisc_root_is(tbf.qdiscs[0], now.qdisc_tree));
    CHECK_FALSE(nm::qdisc_root_is(*original.qdisc_tree->root(), now.qdisc_tree));
    CHECK(nm::qdisc_root_is(*original.qdisc_tree->root(), original.qdisc_tree));
    // A tree nicmatrix could not rebuild was never replaced by it: restore leaves it to whoever changed it.
    original.qdisc_tree->refused = "filter bpf parent 1: pref 1: the filter kind is not on nicmatrix's allow-list (u32)";
    CHECK_FALSE(nm::tuning_back_to(original, now).qdisc_original);
    // A journal from before trees: a kernel default root comes back (its tree is just that root) ...
    nm::TuningState old_original;
    old_original.qdisc = nm::QdiscState{"noqueue", 0, {}};
    const auto old_back = nm::tuning_back_to(old_original, now);
    REQUIRE(old_back.qdisc_original);
    REQUIRE(old_back.qdisc_original->root());
    CHECK(old_back.qdisc_original->root()->kind == "noqueue");
    CHECK(old_back.qdisc_original->root()->handle == 0);
    // ... and a configured one is not rebuilt from a summary (or from the bytes such journals carried).
    const Json legacy = {{"qdisc", {{"kind", "htb"}, {"handle", 65536}, {"options_hex", "1c000200"}, {"params", {{"default_class", 16}}}}}};
    const auto read = legacy.get<nm::TuningState>();
    CHECK(read.qdisc->kind == "htb");
    CHECK(Json(*read.qdisc).dump().find("options_hex") == std::string::npos);
    CHECK_FALSE(nm::tuning_back_to(read, now).qdisc_original);
}
