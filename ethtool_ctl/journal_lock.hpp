#pragma once
// The lock that serialises read-modify-write of one journal file between processes.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/unique_fd.hpp"

namespace nm {

/// An exclusive flock on `<journal>.lock`, held for the object's lifetime. The lock file sits next to the
/// journal and is never removed, so every process locks the same inode; it is opened with O_NOFOLLOW (a
/// planted symbolic link is refused, not followed). A holder that keeps it longer than `wait` (a stopped
/// process, a user's `flock`) makes the constructor throw nm::Error (Failed) naming the holder's pid and
/// command when /proc/locks tells them, instead of blocking every restore for as long.
class JournalLock {
public:
    JournalLock(const std::string& journal_path, std::chrono::milliseconds wait);

private:
    UniqueFd fd_;
};

/// The pids holding a lock on the file with this device (major, minor) and inode, from the text of
/// /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 08:01:1311 0 EOF"). Pure, for tests.
std::vector<int> lock_holders(std::string_view proc_locks, unsigned major, unsigned minor, unsigned long inode);

}  // namespace nm
