#pragma once
// Who ran on the host while a profile was taken: each process's executable mappings and each task's name,
// from /proc when the sampler is armed and from the side-band records (exec, mmap, fork, comm) while it
// runs, replayed in time order, so a user-space address of a process that started or ended inside the
// window still finds its file.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile/perf_records.hpp"

namespace nm::profile {

/// One executable mapping of a process.
struct Mapping {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t pgoff = 0;  ///< file offset of `start`
    std::string path;
};

/// The executable file-backed mappings of /proc/PID/maps text ("r-xp" lines with a path; [vdso] and
/// anonymous ones are left out). Pure.
std::vector<Mapping> parse_proc_maps(std::string_view text);

class TaskTable {
public:
    /// The mappings of `pid` as /proc showed them when the sampler was armed.
    void set_maps(int32_t pid, std::vector<Mapping> maps) { maps_[pid] = std::move(maps); }
    /// A task's name (/proc/PID/comm).
    void set_comm(int32_t tid, std::string comm) { comm_[tid] = std::move(comm); }

    /// Applies a side-band record: an exec clears the process's mappings and renames it, an mmap adds one,
    /// a fork gives the child its parent's mappings, a comm renames the task.
    void apply(const TaskEvent& event);

    /// The mapping of `pid` holding `addr` (the latest added wins), or nullptr.
    const Mapping* mapping(int32_t pid, uint64_t addr) const;
    /// True when anything is known of `pid`'s mappings.
    bool knows_maps(int32_t pid) const { return maps_.count(pid) > 0; }
    /// The task's name, or nullptr when it is not known.
    const std::string* comm(int32_t tid) const;

private:
    std::map<int32_t, std::vector<Mapping>> maps_;
    std::map<int32_t, std::string> comm_;
};

/// Every process's executable mappings and name from /proc (processes that vanish while it is read are
/// skipped).
TaskTable snapshot_tasks();

/// /proc/PID/maps of one process; empty when it is gone.
std::vector<Mapping> read_process_maps(int32_t pid);

/// /proc/TID/comm without its newline; "" when the task is gone.
std::string read_comm(int32_t tid);

}  // namespace nm::profile
