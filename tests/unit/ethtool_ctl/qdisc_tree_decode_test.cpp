// The qdisc tree decoder on messages made with the request builder (the same bytes a dump carries):
// every known option into a name, every unknown attribute refused with the node named, the ingress side
// and other devices left out.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "ethtool_ctl/netlink_socket.hpp"
#include "ethtool_ctl/qdisc_tree.hpp"

namespace {

constexpr int32_t kIfindex = 7;
using Messages = std::vector<std::vector<uint8_t>>;

struct Message {
    nm::nl::NlRequest req;
    Message(uint16_t type, uint32_t parent, uint32_t handle, const char* kind, uint32_t info = 0, int32_t ifindex = kIfindex)
        : req(nm::nl::NlRequest::plain(type, NLM_F_MULTI, sizeof(tcmsg))) {
        auto* tc = static_cast<tcmsg*>(req.extra_header());
        tc->tcm_ifindex = ifindex;
        tc->tcm_parent = parent;
        tc->tcm_handle = handle;
        tc->tcm_info = info;
        req.put_strz(TCA_KIND, kind);
    }
    std::vector<uint8_t> bytes() {
        const auto b = req.bytes();
        return {b.begin(), b.end()};
    }
};

std::vector<uint8_t> root_htb() {
    Message m(RTM_NEWQDISC, TC_H_ROOT, 0x10000, "htb");
    tc_htb_glob g{};
    g.version = 3;
    g.rate2quantum = 10;
    g.defcls = 0x20;
    g.direct_pkts = 12345;  // a counter: not an option
    auto opts = m.req.nest(TCA_OPTIONS);
    m.req.put_binary(TCA_HTB_INIT, &g, sizeof g);
    m.req.put_u32(TCA_HTB_DIRECT_QLEN, 1000);
    opts.close();
    return m.bytes();
}

}  // namespace

TEST_CASE("decode_qdisc_tree: htb and fq_codel options by name, counters left out, ingress and other devices skipped", "[unit]") {
    Message fq(RTM_NEWQDISC, 0x10010, 0x100000, "fq_codel");
    {
        auto opts = fq.req.nest(TCA_OPTIONS);
        fq.req.put_u32(TCA_FQ_CODEL_TARGET, 4999);
        fq.req.put_u32(TCA_FQ_CODEL_LIMIT, 10240);
        const uint8_t selector = 1;
        fq.req.put_binary(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR, &selector, 1);
        opts.close();
    }
    Message ingress(RTM_NEWQDISC, TC_H_INGRESS, 0xFFFF0000, "ingress");
    Message other(RTM_NEWQDISC, TC_H_ROOT, 0x50000, "netem", 0, kIfindex + 1);
    const nm::QdiscTree t = nm::decode_qdisc_tree({root_htb(), fq.bytes(), ingress.bytes(), other.bytes()}, {}, {}, kIfindex);
    INFO(t.refused);
    CHECK(t.refused.empty());
    REQUIRE(t.qdiscs.size() == 2);
    REQUIRE(t.root());
    CHECK(t.root()->options == std::map<std::string, uint64_t>{{"r2q", 10}, {"default", 0x20}, {"direct_qlen", 1000}});
    const nm::TcNode& leaf = t.qdiscs[0];
    CHECK(leaf.kind == "fq_codel");
    CHECK(leaf.options == std::map<std::string, uint64_t>{{"target", 4999}, {"limit", 10240}, {"ce_threshold_selector", 1}});
    CHECK(nm::check_qdisc_tree(t).empty());
}

TEST_CASE("decode_qdisc_tree refuses what it cannot write back, naming the node", "[unit]") {
    SECTION("a kind off the allow-list") {
        Message netem(RTM_NEWQDISC, TC_H_ROOT, 0x10000, "netem");
        const auto t = nm::decode_qdisc_tree({netem.bytes()}, {}, {}, kIfindex);
        CHECK(t.refused ==
              "qdisc netem 1: root: the qdisc kind is not on nicmatrix's allow-list (noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel)");
    }
    SECTION("an option attribute the decoder does not know") {
        Message fq(RTM_NEWQDISC, TC_H_ROOT, 0x10000, "fq_codel");
        auto opts = fq.req.nest(TCA_OPTIONS);
        fq.req.put_u32(99, 1);
        opts.close();
        CHECK(nm::decode_qdisc_tree({fq.bytes()}, {}, {}, kIfindex).refused ==
              "qdisc fq_codel 1: root: fq_codel option attribute 99 (not one nicmatrix can set)");
    }
    SECTION("a tbf peak rate") {
        Message tbf(RTM_NEWQDISC, TC_H_ROOT, 0x10000, "tbf");
        tc_tbf_qopt q{};
        q.rate.rate = 125000000;
        q.rate.linklayer = TC_LINKLAYER_ETHERNET;
        q.peakrate.rate = 250000000;
        auto opts = tbf.req.nest(TCA_OPTIONS);
        tbf.req.put_binary(TCA_TBF_PARMS, &q, sizeof q);
        opts.close();
        CHECK(nm::decode_qdisc_tree({tbf.bytes()}, {}, {}, kIfindex).refused == "qdisc tbf 1: root: tbf peakrate (not one nicmatrix can set)");
    }
    SECTION("a u32 rule with actions") {
        Message rule(RTM_NEWTFILTER, 0x10000, 0x80000800, "u32", TC_H_MAKE(1U << 16, htons(0x0800)));
        tc_u32_sel sel{};
        auto opts = rule.req.nest(TCA_OPTIONS);
        rule.req.put_binary(TCA_U32_SEL, &sel, sizeof sel);
        auto act = rule.req.nest(TCA_U32_ACT);
        act.close();
        opts.close();
        CHECK(nm::decode_qdisc_tree({root_htb()}, {}, {rule.bytes()}, kIfindex).refused ==
              "filter u32 parent 1: pref 1 handle 800::800: u32 actions (not ones nicmatrix can rebuild)");
    }
    SECTION("a size table on the root") {
        Message m(RTM_NEWQDISC, TC_H_ROOT, 0x10000, "pfifo");
        tc_fifo_qopt q{100};
        m.req.put_binary(TCA_OPTIONS, &q, sizeof q);
        auto stab = m.req.nest(TCA_STAB);
        stab.close();
        CHECK(nm::decode_qdisc_tree({m.bytes()}, {}, {}, kIfindex).refused == "qdisc pfifo 1: root: a size table (stab)");
    }
}
