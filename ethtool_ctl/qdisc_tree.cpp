// The whole qdisc tree of an interface over rtnetlink (issue 36): RTM_GETQDISC, RTM_GETTCLASS and
// RTM_GETTFILTER dumps decoded into a QdiscTree of named integers, and the same tree rebuilt by typed
// encoders (RTM_NEWQDISC, RTM_NEWTCLASS, RTM_NEWTFILTER). A decoder refuses every attribute it does not
// know: what it cannot write back exactly, it does not claim to have captured.
#include "ethtool_ctl/qdisc_tree.hpp"

#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "core/base/error.hpp"
#include "ethtool_ctl/qdisc.hpp"

namespace nm {
namespace {

constexpr uint32_t kHtbVersion = 3;  // HTB_VER >> 16: the only version htb_init accepts
// Filter flags a client may set (tc_flags_valid refuses the others); IN_HW, NOT_IN_HW and VERBOSE are the
// kernel's own report of an offload and are dumped back.
constexpr uint32_t kSettableClsFlags = TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW;

// Every attribute of `payload` in order, lengths checked; a decoder goes through all of them, so that an
// attribute it does not know is seen (and refused) instead of skipped.
std::vector<const nlattr*> attrs_of(nl::Bytes payload, const char* what) {
    std::vector<const nlattr*> out;
    size_t off = 0;
    while (off + sizeof(nlattr) <= payload.size()) {
        const auto* a = reinterpret_cast<const nlattr*>(payload.data() + off);
        if (a->nla_len < sizeof(nlattr) || off + a->nla_len > payload.size())
            throw Error(ErrorKind::Failed, std::string(what) + ": truncated attribute");
        out.push_back(a);
        off += NLA_ALIGN(a->nla_len);
    }
    return out;
}

uint16_t type_of(const nlattr* a) { return a->nla_type & NLA_TYPE_MASK; }

template <typename T>
bool copy_struct(const nlattr* a, T& out) {
    const nl::Bytes p = nl::attr_payload(a);
    if (p.size() < sizeof(T)) return false;
    std::memcpy(&out, p.data(), sizeof(T));
    return true;
}

uint32_t u32_of(const nlattr* a) {
    uint32_t v = 0;
    if (!copy_struct(a, v)) throw Error(ErrorKind::Failed, "tc attribute " + std::to_string(type_of(a)) + " shorter than a u32");
    return v;
}

uint64_t u64_of(const nlattr* a) {
    uint64_t v = 0;
    if (!copy_struct(a, v)) throw Error(ErrorKind::Failed, "tc attribute " + std::to_string(type_of(a)) + " shorter than a u64");
    return v;
}

std::string unknown(const char* kind, const nlattr* a) {
    return std::string(kind) + " option attribute " + std::to_string(type_of(a)) + " (not one nicmatrix can set)";
}

// A rate as the kernel keeps and dumps it (psched_ratecfg_getrate): bytes/s, overhead, mpu, link layer.
std::string put_rate(TcNode& n, const std::string& prefix, const tc_ratespec& r, std::optional<uint64_t> rate64) {
    if (r.linklayer == TC_LINKLAYER_UNAWARE) return prefix.empty() ? "rate without a link layer" : prefix + "rate without a link layer";
    n.options[prefix.empty() ? "rate" : prefix.substr(0, prefix.size() - 1)] = rate64 ? *rate64 : r.rate;
    n.options[prefix + "overhead"] = r.overhead;
    n.options[prefix + "mpu"] = r.mpu;
    n.options[prefix + "linklayer"] = r.linklayer;
    return {};
}

// --- decoders: TCA_OPTIONS of one kind into named options; "" or why the node cannot be rebuilt ---

std::string decode_fifo(nl::Bytes opts, TcNode& n) {
    tc_fifo_qopt q{};
    if (opts.size() < sizeof q) return "fifo options shorter than tc_fifo_qopt";
    std::memcpy(&q, opts.data(), sizeof q);
    n.options["limit"] = q.limit;
    return {};
}

// The attribute numbers of an options nest that holds one parameters struct and two 64-bit rates beside
// it (tbf: rate and peak rate; an htb class: rate and ceiling), with a pad attribute.
struct ParmsAndRatesAttrs {
    uint16_t parms, rate64, second64, pad;
};

template <typename Parms>
struct ParmsAndRates {
    std::optional<Parms> parms;
    std::optional<uint64_t> rate64, second64;
};

// Reads such a nest into `out`: "" or why it cannot be rebuilt (an attribute it does not know, no parameters).
// `kind` names the nest in messages ("tbf", "htb class"), `parms_name` its struct.
template <typename Parms>
std::string read_parms_and_rates(nl::Bytes opts, const std::string& kind, const char* parms_name, ParmsAndRatesAttrs at, ParmsAndRates<Parms>& out) {
    for (const nlattr* a : attrs_of(opts, (kind + " options").c_str())) {
        const uint16_t type = type_of(a);
        if (type == at.parms) {
            Parms p{};
            if (!copy_struct(a, p)) return kind + " parameters shorter than " + parms_name;
            out.parms = p;
        } else if (type == at.rate64) {
            out.rate64 = u64_of(a);
        } else if (type == at.second64) {
            out.second64 = u64_of(a);
        } else if (type != at.pad) {
            return unknown(kind.c_str(), a);
        }
    }
    return out.parms ? std::string() : kind + " without parameters";
}

std::string decode_tbf(nl::Bytes opts, TcNode& n) {
    ParmsAndRates<tc_tbf_qopt> t;
    if (std::string why = read_parms_and_rates(opts, "tbf", "tc_tbf_qopt", {TCA_TBF_PARMS, TCA_TBF_RATE64, TCA_TBF_PRATE64, TCA_TBF_PAD}, t);
        !why.empty()) {
        return why;
    }
    if (t.parms->peakrate.rate != 0 || t.second64) return "tbf peakrate (not one nicmatrix can set)";
    if (std::string why = put_rate(n, "", t.parms->rate, t.rate64); !why.empty()) return "tbf " + why;
    n.options["limit"] = t.parms->limit;
    n.options["buffer"] = t.parms->buffer;
    n.options["mtu"] = t.parms->mtu;
    return {};
}

std::string decode_htb_qdisc(nl::Bytes opts, TcNode& n) {
    bool init = false;
    for (const nlattr* a : attrs_of(opts, "htb options")) {
        switch (type_of(a)) {
            case TCA_HTB_INIT: {
                tc_htb_glob g{};
                if (!copy_struct(a, g)) return "htb parameters shorter than tc_htb_glob";
                n.options["r2q"] = g.rate2quantum;
                n.options["default"] = g.defcls;  // direct_pkts is a counter, not an option
                init = true;
                break;
            }
            case TCA_HTB_DIRECT_QLEN: n.options["direct_qlen"] = u32_of(a); break;
            case TCA_HTB_PAD: break;
            default: return unknown("htb", a);  // TCA_HTB_OFFLOAD among them
        }
    }
    return init ? std::string() : "htb without parameters";
}

std::string decode_htb_class(nl::Bytes opts, TcNode& n) {
    ParmsAndRates<tc_htb_opt> c;
    if (std::string why = read_parms_and_rates(opts, "htb class", "tc_htb_opt", {TCA_HTB_PARMS, TCA_HTB_RATE64, TCA_HTB_CEIL64, TCA_HTB_PAD}, c);
        !why.empty()) {
        return why;
    }
    if (std::string why = put_rate(n, "rate_", c.parms->rate, c.rate64); !why.empty()) return "htb class " + why;
    if (std::string why = put_rate(n, "ceil_", c.parms->ceil, c.second64); !why.empty()) return "htb class " + why;
    n.options["buffer"] = c.parms->buffer;
    n.options["cbuffer"] = c.parms->cbuffer;
    n.options["quantum"] = c.parms->quantum;
    n.options["prio"] = c.parms->prio;  // level is the kernel's, from the classes below
    return {};
}

struct U32Attr {
    uint16_t type;
    const char* name;
    bool u8;
};

// fq_codel: every option it dumps is one it takes back, each a u32 (two u8) attribute of the same number.
constexpr U32Attr kFqCodel[] = {
    {TCA_FQ_CODEL_TARGET, "target", false},
    {TCA_FQ_CODEL_LIMIT, "limit", false},
    {TCA_FQ_CODEL_INTERVAL, "interval", false},
    {TCA_FQ_CODEL_ECN, "ecn", false},
    {TCA_FQ_CODEL_FLOWS, "flows", false},
    {TCA_FQ_CODEL_QUANTUM, "quantum", false},
    {TCA_FQ_CODEL_CE_THRESHOLD, "ce_threshold", false},
    {TCA_FQ_CODEL_DROP_BATCH_SIZE, "drop_batch_size", false},
    {TCA_FQ_CODEL_MEMORY_LIMIT, "memory_limit", false},
    {TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR, "ce_threshold_selector", true},
    {TCA_FQ_CODEL_CE_THRESHOLD_MASK, "ce_threshold_mask", true},
};

std::string decode_fq_codel(nl::Bytes opts, TcNode& n) {
    for (const nlattr* a : attrs_of(opts, "fq_codel options")) {
        const auto it = std::find_if(std::begin(kFqCodel), std::end(kFqCodel), [&](const U32Attr& f) { return f.type == type_of(a); });
        if (it == std::end(kFqCodel)) return unknown("fq_codel", a);
        if (it->u8) {
            if (nl::attr_payload(a).empty()) return "fq_codel option " + std::string(it->name) + " empty";
            n.options[it->name] = nl::attr_payload(a)[0];
        } else {
            n.options[it->name] = u32_of(a);
        }
    }
    return {};
}

// --- u32 ---

std::string decode_u32(nl::Bytes opts, TcNode& n, uint32_t& divisor) {
    for (const nlattr* a : attrs_of(opts, "u32 options")) {
        switch (type_of(a)) {
            case TCA_U32_DIVISOR: divisor = u32_of(a); break;
            case TCA_U32_CLASSID: n.options["classid"] = u32_of(a); break;
            case TCA_U32_HASH: n.options["hash"] = u32_of(a); break;  // checked against the handle, not kept
            case TCA_U32_FLAGS: {
                const uint32_t flags = u32_of(a) & kSettableClsFlags;
                if (flags) n.options["flags"] = flags;
                break;
            }
            case TCA_U32_SEL: {
                const nl::Bytes p = nl::attr_payload(a);
                // Filled by the memcpy below; no `{}`: the uapi struct ends in keys[0], which clang refuses to
                // value-initialise under -Wpedantic.
                tc_u32_sel sel;
                if (p.size() < sizeof sel) return "u32 selector shorter than tc_u32_sel";
                std::memcpy(&sel, p.data(), sizeof sel);
                if (p.size() < sizeof sel + sel.nkeys * sizeof(tc_u32_key)) return "u32 selector shorter than its keys";
                n.options["sel_flags"] = sel.flags;
                n.options["offshift"] = sel.offshift;
                n.options["offmask"] = ntohs(sel.offmask);
                n.options["off"] = sel.off;
                n.options["offoff"] = static_cast<uint16_t>(sel.offoff);
                n.options["hoff"] = static_cast<uint16_t>(sel.hoff);
                n.options["hmask"] = ntohl(sel.hmask);
                auto& keys = n.lists["keys"];
                for (unsigned i = 0; i < sel.nkeys; ++i) {
                    tc_u32_key k{};
                    std::memcpy(&k, p.data() + sizeof sel + i * sizeof k, sizeof k);
                    keys.insert(keys.end(), {ntohl(k.val), ntohl(k.mask), static_cast<uint32_t>(k.off), static_cast<uint32_t>(k.offmask)});
                }
                break;
            }
            case TCA_U32_PCNT:
            case TCA_U32_PAD: break;  // counters
            case TCA_U32_LINK: return "u32 link to another hash table (not one nicmatrix can rebuild)";
            case TCA_U32_ACT:
            case TCA_U32_POLICE: return "u32 actions (not ones nicmatrix can rebuild)";
            default: return unknown("u32", a);  // indev and mark among them
        }
    }
    return {};
}

// --- one dumped message into a node ---

struct Decoded {
    std::optional<TcNode> node;
    std::string refused;
    bool ingress = false;      // the ingress/clsact qdisc and what hangs off it: not part of the root's tree
    bool proto_only = false;   // a filter message naming only its priority (tcf_proto), no rule
    uint32_t u32_divisor = 0;  // a u32 hash table (no rule)
};

Decoded decode_message(nl::Bytes message, TcObject what, int32_t ifindex) {
    Decoded d;
    if (message.size() < NLMSG_LENGTH(sizeof(tcmsg))) throw Error(ErrorKind::Failed, "tc message shorter than its header");
    const auto* h = reinterpret_cast<const nlmsghdr*>(message.data());
    const auto* tc = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(h));
    if (tc->tcm_ifindex != ifindex) return d;
    const size_t off = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(tcmsg)));
    if (h->nlmsg_len < off) return d;
    TcNode n;
    n.handle = tc->tcm_handle;
    n.parent = tc->tcm_parent;
    if (what == TcObject::Filter) {
        n.prio = static_cast<uint16_t>(TC_H_MAJ(tc->tcm_info) >> 16);
        n.protocol = ntohs(static_cast<uint16_t>(TC_H_MIN(tc->tcm_info)));
    }
    // ingress/clsact is ffff: with parent ffff:fff1; its filters hang from ffff:fff2 and ffff:fff3. The root's
    // parent (TC_H_ROOT, ffff:ffff) has the same major.
    if (n.parent != TC_H_ROOT && TC_H_MAJ(n.parent) == TC_H_MAJ(TC_H_INGRESS)) {
        d.ingress = true;
        return d;
    }
    const nlattr* options = nullptr;
    for (const nlattr* a : attrs_of(message.subspan(off, h->nlmsg_len - off), "tc message")) {
        switch (type_of(a)) {
            case TCA_KIND: n.kind = nl::attr_string(a); break;
            case TCA_OPTIONS: options = a; break;
            case TCA_CHAIN: n.chain = u32_of(a); break;
            case TCA_STAB: d.refused = "a size table (stab)"; break;
            case TCA_INGRESS_BLOCK:
            case TCA_EGRESS_BLOCK:
                if (u32_of(a) != 0) d.refused = "a shared filter block";
                break;
            case TCA_HW_OFFLOAD:
                if (!nl::attr_payload(a).empty() && nl::attr_payload(a)[0] != 0) d.refused = "offloaded to hardware";
                break;
            default: break;  // statistics, counters, padding, dump flags
        }
    }
    if (n.kind.empty()) throw Error(ErrorKind::Failed, "tc message without a kind");
    if (n.kind == "ingress" || n.kind == "clsact") {
        d.ingress = true;
        return d;
    }
    const auto refuse = [&](const std::string& why) {
        d.refused = describe_tc_node(what, n) + ": " + why;
        d.node = n;
        return d;
    };
    if (!d.refused.empty()) return refuse(d.refused);
    const nl::Bytes opts = options ? nl::attr_payload(options) : nl::Bytes{};
    std::string why;
    if (what == TcObject::Filter) {
        if (n.handle == 0 && options == nullptr) {
            d.proto_only = true;
            d.node = n;
            return d;
        }
        if (!filter_kind_allowed(n.kind)) return refuse("the filter kind is not on nicmatrix's allow-list (u32)");
        why = decode_u32(opts, n, d.u32_divisor);
    } else if (what == TcObject::Class) {
        if (n.kind != "htb") {
            // mq's per-queue classes and the flows fq_codel shows are the qdisc's own, made with it.
            return d;
        }
        why = decode_htb_class(opts, n);
    } else if (!qdisc_kind_allowed(n.kind)) {
        return refuse("the qdisc kind is not on nicmatrix's allow-list (noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel)");
    } else if (n.kind == "pfifo" || n.kind == "bfifo") {
        why = options ? decode_fifo(opts, n) : "fifo without options";
    } else if (n.kind == "tbf") {
        why = decode_tbf(opts, n);
    } else if (n.kind == "htb") {
        why = decode_htb_qdisc(opts, n);
    } else if (n.kind == "fq_codel") {
        why = decode_fq_codel(opts, n);
    }
    // noqueue, mq and pfifo_fast take no options (pfifo_fast's bands and priomap are fixed).
    if (!why.empty()) return refuse(why);
    d.node = n;
    return d;
}

nl::NlRequest tc_request(uint16_t type, uint16_t flags, int32_t ifindex, uint32_t parent, uint32_t handle, uint32_t info = 0) {
    auto req = nl::NlRequest::plain(type, flags, sizeof(tcmsg));
    auto* tc = static_cast<tcmsg*>(req.extra_header());
    tc->tcm_family = AF_UNSPEC;
    tc->tcm_ifindex = ifindex;
    tc->tcm_parent = parent;
    tc->tcm_handle = handle;
    tc->tcm_info = info;
    return req;
}

uint64_t get(const TcNode& n, const char* name) {
    const auto it = n.options.find(name);
    return it == n.options.end() ? 0 : it->second;
}

uint32_t get32(const TcNode& n, const char* name) { return static_cast<uint32_t>(std::min<uint64_t>(get(n, name), UINT32_MAX)); }

tc_ratespec rate_of(const TcNode& n, const std::string& prefix) {
    tc_ratespec r{};
    const uint64_t rate = get(n, (prefix.empty() ? std::string("rate") : prefix.substr(0, prefix.size() - 1)).c_str());
    r.rate = static_cast<uint32_t>(std::min<uint64_t>(rate, UINT32_MAX));
    r.overhead = static_cast<uint16_t>(get(n, (prefix + "overhead").c_str()));
    r.mpu = static_cast<uint16_t>(get(n, (prefix + "mpu").c_str()));
    r.linklayer = static_cast<uint8_t>(get(n, (prefix + "linklayer").c_str()));
    return r;
}

// --- encoders: named options back into TCA_OPTIONS of the kind ---

// A rate of 2^32 bytes/s or more also goes in its 64-bit attribute `type` (the tc_ratespec holds 32 bits).
void put_rate64(nl::NlRequest& req, uint16_t type, const TcNode& n, const char* name) {
    if (const uint64_t r = get(n, name); r >= (uint64_t{1} << 32)) req.put_binary(type, &r, sizeof r);
}

void put_qdisc_options(nl::NlRequest& req, const TcNode& n) {
    if (n.kind == "pfifo" || n.kind == "bfifo") {
        tc_fifo_qopt q{};
        q.limit = get32(n, "limit");
        req.put_binary(TCA_OPTIONS, &q, sizeof q);
    } else if (n.kind == "tbf") {
        tc_tbf_qopt q{};
        q.rate = rate_of(n, "");
        q.limit = get32(n, "limit");
        q.buffer = get32(n, "buffer");  // psched ticks, as dumped: the kernel keeps the same ns
        q.mtu = get32(n, "mtu");
        auto opts = req.nest(TCA_OPTIONS);
        req.put_binary(TCA_TBF_PARMS, &q, sizeof q);
        put_rate64(req, TCA_TBF_RATE64, n, "rate");
        opts.close();
    } else if (n.kind == "htb") {
        tc_htb_glob g{};
        g.version = kHtbVersion;
        g.rate2quantum = get32(n, "r2q");
        g.defcls = get32(n, "default");
        auto opts = req.nest(TCA_OPTIONS);
        req.put_binary(TCA_HTB_INIT, &g, sizeof g);
        if (n.options.count("direct_qlen")) req.put_u32(TCA_HTB_DIRECT_QLEN, get32(n, "direct_qlen"));
        opts.close();
    } else if (n.kind == "fq_codel") {
        auto opts = req.nest(TCA_OPTIONS);
        for (const U32Attr& f : kFqCodel) {
            if (!n.options.count(f.name)) continue;
            if (f.u8) {
                const auto v = static_cast<uint8_t>(get(n, f.name));
                req.put_binary(f.type, &v, 1);
            } else {
                req.put_u32(f.type, get32(n, f.name));
            }
        }
        opts.close();
    }
}

void put_class_options(nl::NlRequest& req, const TcNode& n) {
    tc_htb_opt o{};
    o.rate = rate_of(n, "rate_");
    o.ceil = rate_of(n, "ceil_");
    o.buffer = get32(n, "buffer");
    o.cbuffer = get32(n, "cbuffer");
    o.quantum = get32(n, "quantum");
    o.prio = get32(n, "prio");
    auto opts = req.nest(TCA_OPTIONS);
    req.put_binary(TCA_HTB_PARMS, &o, sizeof o);
    put_rate64(req, TCA_HTB_RATE64, n, "rate");
    put_rate64(req, TCA_HTB_CEIL64, n, "ceil");
    opts.close();
}

void put_filter_options(nl::NlRequest& req, const TcNode& n) {
    tc_u32_sel sel;  // zeroed with memset, not `{}`: the uapi struct ends in keys[0] (see above)
    std::memset(&sel, 0, sizeof sel);
    const auto it = n.lists.find("keys");
    const std::vector<uint64_t> none;
    const std::vector<uint64_t>& keys = it == n.lists.end() ? none : it->second;
    sel.flags = static_cast<unsigned char>(get(n, "sel_flags"));
    sel.offshift = static_cast<unsigned char>(get(n, "offshift"));
    sel.nkeys = static_cast<unsigned char>(keys.size() / 4);
    sel.offmask = htons(static_cast<uint16_t>(get(n, "offmask")));
    sel.off = static_cast<uint16_t>(get(n, "off"));
    sel.offoff = static_cast<int16_t>(static_cast<uint16_t>(get(n, "offoff")));
    sel.hoff = static_cast<int16_t>(static_cast<uint16_t>(get(n, "hoff")));
    sel.hmask = htonl(get32(n, "hmask"));
    std::vector<uint8_t> bytes(sizeof sel + sel.nkeys * sizeof(tc_u32_key));
    std::memcpy(bytes.data(), &sel, sizeof sel);
    for (size_t i = 0; i < sel.nkeys; ++i) {
        tc_u32_key k{};
        k.val = htonl(static_cast<uint32_t>(keys[4 * i]));
        k.mask = htonl(static_cast<uint32_t>(keys[4 * i + 1]));
        k.off = static_cast<int>(static_cast<uint32_t>(keys[4 * i + 2]));
        k.offmask = static_cast<int>(static_cast<uint32_t>(keys[4 * i + 3]));
        std::memcpy(bytes.data() + sizeof sel + i * sizeof k, &k, sizeof k);
    }
    auto opts = req.nest(TCA_OPTIONS);
    req.put_binary(TCA_U32_SEL, bytes.data(), bytes.size());
    if (get(n, "classid")) req.put_u32(TCA_U32_CLASSID, get32(n, "classid"));
    if (get(n, "flags")) req.put_u32(TCA_U32_FLAGS, get32(n, "flags") & kSettableClsFlags);
    opts.close();
}

Error tree_error(const Error& e, const std::string& action, const std::string& ifname) {
    // An error of the kernel's (a code) is told by its code and extack; any other by its own text.
    const std::string text = action + " on " + ifname + (e.code() ? std::string() : std::string(": ") + e.what());
    return Error(e.kind() == ErrorKind::Usage ? ErrorKind::Usage : ErrorKind::Failed, text, e.code(), {ifname, "qdisc", e.context().extack});
}

// The u32 root hash table ids a rebuild gives: one tc_u_common per qdisc (its own block and its classes'
// blocks share it); the first u32 priority gets 800:, each later one the next id of a cyclic allocator
// that starts at 801:. So a tree whose ids per qdisc are 800:, 801:, ... in order can be made again,
// by creating the priorities in the order of their ids; any other (gaps left by deleted priorities) cannot.
std::string check_u32_ids(const std::map<std::tuple<uint32_t, uint16_t, uint16_t, uint32_t>, std::vector<uint32_t>>& tables,
                          const std::set<std::tuple<uint32_t, uint16_t, uint16_t, uint32_t>>& with_rules) {
    std::map<uint32_t, std::vector<uint32_t>> per_qdisc;
    for (const auto& [proto, ids] : tables) {
        const auto& [parent, prio, protocol, chain] = proto;
        const std::string where = "filter u32 parent " + tc_handle(parent) + " pref " + std::to_string(prio);
        if (ids.size() != 1) return where + ": " + std::to_string(ids.size()) + " hash tables (nicmatrix rebuilds only the root one)";
        if (!with_rules.count(proto)) return where + ": a hash table without rules";
        per_qdisc[TC_H_MAJ(parent)].push_back(ids[0]);
    }
    for (auto& [major, ids] : per_qdisc) {
        std::sort(ids.begin(), ids.end());
        for (size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] != (0x800U + i) << 20) {
                return "filter u32 under qdisc " + tc_handle(major) +
                       ": hash table ids are not 800:, 801:, ... in order (a rebuild would number them differently)";
            }
        }
    }
    return {};
}

}  // namespace

QdiscTree decode_qdisc_tree(const std::vector<std::vector<uint8_t>>& qdiscs, const std::vector<std::vector<uint8_t>>& classes,
                            const std::vector<std::vector<uint8_t>>& filters, int32_t ifindex) {
    QdiscTree t;
    const auto note = [&](const std::string& why) {
        if (t.refused.empty()) t.refused = why;
    };
    for (const auto& m : qdiscs) {
        Decoded d = decode_message(m, TcObject::Qdisc, ifindex);
        if (!d.refused.empty()) note(d.refused);
        if (d.node && !d.ingress) t.qdiscs.push_back(*d.node);
    }
    for (const auto& m : classes) {
        Decoded d = decode_message(m, TcObject::Class, ifindex);
        if (!d.refused.empty()) note(d.refused);
        if (d.node && !d.ingress) t.classes.push_back(*d.node);
    }
    using Proto = std::tuple<uint32_t, uint16_t, uint16_t, uint32_t>;
    std::map<Proto, std::vector<uint32_t>> tables;
    std::set<Proto> protos, with_rules;
    std::set<std::tuple<uint32_t, uint16_t, uint16_t, uint32_t, uint32_t>> seen;
    for (const auto& m : filters) {
        Decoded d = decode_message(m, TcObject::Filter, ifindex);
        if (!d.refused.empty()) note(d.refused);
        if (!d.node || d.ingress || !d.refused.empty()) continue;
        TcNode& n = *d.node;
        const Proto proto{n.parent, n.prio, n.protocol, n.chain};
        if (!seen.insert({n.parent, n.prio, n.protocol, n.chain, d.proto_only ? 0xFFFFFFFFU : n.handle}).second) continue;
        if (d.proto_only) {
            protos.insert(proto);
            continue;
        }
        if (d.u32_divisor != 0 || !n.options.count("sel_flags")) {
            // A hash table: the root one (divisor 1, no key) comes with the priority; others are refused below.
            if (d.u32_divisor != 1 || (n.handle & 0x000FFFFFU) != 0) {
                note(describe_tc_node(TcObject::Filter, n) + ": a hash table of divisor " + std::to_string(d.u32_divisor) +
                     " (nicmatrix rebuilds only the root one)");
            }
            tables[proto].push_back(n.handle);
            continue;
        }
        const uint32_t htid = n.handle & 0xFFF00000U;
        const auto hash = n.options.find("hash");
        if (hash != n.options.end() && (hash->second & 0xFFF00000U) != htid) {
            note(describe_tc_node(TcObject::Filter, n) + ": a rule in another hash table than its own");
        }
        if (hash != n.options.end()) n.options.erase(hash);
        with_rules.insert(proto);
        t.filters.push_back(n);
    }
    for (const auto& p : protos) {
        if (!tables.count(p) && !with_rules.count(p)) {
            const auto& [parent, prio, protocol, chain] = p;
            note("filter parent " + tc_handle(parent) + " pref " + std::to_string(prio) + ": a priority without rules");
        }
    }
    for (const auto& table : tables) {
        const auto& proto = table.first;
        for (uint32_t id : table.second) {
            const bool rules_here = std::any_of(t.filters.begin(), t.filters.end(), [&](const TcNode& f) {
                return std::tie(f.parent, f.prio, f.protocol, f.chain) == proto && (f.handle & 0xFFF00000U) == id;
            });
            if (!rules_here && with_rules.count(proto))
                note("filter u32 parent " + tc_handle(std::get<0>(proto)) + ": hash table " + tc_handle(id) + " without rules");
        }
    }
    if (std::string why = check_u32_ids(tables, with_rules); !why.empty()) note(why);
    if (t.root() == nullptr) note("no root qdisc");
    canonicalize(t);
    return t;
}

QdiscTree QdiscControl::tree(int32_t ifindex) {
    std::vector<std::vector<uint8_t>> qdiscs, classes, filters;
    const auto collect = [](std::vector<std::vector<uint8_t>>& into) { return [&into](nl::Bytes m) { into.emplace_back(m.begin(), m.end()); }; };
    auto q = tc_request(RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, ifindex, 0, 0);
    sock_.transact(q, collect(qdiscs));
    auto c = tc_request(RTM_GETTCLASS, NLM_F_REQUEST | NLM_F_DUMP, ifindex, 0, 0);
    sock_.transact(c, collect(classes));
    // A filter dump shows one block: the qdisc's (parent major:0) or one class's. So one dump for each
    // qdisc and each class of the tree, as `tc filter show dev IF parent X` for every X.
    const QdiscTree shape = decode_qdisc_tree(qdiscs, classes, {}, ifindex);
    std::set<uint32_t> parents;
    for (const auto& n : shape.qdiscs) {
        if (n.handle != 0 || n.parent == TC_H_ROOT) parents.insert(n.handle);
    }
    for (const auto& n : shape.classes) parents.insert(n.handle);
    for (uint32_t parent : parents) {
        auto f = tc_request(RTM_GETTFILTER, NLM_F_REQUEST | NLM_F_DUMP, ifindex, parent, 0);
        try {
            sock_.transact(f, collect(filters));
        } catch (const Error& e) {
            // A qdisc without filters (no tcf_block: noqueue, pfifo, tbf) answers EOPNOTSUPP or EINVAL on some kernels.
            if (e.code().value() != EOPNOTSUPP && e.code().value() != EINVAL && e.code().value() != ENOENT) throw;
        }
    }
    return decode_qdisc_tree(qdiscs, classes, filters, ifindex);
}

void QdiscControl::rebuild(int32_t ifindex, const QdiscTree& original, const std::string& ifname) {
    if (!original.refused.empty())
        throw usage_error("restore the qdisc tree of " + ifname + ": it could not be captured exactly: " + original.refused);
    if (std::string why = check_qdisc_tree(original); !why.empty()) throw usage_error("restore the qdisc tree of " + ifname + ": " + why);
    const QdiscTree now = this->tree(ifindex);
    if (qdisc_tree_back(original, now)) return;
    const TcNode& root = *original.root();
    std::string step;
    const auto send = [&](nl::NlRequest& req) { sock_.transact(req, [](nl::Bytes) {}); };
    try {
        const TcNode* now_root = now.root();
        // Everything below the root goes with it; the kernel then attaches its default root (for a
        // default original, that is the original).
        if (now_root != nullptr && now_root->handle != 0) {
            step = "delete root qdisc " + now_root->kind;
            auto del = tc_request(RTM_DELQDISC, NLM_F_REQUEST | NLM_F_ACK, ifindex, TC_H_ROOT, 0);
            send(del);
        }
        std::set<uint32_t> qdisc_majors{TC_H_MAJ(root.handle)}, made_classes;
        if (root.handle != 0) {
            step = describe_tc_node(TcObject::Qdisc, root);
            auto req = tc_request(RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex, TC_H_ROOT, root.handle);
            req.put_strz(TCA_KIND, root.kind);
            put_qdisc_options(req, root);
            send(req);
        }
        std::set<uint32_t> tree_classes;
        for (const auto& c : original.classes) tree_classes.insert(c.handle);
        // Classes before what hangs from them, whatever the depth: a class's parent is its qdisc or a class
        // made before it; a qdisc's parent is a class made before it or one its qdisc made by itself (mq's).
        std::vector<const TcNode*> pending_classes, pending_qdiscs;
        for (const auto& c : original.classes) pending_classes.push_back(&c);
        for (const auto& q : original.qdiscs) {
            if (q.parent != TC_H_ROOT && q.handle != 0) pending_qdiscs.push_back(&q);
        }
        for (bool progress = true; progress && (!pending_classes.empty() || !pending_qdiscs.empty());) {
            progress = false;
            for (auto it = pending_classes.begin(); it != pending_classes.end();) {
                const TcNode& c = **it;
                // A top class dumps its parent as TC_H_ROOT; it is made under its own qdisc (the class id's major).
                const uint32_t parent = c.parent == TC_H_ROOT ? TC_H_MAJ(c.handle) : c.parent;
                const bool ready = TC_H_MIN(parent) == 0 ? qdisc_majors.count(TC_H_MAJ(parent)) > 0 : made_classes.count(parent) > 0;
                if (!ready) {
                    ++it;
                    continue;
                }
                step = describe_tc_node(TcObject::Class, c);
                auto req = tc_request(RTM_NEWTCLASS, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex, parent, c.handle);
                req.put_strz(TCA_KIND, c.kind);
                put_class_options(req, c);
                send(req);
                made_classes.insert(c.handle);
                it = pending_classes.erase(it);
                progress = true;
            }
            for (auto it = pending_qdiscs.begin(); it != pending_qdiscs.end();) {
                const TcNode& q = **it;
                const bool ready = made_classes.count(q.parent) > 0 || (!tree_classes.count(q.parent) && qdisc_majors.count(TC_H_MAJ(q.parent)) > 0);
                if (!ready) {
                    ++it;
                    continue;
                }
                step = describe_tc_node(TcObject::Qdisc, q);
                // REPLACE: the class already has the kernel's default leaf (an invisible pfifo), or mq its default child.
                auto req = tc_request(RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, ifindex, q.parent, q.handle);
                req.put_strz(TCA_KIND, q.kind);
                put_qdisc_options(req, q);
                send(req);
                qdisc_majors.insert(TC_H_MAJ(q.handle));
                it = pending_qdiscs.erase(it);
                progress = true;
            }
        }
        if (!pending_classes.empty() || !pending_qdiscs.empty()) {
            step = "order";
            const TcNode& n = pending_classes.empty() ? *pending_qdiscs.front() : *pending_classes.front();
            throw usage_error(describe_tc_node(pending_classes.empty() ? TcObject::Qdisc : TcObject::Class, n) + ": its parent is not in the tree");
        }
        // u32 priorities in the order of their hash table ids, per qdisc (see check_u32_ids), rules in handle order.
        std::vector<const TcNode*> filters;
        for (const auto& f : original.filters) filters.push_back(&f);
        std::stable_sort(filters.begin(), filters.end(), [](const TcNode* a, const TcNode* b) {
            return std::make_tuple(TC_H_MAJ(a->parent), a->handle & 0xFFF00000U, a->handle) <
                   std::make_tuple(TC_H_MAJ(b->parent), b->handle & 0xFFF00000U, b->handle);
        });
        for (const TcNode* f : filters) {
            step = describe_tc_node(TcObject::Filter, *f);
            auto req = tc_request(RTM_NEWTFILTER, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex, f->parent, f->handle,
                                  TC_H_MAKE(static_cast<uint32_t>(f->prio) << 16, htons(f->protocol)));
            req.put_strz(TCA_KIND, f->kind);
            req.put_u32(TCA_CHAIN, f->chain);
            put_filter_options(req, *f);
            send(req);
        }
    } catch (const Error& e) {
        throw tree_error(e, "restore the qdisc tree " + describe_qdisc_tree(original) + ": " + step, ifname);
    }
}

}  // namespace nm
