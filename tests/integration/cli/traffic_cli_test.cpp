// `nicmatrix serve` and `nicmatrix run` as processes in the lab (`ip netns exec`), checked from outside:
// exit codes, a killed server, and CPU figures against the kernel's per-process accounting.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/lab_types.hpp"
#include "core/base/traffic_types.hpp"
#include "core/base/wait_until.hpp"
#include "tests/support/command.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

extern char** environ;

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

/// A child process with its stdout on a pipe; killed and reaped on scope exit if still running.
class Child {
public:
    explicit Child(const std::vector<std::string>& argv) {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(fds[1]);
        out_ = fds[0];
        REQUIRE(rc == 0);
    }
    ~Child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }

    /// The next line of stdout, waiting at most `limit`; "" on timeout or EOF.
    std::string read_line(std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        for (;;) {
            const auto nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                std::string line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return "";
            pollfd p{out_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
            char chunk[4096];
            const ssize_t n = ::read(out_, chunk, sizeof chunk);
            if (n <= 0) return "";
            buffer_.append(chunk, static_cast<size_t>(n));
        }
    }

    /// Everything until EOF (bounded by `limit`).
    std::string read_all(std::chrono::milliseconds limit) {
        std::string all;
        for (std::string line; !(line = read_line(limit)).empty() || !buffer_.empty();) all += line + "\n";
        return all;
    }

    /// Waits for the exit; returns the exit status and fills `usage` with the kernel's rusage of the child.
    int wait(rusage& usage) {
        int status = 0;
        REQUIRE(::wait4(pid_, &status, 0, &usage) == pid_);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    void kill_now() { ::kill(pid_, SIGKILL); }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string buffer_;
};

std::vector<std::string> in_netns(const std::string& ns, std::vector<std::string> args) {
    std::vector<std::string> argv{"ip", "netns", "exec", ns, nicmatrix_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

/// user + sys of a process from /proc/PID/stat (fields 14 and 15, in clock ticks): the independent oracle.
double proc_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(in, text);
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    REQUIRE(f.size() > 13);
    return static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

uint64_t rx_bytes(const nm::LabInterface& itf) {
    const auto r = run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    return nlohmann::json::parse(r.output).at(0).at("stats64").at("rx").at("bytes");
}

}  // namespace

TEST_CASE("serve and run as processes: JSON result, CPU checked against /proc and wait4", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Child server(in_netns(lab.server().netns, {"serve", "--json"}));
    const auto listening = nlohmann::json::parse(server.read_line(std::chrono::seconds(5)));   // the READY line
    CHECK(listening.at("listening") == nm::kDefaultPort);
    const double server_cpu_before = proc_cpu_seconds(server.pid());

    Child client(in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-t", "1.5", "--json"}));
    const std::string out = client.read_all(std::chrono::seconds(10));
    rusage usage{};
    REQUIRE(client.wait(usage) == 0);
    const auto test_line = nlohmann::json::parse(server.read_line(std::chrono::seconds(5)));   // the server logged the test
    const double server_cpu = proc_cpu_seconds(server.pid()) - server_cpu_before;

    const auto res = nlohmann::json::parse(out);
    INFO(out);
    CHECK(res.at("status") == "ok");
    CHECK(res.at("bytes").get<double>() > 1e7);
    CHECK(test_line.at("report").at("received_bytes") == res.at("bytes"));
    const auto& cpu = res.at("cpu");
    const double sender = cpu.at("sender").at("user_s").get<double>() + cpu.at("sender").at("sys_s").get<double>();
    const double receiver = cpu.at("receiver").at("user_s").get<double>() + cpu.at("receiver").at("sys_s").get<double>();
    const double client_total = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    INFO("sender " << sender << " s vs client process " << client_total << " s; receiver " << receiver
                   << " s vs server process " << server_cpu << " s");
    // The engine counts its worker threads over the window; the kernel counts the whole process over its
    // life. So: never more than the process (one clock tick of slack), and a good part of it for a busy 1.5 s
    // run (the part outside the window is start-up and teardown, which a loaded machine stretches).
    CHECK(sender <= client_total + 0.02);
    CHECK(sender >= 0.3 * client_total - 0.02);
    CHECK(receiver <= server_cpu + 0.02);
    CHECK(receiver >= 0.3 * server_cpu - 0.02);
    CHECK(cpu.at("sender").at("util_pct").get<double>() == Approx(100 * sender / res.at("duration_s").get<double>()).epsilon(0.01));
}

TEST_CASE("Killing the server mid-test ends the client within duration + 5 s with a clear error", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Child server(in_netns(lab.server().netns, {"serve"}));
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    const auto start = std::chrono::steady_clock::now();
    Child client(in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-t", "3", "--json"}));
    nm::wait_until([&] { return rx_bytes(lab.server()) > 50'000'000; }, std::chrono::seconds(5), "data to flow");
    server.kill_now();
    const std::string out = client.read_all(std::chrono::seconds(10));
    rusage usage{};
    const int rc = client.wait(usage);
    const auto took = std::chrono::steady_clock::now() - start;
    INFO(out);
    CHECK(rc == 1);
    CHECK(took < std::chrono::seconds(3 + 5));
    const auto res = nlohmann::json::parse(out);
    CHECK(res.at("status") == "peer_lost");
    CHECK_THAT(res.at("error").get<std::string>(), Catch::Contains("198.18.0.2"));
}

TEST_CASE("UDP through the CLI: -u -l 18 is the batched multi-sender fast path, -b takes suffixes", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Child server(in_netns(lab.server().netns, {"serve"}));
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    const std::string host = nm::strip_prefix(lab.server().ipv4);
    const auto flood = run_in_netns(lab.client().netns, nicmatrix_binary() + " run -c " + host + " -u -l 18 -t 1 --json");
    REQUIRE(flood.exit_status == 0);
    const auto f = nlohmann::json::parse(flood.output);
    CHECK(f.at("streams").size() == std::max(1u, std::thread::hardware_concurrency()));
    CHECK(f.at("packets_per_s").get<double>() > 50000);
    const auto paced = run_in_netns(lab.client().netns, nicmatrix_binary() + " run -c " + host + " -u -b 20M -t 1");
    INFO(paced.output);
    REQUIRE(paced.exit_status == 0);
    CHECK_THAT(paced.output, Catch::Contains("[SUM]") && Catch::Contains("Loss: 0/") && Catch::Contains("CPU sender") &&
                                 Catch::Contains("CPU receiver") && Catch::Contains("Mbits/sec"));
}

TEST_CASE("Bad input: clear errors, exit 2 for usage, 1 for a port in use or no server", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string run = nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4);
    const auto client = [&](const std::string& args) { return run_in_netns(lab.client().netns, run + " " + args); };
    auto r = client("-u -l 17");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("18..65507"));
    r = client("-u -l 65508");
    CHECK(r.exit_status == 2);
    r = client("-t -1");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("duration"));
    r = client("-t 0");
    CHECK(r.exit_status == 2);
    // Refused before anything is printed or connected: no "Connecting" line ahead of the error.
    r = client("--rr --rr-burst 500");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("rr-burst: 500") && !Catch::Contains("Connecting"));
    r = client("-b 5X");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("--bitrate"));
    r = run_in_netns(lab.client().netns, nicmatrix_binary() + " run -c no-such-host.invalid -t 1");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("no-such-host.invalid"));
    r = client("-t 1");   // nothing listening
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("Connection refused"));

    Child server(in_netns(lab.server().netns, {"serve"}));
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    r = run_in_netns(lab.server().netns, nicmatrix_binary() + " serve");
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("Address already in use") && Catch::Contains("5301"));
    // Still serving after all that.
    CHECK(client("-t 0.3").exit_status == 0);
}

TEST_CASE("A text-mode run prints each interval while it runs (the paced rate, before the run ends), and Ctrl-C ends it", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Child server(in_netns(lab.server().netns, {"serve"}));
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    // 30 s: the run is certainly still going when its second interval is read, however loaded the machine.
    Child client(in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-b", "50M", "-t", "30"}));
    std::string seen, second;
    for (std::string line; second.empty() && !(line = client.read_line(std::chrono::seconds(15))).empty();) {
        seen += line + "\n";
        if (line.find("[SUM]   1.") == 0) second = line;
    }
    INFO(seen);
    REQUIRE_FALSE(second.empty());
    CHECK_THAT(seen, Catch::Contains("Live (client's own counts"));
    CHECK(::waitpid(client.pid(), nullptr, WNOHANG) == 0);   // still running: the line came live
    // The sender's pacing (the kernel's SO_MAX_PACING_RATE) holds 50 Mbit/s; by the second interval the
    // socket buffer has filled, so what the sender hands over each second is what leaves.
    CHECK_THAT(second, Catch::EndsWith("sent"));
    const double mbit = std::stod(second.substr(second.rfind("Bytes") + 5));
    CHECK_THAT(second, Catch::Contains("Mbits/sec"));
    CHECK(mbit > 40);
    CHECK(mbit < 60);
    REQUIRE(::kill(client.pid(), SIGINT) == 0);
    const std::string rest = client.read_all(std::chrono::seconds(10));
    rusage usage{};
    CHECK(client.wait(usage) == 1);
    CHECK_THAT(rest, Catch::Contains("interrupted"));
}
