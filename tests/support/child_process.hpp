#pragma once
// A child process for tests that check processes from outside: its stdout (and stderr, unless asked
// otherwise) on one pipe, its /proc figures (CPU time, peak memory), its rusage when reaped; killed and
// reaped on scope exit if still running.
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace nm::test {

/// `argv` as execve and posix_spawn take it: pointers into its strings (which must outlive the call), then
/// a null pointer.
std::vector<char*> exec_argv(const std::vector<std::string>& argv);

class ChildProcess {
public:
    /// What the pipe carries: stdout and stderr (the default), or stdout alone (stderr goes where the
    /// test's goes), for output that must parse, as --json.
    enum class Output { Merged, StdoutOnly };

    /// Starts `argv` (argv[0] found on PATH) with its output on the pipe.
    explicit ChildProcess(const std::vector<std::string>& argv, Output output = Output::Merged);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }

    /// The next line of output within `limit`; "" on timeout or EOF.
    std::string read_line(std::chrono::milliseconds limit);
    /// Lines until one contains `text` (returned), within `limit`; "" when none did.
    std::string read_until(const std::string& text, std::chrono::milliseconds limit);
    /// Everything read so far that read_line() has not returned, plus what arrives within `limit`.
    std::string drain(std::chrono::milliseconds limit);

    /// Waits for the exit (at most `limit`, then SIGKILL); the exit status, or 128 + signal. `usage`, when
    /// given, gets the kernel's rusage of the child (wait4).
    int wait(std::chrono::milliseconds limit, rusage* usage = nullptr);
    void signal(int sig);

private:
    bool fill(std::chrono::steady_clock::time_point deadline);

    pid_t pid_ = -1;
    int out_ = -1;
    std::string buffer_;
};

/// `ip netns exec NS nicmatrix ARGS...`: the same pid as the nicmatrix process (ip execs it).
std::vector<std::string> nicmatrix_in_netns(const std::string& netns, const std::vector<std::string>& args,
                                            const std::vector<std::string>& prefix = {});

/// user + sys CPU seconds of a live process from /proc/PID/stat (fields 14 and 15): the kernel's account.
double process_cpu_seconds(pid_t pid);

/// A field of /proc/PID/status in KiB ("VmHWM", "VmRSS").
uint64_t process_status_kib(pid_t pid, const std::string& field);

}  // namespace nm::test
