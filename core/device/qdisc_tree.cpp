#include "core/device/qdisc_tree.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <tuple>

namespace nm {
namespace {

constexpr uint32_t kRoot = 0xFFFFFFFFU;  // TC_H_ROOT

// The allow-list: each kind a tree may hold, with the options its encoder writes back. An option a kind's
// decoder finds and this list lacks makes the tree refused, so the list is also what "exactly" means.
struct KindRule {
    TcObject what;
    const char* kind;
    std::initializer_list<const char*> scalars;
    std::initializer_list<const char*> lists;
};

const KindRule kRules[] = {
    {TcObject::Qdisc, "noqueue", {}, {}},
    {TcObject::Qdisc, "mq", {}, {}},
    {TcObject::Qdisc, "pfifo_fast", {}, {}},
    {TcObject::Qdisc, "pfifo", {"limit"}, {}},
    {TcObject::Qdisc, "bfifo", {"limit"}, {}},
    // rate in bytes/s as the kernel keeps it; buffer and mtu in psched ticks (64 ns) as it dumps them.
    {TcObject::Qdisc, "tbf", {"rate", "overhead", "mpu", "linklayer", "limit", "buffer", "mtu"}, {}},
    {TcObject::Qdisc, "htb", {"r2q", "default", "direct_qlen"}, {}},
    {TcObject::Qdisc,
     "fq_codel",
     {"target", "limit", "interval", "ecn", "flows", "quantum", "ce_threshold", "drop_batch_size", "memory_limit", "ce_threshold_selector",
      "ce_threshold_mask"},
     {}},
    {TcObject::Class,
     "htb",
     {"rate", "rate_overhead", "rate_mpu", "rate_linklayer", "ceil", "ceil_overhead", "ceil_mpu", "ceil_linklayer", "buffer", "cbuffer", "quantum",
      "prio"},
     {}},
    // The selector of struct tc_u32_sel, numbers in host order; keys: value, mask, offset, offmask per key.
    {TcObject::Filter, "u32", {"classid", "flags", "sel_flags", "offshift", "offmask", "off", "offoff", "hoff", "hmask"}, {"keys"}},
};

const KindRule* rule(TcObject what, const std::string& kind) {
    for (const auto& r : kRules) {
        if (r.what == what && kind == r.kind) return &r;
    }
    return nullptr;
}

const char* object_name(TcObject what) { return what == TcObject::Qdisc ? "qdisc" : what == TcObject::Class ? "class" : "filter"; }

auto key_of(const TcNode& n) { return std::tie(n.parent, n.prio, n.protocol, n.chain, n.handle, n.kind); }

}  // namespace

bool TcNode::operator<(const TcNode& o) const {
    if (key_of(*this) != key_of(o)) return key_of(*this) < key_of(o);
    return std::tie(options, lists) < std::tie(o.options, o.lists);
}

const TcNode* QdiscTree::root() const {
    for (const auto& q : qdiscs) {
        if (q.parent == kRoot) return &q;
    }
    return nullptr;
}

bool qdisc_kind_allowed(const std::string& kind) { return rule(TcObject::Qdisc, kind) != nullptr; }

bool filter_kind_allowed(const std::string& kind) { return rule(TcObject::Filter, kind) != nullptr; }

std::vector<std::string> allowed_tc_options(TcObject what, const std::string& kind) {
    std::vector<std::string> out;
    if (const KindRule* r = rule(what, kind)) {
        for (const char* s : r->scalars) out.emplace_back(s);
        for (const char* s : r->lists) out.emplace_back(s);
    }
    return out;
}

std::string tc_handle(uint32_t handle) {
    if (handle == kRoot) return "root";
    char buf[24];
    const unsigned major = handle >> 16, minor = handle & 0xFFFFU;
    if (minor == 0) std::snprintf(buf, sizeof buf, "%x:", major);
    else if (major == 0) std::snprintf(buf, sizeof buf, ":%x", minor);
    else std::snprintf(buf, sizeof buf, "%x:%x", major, minor);
    return buf;
}

std::string describe_tc_node(TcObject what, const TcNode& n) {
    std::string out = object_name(what);
    out += ' ';
    out += n.kind;
    if (what == TcObject::Filter) {
        out += " parent ";
        out += tc_handle(n.parent);
        out += " pref ";
        out += std::to_string(n.prio);
        if (n.chain) {
            out += " chain ";
            out += std::to_string(n.chain);
        }
        if (n.handle) {
            char buf[48];
            // u32's handle as tc prints it: hash table id, bucket, node ("800::800").
            const unsigned bucket = (n.handle >> 12) & 0xFFU;
            if (n.kind == "u32" && bucket == 0) std::snprintf(buf, sizeof buf, "%x::%x", n.handle >> 20, n.handle & 0xFFFU);
            else if (n.kind == "u32") std::snprintf(buf, sizeof buf, "%x:%x:%x", n.handle >> 20, bucket, n.handle & 0xFFFU);
            else std::snprintf(buf, sizeof buf, "%u", n.handle);
            out += " handle ";
            out += buf;
        }
        return out;
    }
    out += ' ';
    out += tc_handle(n.handle);
    if (n.parent == kRoot) {
        out += " root";
    } else {
        out += " parent ";
        out += tc_handle(n.parent);
    }
    return out;
}

std::string describe_qdisc_tree(const QdiscTree& t) {
    const TcNode* r = t.root();
    std::string out = r ? r->kind + " " + tc_handle(r->handle) : std::string("(no root qdisc)");
    const size_t below = t.qdiscs.size() - (r ? 1 : 0);
    if (!t.classes.empty() || below || !t.filters.empty()) {
        out += " (" + std::to_string(t.classes.size()) + " classes, " + std::to_string(below) + " qdiscs below, " + std::to_string(t.filters.size()) +
               " filters)";
    }
    return out;
}

std::string check_qdisc_tree(const QdiscTree& t) {
    const auto check = [](TcObject what, const std::vector<TcNode>& nodes) -> std::string {
        std::set<std::tuple<uint32_t, uint16_t, uint16_t, uint32_t, uint32_t>> seen;
        for (const auto& n : nodes) {
            const KindRule* r = rule(what, n.kind);
            if (r == nullptr) return describe_tc_node(what, n) + ": the kind is not on nicmatrix's allow-list";
            for (const auto& option : n.options) {
                const std::string& name = option.first;
                if (std::none_of(r->scalars.begin(), r->scalars.end(), [&](const char* s) { return name == s; })) {
                    return describe_tc_node(what, n) + ": option " + name + " is not one nicmatrix can set";
                }
            }
            for (const auto& list : n.lists) {
                const std::string& name = list.first;
                const auto& v = list.second;
                if (std::none_of(r->lists.begin(), r->lists.end(), [&](const char* s) { return name == s; })) {
                    return describe_tc_node(what, n) + ": option " + name + " is not one nicmatrix can set";
                }
                if (name == "keys" && (v.size() % 4 != 0 || v.size() > size_t{4} * 128))
                    return describe_tc_node(what, n) + ": keys must be 4 numbers a key";
            }
            const auto key = what == TcObject::Filter ? std::make_tuple(n.parent, n.prio, n.protocol, n.chain, n.handle)
                                                      : std::make_tuple(what == TcObject::Qdisc && n.handle == 0 ? n.parent : n.handle, uint16_t{0},
                                                                        uint16_t{0}, uint32_t{0}, uint32_t{0});
            if (!seen.insert(key).second) return describe_tc_node(what, n) + ": twice in the tree";
        }
        return {};
    };
    for (const auto& [what, nodes] :
         {std::pair{TcObject::Qdisc, &t.qdiscs}, std::pair{TcObject::Class, &t.classes}, std::pair{TcObject::Filter, &t.filters}}) {
        if (std::string why = check(what, *nodes); !why.empty()) return why;
    }
    const size_t roots = std::count_if(t.qdiscs.begin(), t.qdiscs.end(), [](const TcNode& q) { return q.parent == kRoot; });
    if (roots != 1) return "a qdisc tree needs exactly one root qdisc, this one has " + std::to_string(roots);
    return {};
}

void canonicalize(QdiscTree& t) {
    std::sort(t.qdiscs.begin(), t.qdiscs.end());
    std::sort(t.classes.begin(), t.classes.end());
    std::sort(t.filters.begin(), t.filters.end());
}

bool qdisc_tree_back(const QdiscTree& original, const std::optional<QdiscTree>& now) {
    if (!now) return false;
    return original.qdiscs == now->qdiscs && original.classes == now->classes && original.filters == now->filters;
}

bool qdisc_root_is(const TcNode& installed_root, const std::optional<QdiscTree>& now) {
    if (!now) return false;
    const TcNode* r = now->root();
    return r != nullptr && r->kind == installed_root.kind && r->handle == installed_root.handle && r->options == installed_root.options &&
           r->lists == installed_root.lists;
}

}  // namespace nm
