#include "core/base/tuning_types.hpp"

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
    if (!original) return true;   // nothing was known of it: nothing to put back
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
    if (!qdisc_back(original.qdisc, now.qdisc)) t.qdisc_original = original.qdisc;
    return t;
}

}  // namespace nm
