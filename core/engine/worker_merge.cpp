#include "core/engine/worker_merge.hpp"

#include <algorithm>
#include <map>

namespace nm {

std::vector<StreamResult> merge_streams(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double duration_s) {
    std::map<uint32_t, StreamResult> by_id;
    for (const auto& o : outs) {
        for (const auto& s : o->streams) {
            auto [it, fresh] = by_id.try_emplace(s.id, s);
            if (fresh) continue;
            auto& m = it->second;
            m.bytes += s.bytes;
            m.packets += s.packets;
            if (m.loss && s.loss) *m.loss += *s.loss;
        }
    }
    std::vector<StreamResult> v;
    for (auto& [id, s] : by_id) {
        s.throughput_bps = duration_s > 0 ? static_cast<double>(s.bytes) * 8 / duration_s : 0;
        v.push_back(s);
    }
    return v;
}

std::vector<IntervalSample> merge_intervals(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s, double duration_s) {
    std::vector<IntervalSample> v;
    if (interval_s <= 0) return v;
    for (const auto& o : outs) {
        const auto& w = o->window;
        for (size_t k = 0; k < w.interval_bytes.size(); ++k) {
            if (k >= v.size()) v.resize(k + 1);
            v[k].bytes += w.interval_bytes[k];
            v[k].packets += w.interval_packets[k];
        }
    }
    for (size_t k = 0; k < v.size(); ++k) {
        v[k].start_s = static_cast<double>(k) * interval_s;
        v[k].end_s = std::min(static_cast<double>(k + 1) * interval_s, std::max(duration_s, v[k].start_s));
    }
    // The window's end comes a little after the last full interval (the stop is seen within a poll): a
    // sliver of a millisecond would be a sample of nothing (a rate from a handful of bytes), so it joins
    // the interval before it, which then ends at the window's end. The counts still add up to the window's.
    if (v.size() >= 2 && v.back().end_s - v.back().start_s < kIntervalSliver * interval_s) {
        const IntervalSample last = v.back();
        v.pop_back();
        v.back().bytes += last.bytes;
        v.back().packets += last.packets;
        v.back().end_s = last.end_s;
    }
    // The same sliver with nothing counted in it (the sender's last bytes came before the edge) has no
    // interval of its own: the last one still ends where the window does, so the intervals span it.
    if (!v.empty() && duration_s > v.back().end_s && duration_s - v.back().end_s < kIntervalSliver * interval_s) v.back().end_s = duration_s;
    for (auto& iv : v) {
        const double span = iv.end_s - iv.start_s;
        iv.throughput_bps = span > 0 ? static_cast<double>(iv.bytes) * 8 / span : 0;
        iv.packets_per_s = span > 0 ? static_cast<double>(iv.packets) / span : 0;
    }
    return v;
}

RrEndCounts merge_rr(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s, double duration_s) {
    RrEndCounts r;
    for (const auto& o : outs) {
        r.transactions += o->rr.transactions;
        r.lost += o->rr.lost;
        r.late += o->rr.late;
        r.latency.merge(o->rr.latency);
    }
    for (const auto& iv : merge_intervals(outs, interval_s, duration_s)) {
        r.intervals.push_back({iv.start_s, iv.end_s, iv.packets, iv.packets_per_s});
    }
    return r;
}

SocketKnobs merge_knobs(const std::vector<const std::vector<std::unique_ptr<WorkerOutput>>*>& outs, bool skip_rx_copy) {
    SocketKnobs k;
    bool have = false;
    ZeroCopyStats zc;
    RxSpinStats spin;
    for (const auto* group : outs) {
        for (const auto& o : *group) {
            if (!have && o->knobs) {
                k = *o->knobs;
                have = true;
            }
            zc += o->zerocopy;
            spin += o->rx_spin;
        }
    }
    k.zerocopy = zc;
    k.rx_spin = spin;
    k.skip_rx_copy = skip_rx_copy;
    return k;
}

}  // namespace nm
