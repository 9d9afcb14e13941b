#pragma once
// A child forked from the test process itself, for tests of what happens to this library's own state when
// a process that used it dies (a journal left behind, an owner that is gone): the child runs a function
// and reports through a pipe; the parent reads the report with a deadline.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "core/base/unique_fd.hpp"

namespace nm::test {

class ForkedChild {
public:
    ForkedChild(pid_t pid, UniqueFd report) : pid_(pid), report_(std::move(report)) {}
    /// SIGKILLs and reaps a child not reaped yet (a test that failed half way leaves no process behind).
    ~ForkedChild();
    ForkedChild(const ForkedChild&) = delete;
    ForkedChild& operator=(const ForkedChild&) = delete;

    pid_t pid() const { return pid_; }
    /// Exactly `size` bytes of the child's report into `out`, within `limit`; false on timeout or EOF.
    bool read_report(void* out, size_t size, std::chrono::milliseconds limit = std::chrono::seconds(20)) const;
    /// Waits for the child; its waitpid status (std::runtime_error when waitpid fails). With `kill_first`,
    /// SIGKILLs it before.
    int reap(bool kill_first = false);

private:
    pid_t pid_;
    UniqueFd report_;  ///< the read end of the child's report pipe
    bool reaped_ = false;
};

/// Forks; the child runs `body` with the write end of the report pipe, then exits 0 (3 when `body`
/// throws). A body that should be killed rather than exit never returns. Throws std::runtime_error when
/// the pipe or the fork fails.
ForkedChild fork_child(const std::function<void(int report_fd)>& body);

}  // namespace nm::test
