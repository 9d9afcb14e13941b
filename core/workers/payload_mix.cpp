#include "core/workers/payload_mix.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace nm {

void check_payload_mix(const std::vector<PayloadShare>& mix) {
    if (mix.size() > kMaxPayloadShares) {
        throw usage_error("payload mix: " + std::to_string(mix.size()) + " shares; at most " + std::to_string(kMaxPayloadShares));
    }
    uint64_t total = 0;  // at most 16 x 2^32: no overflow
    for (const auto& s : mix) total += s.weight;
    if (total == 0) throw usage_error("payload mix: no datagrams (every weight is 0)");
    if (total > kMaxPayloadPeriod) {
        throw usage_error("payload mix: weights add up to " + std::to_string(total) + "; at most " + std::to_string(kMaxPayloadPeriod));
    }
}

std::vector<uint32_t> payload_pattern(const std::vector<PayloadShare>& mix) {
    check_payload_mix(mix);
    int64_t total = 0;
    for (const auto& s : mix) total += s.weight;
    // Smooth weighted round robin: each step every share gains its weight, the largest current value is
    // picked and pays back the total. Over one period each share is picked exactly `weight` times.
    std::vector<int64_t> current(mix.size(), 0);
    std::vector<uint32_t> out;
    out.reserve(static_cast<size_t>(total));
    for (int64_t step = 0; step < total; ++step) {
        size_t best = mix.size();
        for (size_t i = 0; i < mix.size(); ++i) {
            if (mix[i].weight == 0) continue;
            current[i] += mix[i].weight;
            if (best == mix.size() || current[i] > current[best]) best = i;
        }
        current[best] -= total;
        out.push_back(mix[best].payload_bytes);
    }
    return out;
}

uint32_t max_payload(const std::vector<PayloadShare>& mix) {
    uint32_t m = 0;
    for (const auto& s : mix) m = std::max(m, s.payload_bytes);
    return m;
}

}  // namespace nm
