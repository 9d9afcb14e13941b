#pragma once
// The records a sampler's ring buffers hold, decoded into plain values. Every event the sampler opens asks
// for the same layout (kSampleType with sample_id_all), so one decoder reads every ring. Pure functions of
// bytes: tested on canned records.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <linux/perf_event.h>

namespace nm::profile {

/// What each sample carries, in the kernel's order: ip, pid/tid, time, cpu (PERF_SAMPLE_*). Side-band
/// records (comm, mmap, fork, exit, lost) end in the same pid/tid, time and cpu (sample_id_all).
inline constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

/// One sample: where a CPU was when the clock event fired.
struct Sample {
    uint64_t ip = 0;
    int32_t pid = 0;
    int32_t tid = 0;
    uint64_t time_ns = 0;  ///< on the event's clock (CLOCK_MONOTONIC: the sampler sets use_clockid)
    uint32_t cpu = 0;
    bool user = false;  ///< the ip is a user-space address (PERF_RECORD_MISC_USER); else kernel
};

/// What happened to a task, as the side-band records tell it: needed to name user-space addresses of
/// processes that started (or exec'd) while the profile ran.
struct TaskEvent {
    enum class Kind { Comm, Exec, Mmap, Fork, Exit };
    Kind kind = Kind::Comm;
    int32_t pid = 0;
    int32_t tid = 0;
    int32_t parent_pid = 0;  ///< fork: the parent
    uint64_t time_ns = 0;
    std::string text;   ///< comm: the new name; mmap: the mapped file
    uint64_t addr = 0;  ///< mmap: the mapping
    uint64_t len = 0;
    uint64_t pgoff = 0;  ///< mmap: file offset of the mapping's start
};

/// Everything decoded from a ring buffer.
struct RecordBatch {
    std::vector<Sample> samples;
    std::vector<TaskEvent> tasks;
    uint64_t lost = 0;       ///< samples the kernel dropped (PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES)
    uint64_t malformed = 0;  ///< records too short for their type (never expected; counted, not trusted)

    /// Appends `other`'s contents.
    void append(RecordBatch&& other);
};

/// Decodes one whole record (its header first, `record.size()` equal to the header's size) into `out`.
/// Types the profile does not need (throttle, ...) are skipped.
void decode_record(std::span<const std::byte> record, RecordBatch& out);

/// Decodes the records between `tail` and `head` of a ring buffer's data area (`data.size()` a power of
/// two; positions are byte counts since the start, taken modulo the size), copying out records that wrap
/// around its end. Returns the position it read up to: `head`, or where a record with an impossible size
/// starts (the rest of the ring is then skipped up to `head` and counted as malformed).
uint64_t drain_ring(std::span<const std::byte> data, uint64_t tail, uint64_t head, RecordBatch& out);

}  // namespace nm::profile
