#pragma once
#include <functional>
#include <stop_token>

#include "core/traffic/traffic_types.hpp"

namespace nm {

/// Runs one test against a server and returns both ends' measurements. The matrix layer sees only this
/// interface; the real implementation is the engine's client, tests use a fake.
class TrafficRunner {
public:
    virtual ~TrafficRunner() = default;

    /// Runs `spec` to its end, or until `stop` is requested (then the result has status Interrupted).
    /// A path that stops passing packets ends the run with status Stalled, never a hang. Throws nm::Error
    /// when the test cannot start (unreachable server, bad spec).
    virtual RunResult run(const TestSpec& spec, std::stop_token stop) = 0;

    /// As run(), and while the test runs `live` is told each interval of this end's own counts as it ends
    /// (a spec with interval_s > 0). The default runs without telling anything.
    using LiveSink = std::function<void(const LiveInterval&)>;
    virtual RunResult run_live(const TestSpec& spec, std::stop_token stop, const LiveSink& live) {
        (void)live;
        return run(spec, std::move(stop));
    }

    /// Checks, without running a test, that the server named by `spec` would take one from this client (its
    /// key, its limits for `spec`), so a sweep finds out before it changes anything. Throws what run()
    /// would throw before data flows. The default checks nothing.
    virtual void check_access(const TestSpec& spec) { (void)spec; }
};

}  // namespace nm
