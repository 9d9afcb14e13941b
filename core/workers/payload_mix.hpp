#pragma once
// The order in which a UDP sender cycles through a payload-size mix (an IMIX): the shares interleaved as
// evenly as their weights allow, so any stretch of the send sequence, and any batch, carries close to
// the mix's proportions instead of 7 small datagrams followed by 4 medium and 1 large.
#include <cstdint>
#include <vector>

#include "core/traffic/traffic_types.hpp"

namespace nm {

/// The most shares a mix may have: IMIX definitions have 3 to 7; the cap keeps building the pattern cheap.
inline constexpr size_t kMaxPayloadShares = 16;
/// The most datagrams one period of the pattern may hold (the sum of the weights).
inline constexpr uint64_t kMaxPayloadPeriod = 1'000'000;

/// Checks a mix without building its pattern: at most kMaxPayloadShares shares, weights adding up to
/// 1..kMaxPayloadPeriod. Throws nm::Error (Usage) saying which.
void check_payload_mix(const std::vector<PayloadShare>& mix);

/// One period of the send sequence: sum(weights) payload sizes, each share's size `weight` times, spread
/// by smooth weighted round robin (nginx's algorithm: deterministic, maximally even). Shares with weight 0
/// are left out. Throws nm::Error (Usage) when check_payload_mix() does.
std::vector<uint32_t> payload_pattern(const std::vector<PayloadShare>& mix);

/// Largest payload of a mix, bytes (0 for an empty mix).
uint32_t max_payload(const std::vector<PayloadShare>& mix);

}  // namespace nm
