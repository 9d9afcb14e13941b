#include "core/device/tuning_types.hpp"

namespace nm {
namespace {

// What of one kind moved: the original's value for every key whose value now differs (or is gone now:
// a queue that comes back once the channel count does).
template <typename Map, typename Out>
void moved(const Map& original, const Map& now, Out& out) {
    for (const auto& [key, was] : original) {
        const auto it = now.find(key);
        if (it == now.end() || it->second != was) out[key] = static_cast<typename Out::mapped_type>(was);
    }
}

}  // namespace

bool qdisc_back(const std::optional<QdiscState>& original, const std::optional<QdiscState>& now) {
    if (!original) return true;  // nothing was known of it: nothing to put back
    if (!now) return false;
    if (original->builtin()) return now->builtin() && now->kind == original->kind;
    return *now == *original;
}

TuningRequest tuning_back_to(const TuningState& original, const TuningState& now) {
    TuningRequest t;
    moved(original.channels, now.channels, t.channels);
    moved(original.rings, now.rings, t.rings);
    moved(original.coalesce, now.coalesce, t.coalesce);
    moved(original.rps, now.rps, t.rps);
    moved(original.xps, now.xps, t.xps);
    moved(original.irq_affinity, now.irq_affinity, t.irq_affinity);
    moved(original.napi, now.napi, t.napi);
    moved(original.sysctl, now.sysctl, t.sysctl);
    // A tree that could not be rebuilt was never replaced (the qdisc axis refuses such an interface), and one
    // from an older journal without a tree is not put back from its summary.
    if (original.qdisc_tree && original.qdisc_tree->refused.empty() && !qdisc_tree_back(*original.qdisc_tree, now.qdisc_tree)) {
        t.qdisc_original = original.qdisc_tree;
    } else if (!original.qdisc_tree && original.qdisc && original.qdisc->builtin() && !qdisc_back(original.qdisc, now.qdisc)) {
        // A journal of an older nicmatrix has only the root's summary: a kernel default is still put back
        // (by deleting the root), as then; a configured root is reported, not rebuilt from raw bytes.
        QdiscTree builtin;
        builtin.qdiscs.push_back(TcNode{original.qdisc->kind, 0, 0xFFFFFFFFU, 0, 0, 0, {}, {}});
        t.qdisc_original = builtin;
    }
    return t;
}

}  // namespace nm
