#include "tests/support/forked_child.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <string>

namespace nm::test {

ForkedChild fork_child(const std::function<void(int report_fd)>& body) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        ::close(fds[0]);
        try {
            body(fds[1]);
        } catch (...) {
            ::_exit(3);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    return ForkedChild(pid, UniqueFd(fds[0]));
}

bool ForkedChild::read_report(void* out, size_t size, std::chrono::milliseconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto* to = static_cast<char*>(out);
    size_t got = 0;
    while (got < size) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{report_.get(), POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        const ssize_t n = ::read(report_.get(), to + got, size - got);
        if (n <= 0) return false;
        got += static_cast<size_t>(n);
    }
    return true;
}

int ForkedChild::reap(bool kill_first) {
    if (kill_first) ::kill(pid_, SIGKILL);
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, 0);
    reaped_ = true;
    // A status that was never written must not pass for "exited 0".
    if (got != pid_) throw std::runtime_error("waitpid " + std::to_string(pid_) + " failed");
    return status;
}

ForkedChild::~ForkedChild() {
    if (reaped_) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

}  // namespace nm::test
