#pragma once
// What one end's engine runs, fixed before it starts: the plan (the test's sizes, rates and socket knobs,
// the data sockets dealt out to its threads) and the timeline of its measured window. EndEngine
// (core/engine/engine.hpp) runs it; every worker reads it (core/workers/worker.hpp), so it sits below both.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/unique_fd.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {

using TimePoint = std::chrono::steady_clock::time_point;

/// When an end moves data and when it measures: [start, window_start) is the warm-up (--omit),
/// [window_start, window_end) the measured window; window_end is max() when the test is a byte count.
struct Timeline {
    TimePoint start{};
    TimePoint window_start{};
    TimePoint window_end = TimePoint::max();
    std::chrono::nanoseconds interval{0};  ///< per-interval samples; 0 = none
};

/// A data socket and the stream id it carries.
struct DataStream {
    UniqueFd fd;
    uint32_t id = 0;
};

/// What one end does, fixed before it starts.
struct EnginePlan {
    Protocol protocol = Protocol::Tcp;
    TrafficPattern pattern = TrafficPattern::Stream;  ///< with protocol: which workers run (worker_kind)
    uint32_t write_size = 0;                          ///< TCP write size or UDP payload, bytes (the largest, with a mix)
    /// TCP: write_size is an upper bound, and each stream writes the largest whole number of send units
    /// under it for its MSS (whole_unit_write_size); false = exactly write_size (-l).
    bool whole_units = false;
    /// UDP: payload of datagram `seq` is payload_pattern[seq % size()] (payload_pattern()); empty = write_size.
    std::vector<uint32_t> payload_pattern;
    uint64_t bytes_per_stream = 0;  ///< byte-count test: payload bytes each send stream moves; 0 = timed
    double rate_per_stream = 0;     ///< UDP: datagrams/s per stream; TCP: bytes/s per stream; 0 = unlimited
    bool udp_gso = false;
    bool udp_gro = false;
    uint32_t stream_count = 0;                         ///< stream ids are below this (UDP receivers size their trackers by it)
    Direction send_direction = Direction::Forward;     ///< label of the streams this end sends
    std::vector<std::vector<DataStream>> send_groups;  ///< one group per sender thread
    std::vector<std::vector<DataStream>> recv_groups;  ///< one group per receiver thread
    std::string iface;                                 ///< interface for counters; "" = unknown
    std::chrono::milliseconds stall_timeout{3000};
    /// UDP: the test's cookie, written into every datagram sent; a receiver counts only datagrams that
    /// carry it and come from `udp_peer`'s address (when set: len > 0).
    uint32_t udp_cookie = 0;
    SocketAddress udp_peer;
    std::vector<uint32_t> cpus;  ///< CPUs every worker thread is pinned to; empty = not pinned
    // Request/response tests (pattern Rr, Crr).
    uint32_t request_size = 1;
    uint32_t response_size = 1;
    uint32_t rr_burst = 1;     ///< requests in flight per flow
    SocketOptions socket;      ///< the test's socket knobs (workers apply zerocopy, MSG_TRUNC, CRR's per connection)
    End end = End::Client;     ///< which end this plan is for
    SocketAddress connect_to;  ///< CRR client: where each transaction's connection goes
    std::string bind;          ///< CRR client: the local address to connect from ("" = any)
    SocketAddress peer;        ///< the other end's control address: CRR and UDP RR responders answer only it
};

}  // namespace nm
