#include "core/workers/tcp_write_size.hpp"

#include <algorithm>

namespace nm {

uint32_t tcp_send_unit(uint32_t mss) {
    if (mss == 0) return 0;
    const uint32_t segments = std::max<uint32_t>(1, (kLegacyGsoMaxBytes - kMaxTcpHeaderBytes - 1) / mss);
    return segments * mss;
}

uint32_t whole_unit_write_size(uint32_t mss, uint32_t at_most) {
    if (mss == 0 || mss > at_most) return at_most;
    const uint32_t unit = tcp_send_unit(mss);
    if (unit <= at_most) return at_most / unit * unit;
    return at_most / mss * mss;
}

}  // namespace nm
