#pragma once
// The client end of the engine (`nicmatrix run`), and the real TrafficRunner the sweep uses.
#include <stop_token>
#include <string>

#include "core/session/traffic_runner.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace nm {

class ControlChannel;

struct TrafficClientOptions {
    /// The pre-shared key (the contents of --key-file): each test proves it holds it, and the server must
    /// prove the same before its figures are taken (core/control/test_auth.hpp). "" = tests are not authenticated
    /// (a server started with --key-file then refuses them).
    std::string key;
    /// The host this client says it runs on (hello's host_id); "" = this host's boot id. A server on the
    /// same host leaves a profile to the client's sampler; a test sets another id to be a second host.
    std::string host_id;
};

/// Connects to a TrafficServer, runs one test, and merges both ends' measurements. Stateless between
/// runs; one object may run many tests one after another. Runs in the calling thread's network namespace.
class TrafficClient final : public TrafficRunner {
public:
    explicit TrafficClient(TrafficClientOptions options = {});

    /// Throws nm::Error: Usage for a bad spec or host; Refused when the server is busy, over one of its
    /// limits, wants a key this client lacks, or (with a key) does not authenticate; Failed when the
    /// server cannot be reached or the test cannot be set up. Once data flows, problems are a status:
    /// Stalled, PeerLost (the server vanished: control connection closed or silent), Limited (the server
    /// ended it at its --max-duration), Interrupted (`stop`).
    RunResult run(const TestSpec& requested, std::stop_token stop) override;
    /// run(), telling `live` of each interval of this end's counts as it ends (TrafficRunner::run_live).
    RunResult run_live(const TestSpec& requested, std::stop_token stop, const LiveSink& live) override;

    /// Goes as far as the server's "ready" (authenticating with the key when it wants one), then aborts.
    /// A busy server passes: it would take the test later.
    void check_access(const TestSpec& requested) override;

private:
    /// Exchanges hello (`hello`'s fields, such as the host id and a profile's category table, with the
    /// spec) and the authentication up to the server's "ready", which it returns; with `busy`, a "busy"
    /// refusal is returned too (and *busy set) instead of thrown.
    Json open_test(ControlChannel& channel, const TestSpec& requested, const TestSpec& spec, Json hello, bool* busy = nullptr);

    TrafficClientOptions options_;
};

}  // namespace nm
