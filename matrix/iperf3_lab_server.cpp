#include "matrix/iperf3_lab_server.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/file_text.hpp"

extern char** environ;

namespace nm {
namespace {

bool running(pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) == 0;
}

}  // namespace

bool proc_net_tcp_listens(const std::string& proc_net_tcp, uint16_t port) {
    // Each line: "  sl  local_address rem_address   st ...", the local address as HEXADDR:HEXPORT and the
    // state 0A for LISTEN.
    std::istringstream lines(proc_net_tcp);
    std::string line;
    char want[8];
    std::snprintf(want, sizeof want, ":%04X", port);
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string sl, local, remote, state;
        if (!(fields >> sl >> local >> remote >> state)) continue;
        if (state == "0A" && local.size() > 5 && local.compare(local.size() - 5, 5, want) == 0) return true;
    }
    return false;
}

Iperf3LabServer::Iperf3LabServer(uint16_t port, const std::string& log_path, std::chrono::milliseconds start_timeout) : port_(port) {
    const std::string port_text = std::to_string(port);
    std::vector<std::string> args{"iperf3", "-s", "-p", port_text, "--json"};
    if (!log_path.empty()) {
        args.push_back("--logfile");
        args.push_back(log_path);
    }
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    // No terminal of ours for its output: its JSON goes to the log file or nowhere.
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    // posix_spawn's child starts in the calling thread's network namespace (the lab's server namespace).
    const int rc = ::posix_spawnp(&pid_, "iperf3", &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        pid_ = -1;
        throw Error(ErrorKind::Failed,
                    std::string("start iperf3 -s: ") + std::strerror(rc) + (rc == ENOENT ? " (install Debian's iperf3 package)" : ""));
    }
    const auto deadline = std::chrono::steady_clock::now() + start_timeout;
    const std::string proc = "/proc/" + std::to_string(pid_) + "/net/";
    for (;;) {
        if (proc_net_tcp_listens(read_file_text(proc + "tcp6"), port) || proc_net_tcp_listens(read_file_text(proc + "tcp"), port)) return;
        if (!running(pid_)) {
            pid_ = -1;
            throw Error(ErrorKind::Failed, "iperf3 -s -p " + port_text + " exited before it listened (is the port taken?)");
        }
        if (std::chrono::steady_clock::now() > deadline) {
            end_process();
            throw Error(ErrorKind::Failed, "iperf3 -s -p " + port_text + " did not listen within " + std::to_string(start_timeout.count()) + " ms");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Iperf3LabServer::~Iperf3LabServer() { end_process(); }

void Iperf3LabServer::serve(std::stop_token stop) {
    while (!stop.stop_requested() && pid_ > 0 && running(pid_)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    end_process();
}

void Iperf3LabServer::end_process() noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
}

}  // namespace nm
