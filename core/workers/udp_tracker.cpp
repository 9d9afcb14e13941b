#include "core/workers/udp_tracker.hpp"

#include <cstdlib>

namespace nm {

bool UdpSequenceTracker::test_and_set(uint64_t seq) {
    uint64_t& word = seen_[(seq / 64) % seen_.size()];
    const uint64_t bit = uint64_t{1} << (seq % 64);
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
}

void UdpSequenceTracker::on_datagram(uint64_t seq, int64_t send_ns, int64_t arrival_ns) {
    if (!any_ || seq >= next_) {
        // Forget what the ring held for the sequence numbers we jump over, so they read as unseen.
        const uint64_t from = any_ ? next_ : seq;
        if (seq - from >= kWindow) {
            std::fill(seen_.begin(), seen_.end(), 0);
        } else {
            for (uint64_t s = from; s < seq; ++s) clear(s);
        }
        clear(seq);
        test_and_set(seq);
        next_ = seq + 1;
        any_ = true;
    } else if (next_ - seq <= kWindow && test_and_set(seq)) {
        ++duplicates_;
        return;
    } else {
        // A late arrival; one older than the ring is too old to tell apart from a duplicate, and a late
        // arrival is far more likely.
        ++reordered_;
    }
    const int64_t transit = arrival_ns - send_ns;
    if (received_ > 0) {
        const double d = static_cast<double>(std::llabs(transit - last_transit_));
        jitter_ns_ += (d - jitter_ns_) / 16.0;
    }
    last_transit_ = transit;
    ++received_;
}

}  // namespace nm
