#pragma once
// One end's part in a profiled test (TestSpec::profile): the host's sampler armed before the engine starts,
// told the measured window by the engine (a WindowObserver), and the profile built after the test with the
// engine's thread ids. Client and server each make one when they profile their host; on one host (the
// lab) only the client does, and its profile stands for both ends (combine_reports).
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine.hpp"
#include "core/profile/cpu_profile.hpp"
#include "core/profile/host_profiler.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

class EndProfiler final : public WindowObserver {
public:
    /// Arms the sampler at `hz`. Throws nm::Error (Usage) when the host does not allow profiling (the
    /// message names the sysctl and the value needed) or the rate is out of range.
    EndProfiler(uint32_t hz, CategoryTable table);

    void window_started(TimePoint at) override { profiler_.start(at); }
    void window_ended(TimePoint at) override { profiler_.stop(at); }

    /// The window's profile, samples of `send` and `recv` counted as the engine's; none when the window
    /// never started. Call once, after EndEngine::finish.
    std::optional<CpuProfile> finish(const std::vector<int32_t>& send, const std::vector<int32_t>& recv);

private:
    profile::HostProfiler profiler_;
    CategoryTable table_;
};

/// Checks, before a test or a sweep changes anything, that `spec`'s profile can be taken here: the rate,
/// the category table (its file parses), the permissions, and that the kernel opens the event on every CPU.
/// Does nothing when spec.profile is false. Throws nm::Error (Usage) naming what to change.
void check_profiling(const TestSpec& spec);

/// This host's boot id (/proc/sys/kernel/random/boot_id): ends with the same one share a kernel, so one
/// host (network namespaces do not change it). "" when it cannot be read.
std::string host_boot_id();

/// gethostname(), for the profile's `host`.
std::string host_name();

}  // namespace nm
