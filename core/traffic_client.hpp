#pragma once
// The client end of the engine (`nicmatrix run`), and the real TrafficRunner the sweep uses.
#include <stop_token>

#include "core/traffic_runner.hpp"

namespace nm {

/// Connects to a TrafficServer, runs one test, and merges both ends' measurements. Stateless between
/// runs; one object may run many tests one after another. Runs in the calling thread's network namespace.
class TrafficClient final : public TrafficRunner {
public:
    /// Throws nm::Error: Usage for a bad spec or host; Refused when the server is busy; Failed when the
    /// server cannot be reached or the test cannot be set up. Once data flows, problems are a status:
    /// Stalled, PeerLost (the server vanished: control connection closed or silent), Interrupted (`stop`).
    RunResult run(const TestSpec& spec, std::stop_token stop) override;
};

}  // namespace nm
