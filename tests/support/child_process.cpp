#include "tests/support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/command.hpp"

extern char** environ;

namespace nm::test {

std::vector<char*> exec_argv(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    return args;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, Output output) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (output == Output::Merged) posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    std::vector<char*> args = exec_argv(argv);
    const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out_ = fds[0];
    if (rc != 0) {
        pid_ = -1;
        throw std::runtime_error("posix_spawnp " + argv.at(0) + " failed");
    }
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
}

bool ChildProcess::fill(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
}

std::string ChildProcess::read_line(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return line;
        }
        if (!fill(deadline)) return "";
    }
}

std::string ChildProcess::read_until(const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return "";
        std::string line = read_line(left);
        if (line.find(text) != std::string::npos) return line;
        if (line.empty() && std::chrono::steady_clock::now() >= deadline) return "";
    }
}

std::string ChildProcess::drain(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (fill(deadline)) {}
    std::string all;
    all.swap(buffer_);
    return all;
}

int ChildProcess::wait(std::chrono::milliseconds limit, rusage* usage) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    rusage ignored{};
    rusage* ru = usage ? usage : &ignored;
    for (;;) {
        const pid_t r = ::wait4(pid_, &status, WNOHANG, ru);
        if (r == pid_) break;
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid_, SIGKILL);
            ::wait4(pid_, &status, 0, ru);
            break;
        }
        // Keep the pipe from filling up while waiting.
        fill(std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void ChildProcess::signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
}

std::vector<std::string> nicmatrix_in_netns(const std::string& netns, const std::vector<std::string>& args, const std::vector<std::string>& prefix) {
    std::vector<std::string> argv{"ip", "netns", "exec", netns};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    argv.push_back(nicmatrix_binary());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

double process_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(in, text);
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.size() <= 13) throw std::runtime_error("/proc/" + std::to_string(pid) + "/stat: too short");
    return static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

uint64_t process_status_kib(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
    }
    throw std::runtime_error("/proc/" + std::to_string(pid) + "/status: no " + field);
}

}  // namespace nm::test
