#pragma once
// A whole qdisc tree of one interface (issue 36): its qdiscs, classes and filters, as
// `tc qdisc/class/filter show dev IF` sees them, with every option decoded into named integers. This is
// what the journal keeps before a root qdisc is replaced, and what restore rebuilds from typed encoders
// (ethtool_ctl/qdisc_tree.cpp); no raw TCA_OPTIONS bytes are kept or sent. Only the kinds and options on
// the allow-list below can be rebuilt exactly; a tree with anything else is refused (`refused` says why)
// and the qdisc axis leaves that interface alone. JSON in json_codec_tuning.cpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"

namespace nm {

/// What a TcNode is: a qdisc, a class or a filter.
enum class TcObject { Qdisc, Class, Filter };

/// One qdisc, class or filter. Handles and parents are the kernel's 32-bit values (major << 16 | minor;
/// TC_H_ROOT = 0xffffffff for the root qdisc's parent). A qdisc or class handle of 0 is one the kernel
/// attached by itself (the default root, mq's per-queue children): restore lets the kernel make it again.
struct TcNode {
    std::string kind;                                    ///< "htb", "tbf", "u32", ...
    uint32_t handle = 0;                                 ///< qdisc handle, class id, or filter handle (u32: 0x80000800 is 800::800)
    uint32_t parent = 0;                                 ///< the qdisc or class it hangs from
    uint16_t protocol = 0;                               ///< filters: the ETH_P_* protocol in host order (0x0800 ip, 0x0003 all)
    uint16_t prio = 0;                                   ///< filters: the preference ("pref", "prio")
    uint32_t chain = 0;                                  ///< filters: the chain index
    std::map<std::string, uint64_t> options;             ///< scalar options by the allow-list's names
    std::map<std::string, std::vector<uint64_t>> lists;  ///< list options (u32: "keys", 4 numbers a key)

    bool operator==(const TcNode& o) const {
        return kind == o.kind && handle == o.handle && parent == o.parent && protocol == o.protocol && prio == o.prio && chain == o.chain &&
               options == o.options && lists == o.lists;
    }
    bool operator<(const TcNode& o) const;
};

/// The tree: each list in canonical order (sorted), so two readings of the same tree compare equal.
struct QdiscTree {
    std::vector<TcNode> qdiscs;
    std::vector<TcNode> classes;
    std::vector<TcNode> filters;
    /// Why this tree cannot be rebuilt exactly ("qdisc netem 1: (kind not on the allow-list)"); empty when it can.
    std::string refused;

    /// The root qdisc (parent TC_H_ROOT), or nullptr when none was dumped.
    const TcNode* root() const;
    bool operator==(const QdiscTree& o) const { return qdiscs == o.qdiscs && classes == o.classes && filters == o.filters && refused == o.refused; }
};

/// The codec checks the value is an object and canonicalizes what it read.
constexpr auto json_fields_and_more(const QdiscTree*) {
    using S = QdiscTree;
    return field_list(field("qdiscs", &S::qdiscs), field("classes", &S::classes), field("filters", &S::filters),
                      field("refused", &S::refused, kFieldOmitEmpty));
}

/// The qdisc kinds nicmatrix captures, rebuilds and lets a sweep or a client ask for: noqueue, mq,
/// pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel. Anything else (and so any kernel module autoload) is refused.
bool qdisc_kind_allowed(const std::string& kind);

/// The filter kinds a tree may hold: u32 (one root hash table per priority, no links, actions or marks).
bool filter_kind_allowed(const std::string& kind);

/// The option names (scalars and lists) a node of `kind` may carry: empty when none (or the kind is not allowed).
std::vector<std::string> allowed_tc_options(TcObject what, const std::string& kind);

/// Whether `tree` holds only allow-listed kinds and options, each node once, one root: "" when it does,
/// otherwise why not, naming the node. Used on every tree read back from a journal before it is rebuilt.
std::string check_qdisc_tree(const QdiscTree& tree);

/// Puts the lists in canonical order (sorted), as every reader of a tree should before comparing.
void canonicalize(QdiscTree& tree);

/// tc's spelling of a handle: "1:", "1:10", "root", ":1" (for a major of 0).
std::string tc_handle(uint32_t handle);

/// One node in words, for errors and reports: "qdisc htb 1: root", "class htb 1:10 parent 1:1",
/// "filter u32 parent 1: pref 1 handle 800::800".
std::string describe_tc_node(TcObject what, const TcNode& node);

/// The tree in a line: "htb 1: (3 classes, 2 qdiscs below, 1 filter)".
std::string describe_qdisc_tree(const QdiscTree& tree);

/// Whether the tree `now` is `original` again: the same qdiscs, classes and filters with the same options.
bool qdisc_tree_back(const QdiscTree& original, const std::optional<QdiscTree>& now);

/// Whether the tree `now` is still the one nicmatrix installed, judged by its root: the root's kind and
/// handle are `installed_root`'s and its options equal (counters are not options). For restore's "put the
/// tree back only when the current root is still what we wrote".
bool qdisc_root_is(const TcNode& installed_root, const std::optional<QdiscTree>& now);

}  // namespace nm
