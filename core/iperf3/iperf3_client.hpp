#pragma once
// A TrafficRunner whose far end is a stock `iperf3 -s` (--peer-kind iperf3): this end runs the engine's
// own TCP stream workers, the far end is driven through iperf3's control protocol (core/iperf3/iperf3_protocol.hpp),
// and the run records what the server reported of itself (RunResult::iperf3_peer).
#include <stop_token>
#include <string>

#include "core/session/traffic_runner.hpp"

namespace nm {

/// Runs TCP stream tests (forward, -R, --bidir) against an iperf3 server. Stateless between runs; runs in
/// the calling thread's network namespace.
///
/// What the run holds: this end's figures as for any run (its engine's counts over its window, its CPU,
/// its interface). Forward, the throughput is what this end's senders wrote over the window (the far end's
/// own count over its own window is in iperf3_peer); with -R, what this end's receivers read. The far
/// end's measurement is absent. iperf3_peer has the server's CPU (iperf3's cpu_util), its bytes per stream,
/// its retransmits when it sent, its window, and its version when it reports one (a server run with --json).
class Iperf3Client final : public TrafficRunner {
public:
    /// Throws nm::Error: Usage for a spec iperf3 cannot run with this engine (iperf3::check_supported) or
    /// a bad host; Refused when the server is busy (ACCESS_DENIED); Failed when nothing listens on the
    /// port, when what answers is not an iperf3 server (naming the byte it sent instead of PARAM_EXCHANGE,
    /// or that it sent none), or when the server reports an error (SERVER_ERROR with its error number).
    /// Once data flows, problems are a status: Stalled, PeerLost (the server ended the test, closed or
    /// stopped answering), Interrupted (`stop`; the server is sent CLIENT_TERMINATE).
    RunResult run(const TestSpec& spec, std::stop_token stop) override;
    RunResult run_live(const TestSpec& requested, std::stop_token stop, const LiveSink& live) override;

    /// Runs an empty test (parameters, streams, TEST_END at once, results, IPERF_DONE): a whole conversation
    /// the server accepts without an error in its log, which a probe that only connects would leave.
    void check_access(const TestSpec& requested) override;
};

}  // namespace nm
