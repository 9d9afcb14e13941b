#pragma once
#include <stop_token>

#include "core/base/traffic_types.hpp"

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

    /// Checks, without running a test, that the server named by `spec` would take one from this client (its
    /// key, its limits for `spec`), so a sweep finds out before it changes anything. Throws what run()
    /// would throw before data flows. The default checks nothing.
    virtual void check_access(const TestSpec& spec) { (void)spec; }
};

}  // namespace nm
