#pragma once
// From named samples to a CpuProfile: every sample is one tick of one CPU, sorted by the category table
// and by the task it interrupted. Pure: tested on canned samples.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/profile/cpu_profile.hpp"

namespace nm::profile {

/// A sample with its instruction pointer named.
struct NamedSample {
    uint32_t cpu = 0;
    int32_t pid = 0;
    int32_t tid = 0;
    bool user = false;
    std::string symbol;  ///< "[unknown]" when nothing names the address
};

/// How samples are told apart by task.
struct TaskClasses {
    std::set<int32_t> send;  ///< the engine's threads that send data (of either end on this host)
    std::set<int32_t> recv;  ///< and that receive it
    /// The name of task `tid` of process `pid` ("ksoftirqd/1", "cc1plus").
    std::function<std::string(int32_t pid, int32_t tid)> comm;
};

/// What the window was.
struct WindowFacts {
    std::string host;
    uint32_t hz = 0;
    std::vector<uint32_t> cpus;  ///< the CPUs sampled
    double start_monotonic_s = 0;
    double end_monotonic_s = 0;
    uint64_t lost = 0;
};

inline constexpr size_t kTopSymbols = 20;
inline constexpr size_t kTopUnmatched = 10;
inline constexpr size_t kTopOtherTasks = 10;

/// The profile of `samples`: a user-space sample is `user`; a kernel one takes the category of the first
/// rule of `table` its symbol matches, else `idle` in the idle task (pid 0) and `other` elsewhere (those
/// are also counted in `unmatched`). Tasks: the idle task in `idle` is "idle", `send`/`recv` threads are
/// "sender"/"receiver", comm "ksoftirqd/N" is "ksoftirqd", the rest (the idle task's interrupt work as
/// "swapper") is "other". Every table category and every sampled CPU appears, 0 when nothing fell there.
CpuProfile aggregate_profile(const std::vector<NamedSample>& samples, const CategoryTable& table, const TaskClasses& tasks,
                             const WindowFacts& window);

}  // namespace nm::profile
