#pragma once
// System-wide sampling through perf_event_open(2), without the perf tool: one software cpu-clock event per
// online CPU (every task on it, kernel and user instruction pointers), each with its own ring buffer, read
// by a thread of the sampler often enough that nothing is lost at the asked rate (what the kernel drops
// anyway is counted). Events are opened disabled; enable() and disable() bracket the measured window.
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/unique_fd.hpp"
#include "core/profile/perf_records.hpp"

namespace nm::profile {

/// The online CPUs of a /sys/devices/system/cpu/online list ("0-3,8,10-11"). Pure.
std::vector<uint32_t> parse_cpu_list(std::string_view text);

/// The message for perf_event_open failing with `err` on a software cpu-clock event: permission (naming
/// kernel.perf_event_paranoid and the value needed, whose current value is `paranoid`), a kernel without
/// the event or without perf events at all, or the bare errno. Pure.
std::string perf_open_error(int err, int paranoid);

/// Ring buffer pages (a power of two) that hold `seconds` of samples at `hz` on one CPU, 8..1024.
size_t ring_pages_for(uint32_t hz, double seconds);

class PerfSampler {
public:
    /// Opens a disabled cpu-clock event sampling every `1e9 / hz` ns of CPU time on each online CPU, with
    /// times on CLOCK_MONOTONIC, and maps their rings. Throws nm::Error (Usage) with perf_open_error's
    /// message when the kernel refuses, and for a ring the locked-memory limit refuses
    /// (kernel.perf_event_mlock_kb).
    explicit PerfSampler(uint32_t hz);
    ~PerfSampler();
    PerfSampler(const PerfSampler&) = delete;
    PerfSampler& operator=(const PerfSampler&) = delete;

    /// Starts every CPU's event and the reader thread.
    void enable();
    /// Stops every event, reads what is left and stops the reader. Idempotent.
    void disable();
    /// Everything read so far (call after disable()).
    RecordBatch take();

    const std::vector<uint32_t>& cpus() const { return cpus_; }
    uint32_t hz() const { return hz_; }

private:
    /// One CPU's event and its mapped ring; unmaps and closes when destroyed.
    struct Ring {
        UniqueFd fd;
        void* base = nullptr;
        size_t length = 0;
        Ring() = default;
        Ring(Ring&& o) noexcept : fd(std::move(o.fd)), base(std::exchange(o.base, nullptr)), length(o.length) {}
        Ring& operator=(Ring&&) = delete;
        ~Ring();
    };
    void drain_all(RecordBatch& into);

    uint32_t hz_;
    std::vector<uint32_t> cpus_;
    std::vector<Ring> rings_;
    RecordBatch batch_;  // written by the reader thread only until it is joined
    std::jthread reader_;
    bool enabled_ = false;
};

}  // namespace nm::profile
