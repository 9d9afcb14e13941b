#pragma once
// Which end sends which data stream: the one rule client and server both follow, so neither decides it on
// its own. Stream ids run 0..total()-1. The client's streams come first: in forward and bidir it sends ids
// 0..n-1; the server sends 0..n-1 in reverse and n..2n-1 in bidir. The ids are the same for TCP and UDP;
// only how a stream comes to exist differs (TCP: the client opens one data connection per id, whoever sends
// on it; UDP: each sender makes its own sockets, and receivers are one SO_REUSEPORT group, not per stream).
#include <cstdint>

#include "core/traffic/traffic_types.hpp"

namespace nm {

/// The two ends of a test.
enum class End { Client, Server };

/// A half-open range of stream ids [first, end).
struct StreamIds {
    uint32_t first = 0;
    uint32_t end = 0;

    constexpr uint32_t size() const { return end - first; }
    constexpr bool empty() const { return end == first; }
    constexpr bool contains(uint32_t id) const { return id >= first && id < end; }
    friend constexpr bool operator==(const StreamIds&, const StreamIds&) = default;
};

/// The stream layout of one test: `n` streams per direction (spec.streams). Pure; both ends compute it.
struct StreamLayout {
    Protocol protocol = Protocol::Tcp;
    Direction direction = Direction::Forward;
    uint32_t n = 1;
    TrafficPattern pattern = TrafficPattern::Stream;

    /// The layout of a resolved spec (a spec with 0 streams is laid out as 1, as plan_for sizes it).
    static constexpr StreamLayout of(const TestSpec& spec) {
        return {spec.protocol, spec.direction, spec.streams > 0 ? spec.streams : 1, spec.pattern};
    }

    /// Stream ids run below this: 2n for bidir, n otherwise.
    constexpr uint32_t total() const { return direction == Direction::Bidir ? 2 * n : n; }

    /// The ids `end` sends (empty when it only receives).
    constexpr StreamIds sent_by(End end) const {
        switch (direction) {
            case Direction::Forward: return end == End::Client ? StreamIds{0, n} : StreamIds{};
            case Direction::Reverse: return end == End::Server ? StreamIds{0, n} : StreamIds{};
            case Direction::Bidir: return end == End::Client ? StreamIds{0, n} : StreamIds{n, 2 * n};
        }
        return {};
    }

    /// The ids `end` receives: what the other end sends.
    constexpr StreamIds received_by(End end) const { return sent_by(end == End::Client ? End::Server : End::Client); }

    constexpr bool sends(End end) const { return !sent_by(end).empty(); }
    constexpr bool receives(End end) const { return !received_by(end).empty(); }

    /// The end that sends stream `id` (id < total()).
    constexpr End sender_of(uint32_t id) const { return sent_by(End::Client).contains(id) ? End::Client : End::Server; }

    /// TCP data connections the client opens, one per stream id 0..total()-1 in either direction; UDP has
    /// none (each sender's sockets reach the other end's receiver group), nor has CRR (its flows connect
    /// anew for every transaction, to a listener of the test's own).
    constexpr uint32_t data_connections() const { return protocol == Protocol::Tcp && pattern != TrafficPattern::Crr ? total() : 0; }
};

}  // namespace nm
