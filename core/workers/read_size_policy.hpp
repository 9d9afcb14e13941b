#pragma once
// How a TCP receiver sizes its reads. Each wake-up of a sleeping reader is paid by the CPU that runs the
// receive softirq (on veth, the sender's). When GRO already hands over big chunks, waking per 256 KiB
// (SO_RCVLOWAT) and reading 1 MiB at a time saves that; without GRO (segments one by one) a late or long
// read delays the window updates and slows the flow instead (bench/vs_iperf3 showed both). So the receiver
// probes first: when the interface's received packets over the first 200 ms average at least 16 KiB
// (TSO/GRO aggregates), it switches to big reads. Paced tests, and interfaces it cannot read, keep reading
// as data comes.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/device/device_types.hpp"
#include "core/workers/engine_plan.hpp"

namespace nm {

/// The counters of `iface` in the text of /proc/net/dev; nullopt when it is not listed. Pure.
std::optional<LinkCounters> net_dev_counters(std::string_view proc_net_dev, const std::string& iface);

/// True when the packets received between two readings of one interface averaged at least
/// ReadSizePolicy::kAggregatedPacketBytes (false when none arrived). Pure.
bool rx_aggregated(const LinkCounters& before, const LinkCounters& after);

/// One TCP receiver thread's read size: starts at ReadSizePolicy::kReadSize (or the write size, if
/// larger) and switches once to kBigReadSize when the probe sees aggregated packets.
class ReadSizePolicy {
public:
    /// iperf3's read size: window updates stay frequent when segments arrive one by one.
    static constexpr size_t kReadSize = size_t{128} * 1024;
    /// With GRO-sized chunks: fewer calls per byte.
    static constexpr size_t kBigReadSize = 1 << 20;
    /// With big reads, wake the reader per 256 KiB (SO_RCVLOWAT), not per GRO packet.
    static constexpr int kRcvLowat = 256 * 1024;
    /// A mean received packet at least this large means TSO/GRO aggregates, never a wire-size segment (the
    /// largest MTU veth allows is 64 KiB, but a 9000-byte jumbo frame is well below this).
    static constexpr uint64_t kAggregatedPacketBytes = uint64_t{16} * 1024;
    /// How long the probe watches the interface before it decides.
    static constexpr std::chrono::milliseconds kProbeTime{200};

    /// Reads the text of /proc/net/dev for the calling thread's namespace; may throw nm::Error.
    using NetDevReader = std::function<std::string()>;
    /// /proc/thread-self/net/dev: the calling thread's namespace (/proc/net follows the thread-group leader).
    static std::string read_thread_net_dev();

    /// Starts the probe at `now` on `iface`, unless the test is paced or the interface is unknown or
    /// cannot be read (then the policy never changes).
    ReadSizePolicy(uint32_t write_size, const std::string& iface, bool paced, TimePoint now, NetDevReader read = read_thread_net_dev);

    /// Bytes to ask for in one recv() now.
    size_t read_size() const { return read_size_; }
    /// The largest read_size() can become: the receive buffer to allocate.
    size_t buffer_size() const { return buffer_size_; }
    /// buffer_size() of a policy for `write_size` (the server's memory budget counts it before a test runs).
    static size_t buffer_size_for(uint32_t write_size) { return std::max<size_t>(write_size, kBigReadSize); }

    /// Called once per loop turn. Returns true once, on the turn the probe ends and switches to big reads:
    /// the caller then sets SO_RCVLOWAT to kRcvLowat on its sockets.
    bool update(TimePoint now);

private:
    std::optional<LinkCounters> read_counters() const;

    std::string iface_;
    NetDevReader read_;
    size_t buffer_size_;
    size_t read_size_;
    TimePoint probe_end_;
    std::optional<LinkCounters> probe_start_;  ///< set while probing
};

}  // namespace nm
