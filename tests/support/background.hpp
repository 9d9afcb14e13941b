#pragma once
// A command running in the background for a test that acts on it while it runs (signals, a concurrent
// restore): the command's own pid to signal, its output in a file, a bounded wait for its end.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace nm::test {

class Background {
public:
    /// Starts `command` under /bin/sh, bounded by coreutils `timeout` (then SIGKILL 5 s later), with its
    /// stdout and stderr in `log`. The shell execs the command, so pid() is the command's own process
    /// (signals go to it, not to `timeout`). The child starts with default signal dispositions and an
    /// empty signal mask, whatever the test process has.
    Background(const std::string& command, const std::string& log, std::chrono::seconds limit = std::chrono::seconds(120));
    /// Kills what still runs (SIGKILL to the command, then to `timeout`) and reaps it.
    ~Background();
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;

    /// The command's pid (waits, at most 5 s, for the shell to say it).
    pid_t pid();
    /// Waits at most `limit` for the end; the exit status (128 + N when signal N ended it, 124 when
    /// `timeout` did), none when it still runs.
    std::optional<int> wait(std::chrono::milliseconds limit);
    /// Whether it still runs.
    bool running();
    /// Everything it printed so far.
    std::string output() const;

private:
    pid_t timeout_pid_ = -1;
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::string log_;
    std::string pid_file_;
};

}  // namespace nm::test
