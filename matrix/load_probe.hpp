#pragma once
// The sweep's look at the whole machine before each repetition: is something else using the CPUs (another
// job, a noisy neighbour, the hypervisor's steal)? Behind an interface so the runner's waiting and marking
// are unit-tested with a scripted load.
#include <chrono>
#include <stop_token>

#include "core/base/clock.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

class LoadProbe {
public:
    virtual ~LoadProbe() = default;
    /// System-wide busy and steal over about `window` (the call takes that long; less when `stop` is
    /// requested). Sets busy_pct, steal_pct and window_s. Throws nm::Error when the figures cannot be read.
    virtual BackgroundLoad sample(std::chrono::milliseconds window, std::stop_token stop) = 0;
};

/// /proc/stat's aggregate "cpu" line read twice, `window` apart. The file is system-wide (the same in
/// every network namespace), so the lab's namespaces do not matter; it says nothing about a peer host.
class ProcStatLoadProbe final : public LoadProbe {
public:
    explicit ProcStatLoadProbe(Clock& clock) : clock_(clock) {}
    BackgroundLoad sample(std::chrono::milliseconds window, std::stop_token stop) override;

private:
    Clock& clock_;
};

}  // namespace nm
