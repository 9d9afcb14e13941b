#pragma once
// Where one host's CPU went during a measured window: a kernel profile sampled on every CPU (core/profile/),
// sorted into categories by a table of symbol patterns (configs/profile-categories.json). Plain values;
// JSON in json_codec_profile.cpp. Every share is percent of all samples taken on the host in the window
// (every CPU, idle included), unless its comment says otherwise.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"

namespace nm {

/// One rule of a category table: a symbol matching any of `patterns` belongs to `category`. Patterns are
/// globs over the whole symbol name: `*` any run of characters, `?` one character, everything else itself.
struct CategoryRule {
    std::vector<std::string> patterns;
    std::string category;
};

/// The table that sorts symbols into categories: rules tried in order, the first match wins. A sample
/// in user space is `user`; a kernel symbol no rule matches is `other` (`idle` when the sample was taken in
/// the idle task, pid 0).
struct CategoryTable {
    std::vector<std::string> categories;  ///< every category, in display order; has user, idle and other
    std::vector<CategoryRule> rules;
    std::string source;  ///< where it came from: a path, or "built-in" (the shipped file)
};

/// A symbol and its share.
struct ProfileSymbol {
    std::string symbol;  ///< "copy_user_enhanced_fast_string", "[unknown]" when unresolved
    double pct = 0;
    std::string category;
};

/// One CPU's breakdown; its shares are percent of that CPU's samples.
struct ProfileCpu {
    uint32_t cpu = 0;
    uint64_t samples = 0;
    std::map<std::string, double> categories;
};

constexpr auto json_fields(const ProfileCpu*) {
    using S = ProfileCpu;
    return field_list(field("cpu", &S::cpu), field("samples", &S::samples), field("categories", &S::categories));
}

/// One class of tasks: its share of all samples, and its own breakdown (percent of its samples).
struct ProfileTaskClass {
    double pct = 0;
    uint64_t samples = 0;
    std::map<std::string, double> categories;
};

constexpr auto json_fields(const ProfileTaskClass*) {
    using S = ProfileTaskClass;
    return field_list(field("pct", &S::pct), field("samples", &S::samples), field("categories", &S::categories));
}

/// A task by name (/proc/PID/comm) and its share.
struct ProfileTask {
    std::string comm;
    double pct = 0;
};

constexpr auto json_fields(const ProfileTask*) {
    using S = ProfileTask;
    return field_list(field("comm", &S::comm), field("pct", &S::pct));
}

/// The kernel profile of one host over one end's measured window.
struct CpuProfile {
    std::string host;  ///< the sampled host's name
    /// "" when this end's host was sampled for this end alone; "sender" or "receiver" when both ends run on
    /// one host (the lab): one sampler covered both, and this profile is the same as the other end's.
    std::string shared_with;
    uint64_t samples = 0;          ///< samples inside the window, every CPU
    uint64_t lost = 0;             ///< samples the kernel could not write to the ring buffers
    uint32_t hz = 0;               ///< asked sampling rate per CPU
    uint32_t cpus = 0;             ///< CPUs sampled (every online CPU)
    double window_s = 0;           ///< the sampled window
    double start_monotonic_s = 0;  ///< the window on CLOCK_MONOTONIC, to match other tools' samples
    double end_monotonic_s = 0;
    std::string table;                         ///< the category table's source
    std::map<std::string, double> categories;  ///< every category of the table; sums to 100
    std::vector<ProfileCpu> by_cpu;
    /// "sender" and "receiver" (the engine's threads that send and receive data, of either end on this
    /// host), "ksoftirqd", "idle" (the idle task in an idle symbol), "other" (everything else).
    std::map<std::string, ProfileTaskClass> by_task;
    std::vector<ProfileTask> other_tasks;  ///< the busiest tasks of "other", by name
    std::vector<ProfileSymbol> top;        ///< the hottest symbols (20)
    std::vector<ProfileSymbol> unmatched;  ///< the hottest kernel symbols no rule matched (category other)
};

/// The codec adds "top" and "unmatched" (symbols; an unmatched one has no "category" and reads back as "other").
constexpr auto json_fields_and_more(const CpuProfile*) {
    using S = CpuProfile;
    return field_list(field("host", &S::host), field("shared_with", &S::shared_with, kFieldNullIfEmpty), field("samples", &S::samples),
                      field("lost", &S::lost), field("hz", &S::hz), field("cpus", &S::cpus), field("window_s", &S::window_s),
                      field("start_monotonic_s", &S::start_monotonic_s), field("end_monotonic_s", &S::end_monotonic_s), field("table", &S::table),
                      field("categories", &S::categories), field("by_cpu", &S::by_cpu, kFieldIfTyped), field("by_task", &S::by_task, kFieldIfTyped),
                      field("other_tasks", &S::other_tasks, kFieldIfTyped));
}

/// The task classes of CpuProfile::by_task, in display order.
inline constexpr std::array<const char*, 5> kProfileTaskClasses{"sender", "receiver", "ksoftirqd", "other", "idle"};

}  // namespace nm
