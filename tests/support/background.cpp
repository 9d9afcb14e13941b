#include "tests/support/background.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <thread>

#include "core/base/file_text.hpp"
#include "core/base/wait_until.hpp"

namespace nm::test {
namespace {

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

Background::Background(const std::string& command, const std::string& log, std::chrono::seconds limit) : log_(log), pid_file_(log + ".pid") {
    ::unlink(pid_file_.c_str());
    const std::string script = "echo $$ > " + quoted(pid_file_) + "; exec " + command;
    const std::string limit_s = std::to_string(limit.count());
    timeout_pid_ = ::fork();
    if (timeout_pid_ < 0) throw std::runtime_error("fork failed");
    if (timeout_pid_ == 0) {
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
        }
        ::execlp("timeout", "timeout", "-k", "5", limit_s.c_str(), "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
}

Background::~Background() {
    if (!status_) {
        if (pid_ <= 0) {
            // Never asked for: read it now (the shell writes it first thing), so that the command itself
            // is killed; SIGKILL to `timeout` alone would leave it running.
            try {
                pid();
            } catch (...) {  // NOLINT(bugprone-empty-catch): no pid file: nothing was exec'd
            }
        }
        if (pid_ > 0) ::kill(pid_, SIGKILL);
        ::kill(timeout_pid_, SIGKILL);
        ::waitpid(timeout_pid_, nullptr, 0);
    }
    ::unlink(pid_file_.c_str());
}

pid_t Background::pid() {
    if (pid_ > 0) return pid_;
    wait_until(
        [&] {
            const std::string text = read_file_text(pid_file_);
            if (text.empty() || text.back() != '\n') return false;
            pid_ = std::stoi(text);
            return true;
        },
        std::chrono::seconds(5), "the pid of the background command in " + pid_file_);
    return pid_;
}

std::optional<int> Background::wait(std::chrono::milliseconds limit) {
    if (status_) return status_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        int st = 0;
        const pid_t r = ::waitpid(timeout_pid_, &st, WNOHANG);
        if (r == timeout_pid_) {
            status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return status_;
        }
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool Background::running() { return !wait(std::chrono::milliseconds(0)); }

std::string Background::output() const { return read_file_text(log_); }

}  // namespace nm::test
