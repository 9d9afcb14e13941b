#include "core/workers/read_size_policy.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/host/proc_stats.hpp"

namespace nm {

std::optional<LinkCounters> net_dev_counters(std::string_view proc_net_dev, const std::string& iface) {
    const auto devs = parse_proc_net_dev(proc_net_dev);
    if (const auto it = devs.find(iface); it != devs.end()) return it->second;
    return std::nullopt;
}

bool rx_aggregated(const LinkCounters& before, const LinkCounters& after) {
    const uint64_t packets = counter_delta(before.rx_packets, after.rx_packets);
    const uint64_t bytes = counter_delta(before.rx_bytes, after.rx_bytes);
    return packets > 0 && bytes / packets >= ReadSizePolicy::kAggregatedPacketBytes;
}

std::string ReadSizePolicy::read_thread_net_dev() { return read_proc_file("/proc/thread-self/net/dev"); }

ReadSizePolicy::ReadSizePolicy(uint32_t write_size, const std::string& iface, bool paced, TimePoint now, NetDevReader read)
    : iface_(iface),
      read_(std::move(read)),
      buffer_size_(buffer_size_for(write_size)),
      read_size_(std::max<size_t>(write_size, kReadSize)),
      probe_end_(now + kProbeTime) {
    if (!paced && !iface_.empty()) probe_start_ = read_counters();
}

bool ReadSizePolicy::update(TimePoint now) {
    if (!probe_start_ || now < probe_end_) return false;
    const auto start = *probe_start_;
    probe_start_.reset();
    const auto end = read_counters();
    if (!end || !rx_aggregated(start, *end)) return false;
    read_size_ = buffer_size_;
    return true;
}

// Counters are a best effort: an interface that vanished or a /proc that cannot be read leaves the
// default read size, it does not fail the test.
std::optional<LinkCounters> ReadSizePolicy::read_counters() const {
    try {
        return net_dev_counters(read_(), iface_);
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace nm
