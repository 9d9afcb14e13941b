#pragma once
#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

namespace nm {

/// What a path probe found.
struct ProbeResult {
    bool passed = false;
    std::string detail;  ///< what was sent and what came back (or did not), for the cell's error text
};

/// The preflight before a cell is measured: does the path carry full-size frames at this MTU with the
/// don't-fragment bit set? A path that silently drops them (a switch port or middle hop at 1500 while
/// the ends use 9000) would otherwise be measured as a trickle for the whole cell. The real
/// implementation is IcmpPathProbe; tests use a fake.
class PathProbe {
public:
    virtual ~PathProbe() = default;

    /// Sends one packet of exactly `mtu` bytes (IP header included) with DF set towards the server end
    /// and waits at most `timeout` for its echo. Returns passed = false when nothing came back in time or
    /// the stop was requested. Throws nm::Error (Failed) when the probe cannot be sent at all.
    virtual ProbeResult probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) = 0;
};

}  // namespace nm
