// `nicmatrix serve` against clients that do not play by the rules (review H3, H4, H5, M7, M8, M9, L6, L16),
// as processes in the lab, checked from outside: the kernel's account of the server's CPU time and memory
// (/proc/PID/stat, /proc/PID/status), its sockets as the kernel sees them (a closed connection reads EOF),
// exit codes and the messages users read.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/unique_fd.hpp"
#include "core/base/wait_until.hpp"
#include "core/control/control_protocol.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"
#include "core/workers/udp_tracker.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::ChildProcess;
using nm::test::nicmatrix_binary;
using nm::test::nicmatrix_in_netns;
using nm::test::run_in_netns;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

using SteadyTime = std::chrono::steady_clock;

double since(SteadyTime::time_point t0) { return std::chrono::duration<double>(SteadyTime::now() - t0).count(); }

/// A `serve` in the lab's server namespace, up and listening. `prefix` runs before nicmatrix (prlimit).
struct Server {
    ChildProcess process;
    Server(const nm::test::ScopedLab& lab, const std::vector<std::string>& args, const std::vector<std::string>& prefix = {})
        : process(nicmatrix_in_netns(
              lab.server().netns,
              [&] {
                  std::vector<std::string> a{"serve"};
                  a.insert(a.end(), args.begin(), args.end());
                  return a;
              }(),
              prefix)) {
        REQUIRE_THAT(process.read_until("listening", seconds(10)), Catch::Contains("listening"));
    }
};

/// TCP connections from the lab's client namespace to the server's control port, opened by this process.
class Connections {
public:
    /// `from`: the local address to connect from ("" = the kernel's choice, the client's lab address).
    Connections(const nm::test::ScopedLab& lab, size_t count, const std::string& from = "") {
        nm::NetnsScope scope(lab.client().netns);
        const auto to = nm::resolve_address(nm::strip_prefix(lab.server().ipv4), nm::kDefaultPort);
        for (size_t i = 0; i < count; ++i) {
            nm::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
            REQUIRE(fd);
            if (!from.empty()) {
                const auto local = nm::resolve_address(from, 0);
                REQUIRE(::bind(fd.get(), local.get(), local.len) == 0);
            }
            const int rc = ::connect(fd.get(), to.get(), to.len);
            REQUIRE((rc == 0 || errno == EINPROGRESS));
            fds_.push_back(std::move(fd));
        }
        for (auto& fd : fds_) REQUIRE(nm::wait_fd(fd.get(), POLLOUT, SteadyTime::now() + seconds(5)));
    }

    size_t size() const { return fds_.size(); }
    int fd(size_t i) const { return fds_.at(i).get(); }

    void send_each(const std::string& bytes) {
        for (auto& fd : fds_) (void)::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }

    /// Whether the server has closed connection `i`: the kernel reports EOF (or a reset) on our end.
    bool closed(size_t i) const {
        char c = 0;
        const ssize_t r = ::recv(fds_.at(i).get(), &c, 1, MSG_DONTWAIT | MSG_PEEK);
        return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    }

    /// How many the server has closed.
    size_t closed_by_peer() const {
        size_t n = 0;
        for (size_t i = 0; i < fds_.size(); ++i) n += closed(i) ? 1 : 0;
        return n;
    }

    /// The first line connection `i` receives within `limit` ("" when none).
    std::string read_line(size_t i, std::chrono::milliseconds limit) {
        std::string line;
        const auto deadline = SteadyTime::now() + limit;
        char c = 0;
        while (nm::wait_fd(fds_.at(i).get(), POLLIN, deadline)) {
            if (::recv(fds_.at(i).get(), &c, 1, MSG_DONTWAIT) != 1) break;
            if (c == '\n') return line;
            line += c;
        }
        return line;
    }

    void close_all() { fds_.clear(); }

private:
    std::vector<nm::UniqueFd> fds_;
};

std::string run_cmd(const nm::test::ScopedLab& lab, const std::string& args) {
    return nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " " + args;
}

std::string write_key(const nm::test::TempDir& dir, const std::string& name, char fill) {
    std::string path = dir.file(name);
    std::ofstream(path) << std::string(32, fill);
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
}

}  // namespace

TEST_CASE("serve: 30 idle and 3 trickling connections do not keep `run -t 1` out, the server closes them itself", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab, {});
    Connections idle(lab, 30);
    Connections slow(lab, 3);
    std::jthread trickle([&](std::stop_token stop) {
        // A control message that never ends: one byte every 100 ms.
        slow.send_each("{");
        while (!stop.stop_requested()) {
            slow.send_each("\"");
            std::this_thread::sleep_for(milliseconds(100));
        }
    });
    const auto t0 = SteadyTime::now();
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 1 --json"), seconds(20));
    const double took = since(t0);
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK(nlohmann::json::parse(r.output).at("status") == "ok");
    CHECK(took < 10);
    // Every one of them is closed by the server within its handshake deadline (2 s) and a margin.
    nm::wait_until([&] { return idle.closed_by_peer() == idle.size() && slow.closed_by_peer() == slow.size(); }, seconds(8),
                   "the server to close the idle and trickling connections");
    trickle.request_stop();
    // And it still serves.
    CHECK(run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3")).exit_status == 0);
}

namespace {

/// Connections waiting in the accept queue of the server's listener on `port`: Recv-Q of `ss -ltn` there.
uint64_t accept_queue(const nm::test::ScopedLab& lab, uint16_t port) {
    const auto r = nm::test::run_command("ip netns exec " + lab.server().netns + " ss -Hltn sport = :" + std::to_string(port));
    REQUIRE(r.exit_status == 0);
    uint64_t queued = 0;
    std::istringstream lines(r.output);
    for (std::string state, recv_q; lines >> state >> recv_q;) {
        queued += std::stoull(recv_q);
        std::string rest;
        std::getline(lines, rest);
    }
    return queued;
}

}  // namespace

TEST_CASE(
    "serve: silent connections are capped per source and in all, the oldest going first, another source keeps its own, control sessions are capped "
    "per source",
    "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string a = nm::strip_prefix(lab.client().ipv4);
    const std::string b = "198.18.0.77";
    REQUIRE(nm::test::run_command("ip -n " + lab.client().netns + " addr add " + b + "/24 dev " + lab.client().ifname).exit_status == 0);
    Server server(lab, {"--max-handshakes-per-source", "4", "--max-handshakes", "7", "--handshake-timeout", "30", "--max-control-per-source", "2"});
    // Ten silent connections from one source: the six oldest go, the four newest stay.
    Connections from_a(lab, 10, a);
    nm::wait_until([&] { return accept_queue(lab, nm::kDefaultPort) == 0 && from_a.closed_by_peer() >= 6; }, seconds(10),
                   "the server to accept the ten connections and close six");
    CHECK(from_a.closed_by_peer() == 6);
    for (size_t i = 6; i < 10; ++i) CHECK_FALSE(from_a.closed(i));
    // Four from another source: not closed by the first one's cap. At the cap in all (7) the source with
    // the most silent connections pays: one more of the first source's goes.
    Connections from_b(lab, 4, b);
    nm::wait_until([&] { return accept_queue(lab, nm::kDefaultPort) == 0 && from_a.closed_by_peer() >= 7; }, seconds(10),
                   "the server to accept the other source's connections and close one more of the first's");
    CHECK(from_a.closed_by_peer() == 7);
    CHECK(from_b.closed_by_peer() == 0);
    const std::string log = server.process.drain(milliseconds(300));
    CHECK_THAT(log, Catch::Contains("closed " + a + ": too many unfinished connections (at most 4 per source, 7 in all); the oldest goes"));
    CHECK_THAT(log, !Catch::Contains("closed " + b));
    from_a.close_all();
    from_b.close_all();
    // Settings-control sessions that say nothing after the handshake are held, at most two per source.
    Connections control(lab, 3, b);
    const std::string hello =
        R"({"v":)" + std::to_string(nm::kControlVersion) + R"(,"type":"control_hello","client_nonce":")" + std::string(64, 'a') + "\"}\n";
    std::vector<std::string> first;
    for (size_t i = 0; i < control.size(); ++i) {
        REQUIRE(::send(control.fd(i), hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size()));
        first.push_back(control.read_line(i, seconds(5)));
        INFO(first.back());
        CHECK_FALSE(first.back().empty());
    }
    CHECK_THAT(first[0], Catch::Contains("\"challenge\""));
    CHECK_THAT(first[1], Catch::Contains("\"challenge\""));
    CHECK_THAT(first[2], Catch::Contains("\"error\"") && Catch::Contains("at most 2 per source") && Catch::Contains("--max-control-per-source"));
    // And tests are still served.
    CHECK(run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3")).exit_status == 0);
}

TEST_CASE("serve: at the cap in all, between sources holding as many, the one with the oldest connection pays, whatever its address",
          "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    // "198.18.0.77" sorts after "198.18.0.1" as text: it must not be spared for that.
    const std::string a = nm::strip_prefix(lab.client().ipv4);
    const std::string b = "198.18.0.77";
    const std::string c = "198.18.0.78";
    for (const auto& extra : {b, c}) {
        REQUIRE(nm::test::run_command("ip -n " + lab.client().netns + " addr add " + extra + "/24 dev " + lab.client().ifname).exit_status == 0);
    }
    Server server(lab, {"--max-handshakes-per-source", "4", "--max-handshakes", "4", "--handshake-timeout", "30"});
    Connections from_b(lab, 2, b);
    nm::wait_until([&] { return accept_queue(lab, nm::kDefaultPort) == 0; }, seconds(10), "the server to accept b's connections");
    Connections from_a(lab, 2, a);
    nm::wait_until([&] { return accept_queue(lab, nm::kDefaultPort) == 0; }, seconds(10), "the server to accept a's connections");
    Connections from_c(lab, 1, c);
    nm::wait_until([&] { return accept_queue(lab, nm::kDefaultPort) == 0 && from_a.closed_by_peer() + from_b.closed_by_peer() >= 1; }, seconds(10),
                   "the server to close one connection at its cap in all");
    CHECK(from_b.closed(0));
    CHECK(from_b.closed_by_peer() == 1);
    CHECK(from_a.closed_by_peer() == 0);
    CHECK(from_c.closed_by_peer() == 0);
}

namespace {

/// A settings-control connection opened in `netns` from `from` to `to` (IPv4 or IPv6, port 5301): it sends
/// control_hello and keeps the connection; first_line is the server's answer ("" when none came).
struct ControlProbe {
    nm::UniqueFd fd;
    std::string first_line;
};

ControlProbe control_probe(const std::string& netns, const std::string& from, const std::string& to) {
    nm::NetnsScope scope(netns);
    const auto local = nm::resolve_address(from, 0);
    const auto remote = nm::resolve_address(to, nm::kDefaultPort);
    ControlProbe p{nm::UniqueFd(::socket(remote.family(), SOCK_STREAM | SOCK_CLOEXEC, 0)), ""};
    REQUIRE(p.fd);
    REQUIRE(::bind(p.fd.get(), local.get(), local.len) == 0);
    REQUIRE(::connect(p.fd.get(), remote.get(), remote.len) == 0);
    const std::string hello =
        R"({"v":)" + std::to_string(nm::kControlVersion) + R"(,"type":"control_hello","client_nonce":")" + std::string(64, 'a') + "\"}\n";
    REQUIRE(::send(p.fd.get(), hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size()));
    const auto deadline = SteadyTime::now() + seconds(5);
    char c = 0;
    while (nm::wait_fd(p.fd.get(), POLLIN, deadline) && ::recv(p.fd.get(), &c, 1, MSG_DONTWAIT) == 1 && c != '\n') p.first_line += c;
    return p;
}

/// `count` addresses BLOCK1, BLOCK2, ... of the /64 `block` on the client's veth (no duplicate address
/// detection), and the route back to them in the server's namespace.
void add_client_block(const nm::test::ScopedLab& lab, const std::string& block, int count) {
    for (int i = 1; i <= count; ++i) {
        REQUIRE(nm::test::run_command("ip -n " + lab.client().netns + " -6 addr add " + block + std::to_string(i) + "/64 dev " + lab.client().ifname +
                                      " nodad")
                    .exit_status == 0);
    }
    REQUIRE(nm::test::run_command("ip -n " + lab.server().netns + " -6 route add " + block + "/64 dev " + lab.server().ifname).exit_status == 0);
}

}  // namespace

TEST_CASE("serve: ten IPv6 addresses of one /64 count as one source, and cannot take the control slots of another /64 or an IPv4 client",
          "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    // One host's /64 that is not the lab's own (2001:2::/64), ten addresses of it on the client's veth,
    // routed back by the server's namespace.
    const std::string block = "2001:2:0:36::";
    add_client_block(lab, block, 10);
    // The lab's own IPv6 addresses may still be in duplicate address detection: wait until none is tentative.
    nm::wait_until(
        [&] {
            return nm::test::run_command("ip -n " + lab.server().netns + " -6 addr show tentative").output.empty() &&
                   nm::test::run_command("ip -n " + lab.client().netns + " -6 addr show tentative").output.empty();
        },
        seconds(10), "the lab's IPv6 addresses to leave DAD");
    // The defaults: 64 control sessions in all, 8 per source.
    Server server(lab, {});
    const std::string server_v6 = nm::strip_prefix(lab.server().ipv6);
    std::vector<ControlProbe> held;
    int challenged = 0;
    for (int i = 1; i <= 10; ++i) {
        for (int k = 0; k < 8; ++k) {
            held.push_back(control_probe(lab.client().netns, block + std::to_string(i), server_v6));
            INFO(held.back().first_line);
            REQUIRE_FALSE(held.back().first_line.empty());
            if (held.back().first_line.find("\"challenge\"") != std::string::npos) ++challenged;
        }
    }
    // One /64 is one source: 8 sessions, not 64.
    CHECK(challenged == 8);
    CHECK_THAT(held.back().first_line, Catch::Contains("at most 8 per source"));
    // A client from another /64, and one over IPv4, still get in while all 80 are held.
    const auto other_v6 = control_probe(lab.client().netns, nm::strip_prefix(lab.client().ipv6), server_v6);
    CHECK_THAT(other_v6.first_line, Catch::Contains("\"challenge\""));
    const auto v4 = control_probe(lab.client().netns, nm::strip_prefix(lab.client().ipv4), nm::strip_prefix(lab.server().ipv4));
    CHECK_THAT(v4.first_line, Catch::Contains("\"challenge\""));
    // The log names the address that was refused, not only its block (the first address took the eight).
    CHECK_THAT(server.process.drain(milliseconds(300)), Catch::Contains("refused " + block + "2: too many settings-control connections"));
}

TEST_CASE("serve --ipv6-source-prefix 128: each IPv6 address is a source of its own again", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string block = "2001:2:0:37::";
    add_client_block(lab, block, 2);
    nm::wait_until([&] { return nm::test::run_command("ip -n " + lab.server().netns + " -6 addr show tentative").output.empty(); }, seconds(10),
                   "the server's IPv6 address to leave DAD");
    Server server(lab, {"--ipv6-source-prefix", "128", "--max-control-per-source", "1"});
    const std::string server_v6 = nm::strip_prefix(lab.server().ipv6);
    const auto first = control_probe(lab.client().netns, block + "1", server_v6);
    const auto second = control_probe(lab.client().netns, block + "2", server_v6);
    const auto again = control_probe(lab.client().netns, block + "1", server_v6);
    CHECK_THAT(first.first_line, Catch::Contains("\"challenge\""));
    CHECK_THAT(second.first_line, Catch::Contains("\"challenge\""));
    CHECK_THAT(again.first_line, Catch::Contains("at most 1 per source"));
}

TEST_CASE("serve --max-duration 5: `run -n 1000G` ends within 10 s with status limited, naming the flag", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab, {"--max-duration", "5"});
    const auto t0 = SteadyTime::now();
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-n 1000G --json"), seconds(30));
    const double took = since(t0);
    INFO(r.output);
    CHECK(r.exit_status == 1);
    CHECK(took < 10);
    const auto res = nlohmann::json::parse(r.output.substr(0, r.output.rfind('}') + 1));
    CHECK(res.at("status") == "limited");
    CHECK_THAT(res.at("error").get<std::string>(), Catch::Contains("5 s") && Catch::Contains("serve --max-duration"));
    CHECK(res.at("bytes").get<double>() > 1e6);  // what moved until then is measured
    // A timed test longer than the limit is refused at hello, before anything runs.
    const auto long_run = run_in_netns(lab.client().netns, run_cmd(lab, "-t 6"), seconds(30));
    CHECK(long_run.exit_status == 1);
    CHECK_THAT(long_run.output,
               Catch::Contains("duration: 6 s") && Catch::Contains("this server allows 5 s per test (raise with serve --max-duration)"));
    // The stall timeout has a ceiling too.
    const auto stall = run_in_netns(lab.client().netns, run_cmd(lab, "-t 1 --stall-timeout 1000"), seconds(30));
    CHECK(stall.exit_status == 1);
    CHECK_THAT(stall.output, Catch::Contains("serve --max-stall-timeout"));
}

TEST_CASE("serve: a 256 x 256 x 64 MiB bidir spec is refused at hello and the server's memory does not grow", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    // The address-space limit keeps a server that does allocate (as before this check) from taking the
    // machine down with it: it then fails or dies, and the test fails, instead of the OOM killer choosing.
    Server server(lab, {}, {"prlimit", "--as=8589934592"});
    const pid_t pid = server.process.pid();
    const uint64_t hwm_before = nm::test::process_status_kib(pid, "VmHWM");
    const uint64_t rss_before = nm::test::process_status_kib(pid, "VmRSS");
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-P 256 --threads 256 -l 64M --bidir -t 1"), seconds(30));
    INFO(r.output);
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("over the server's limits") && Catch::Contains("memory: the test needs 32 GiB") &&
                             Catch::Contains("serve --max-test-memory") && Catch::Contains("serve --max-threads"));
    const uint64_t hwm_after = nm::test::process_status_kib(pid, "VmHWM");
    const uint64_t rss_after = nm::test::process_status_kib(pid, "VmRSS");
    INFO("VmHWM " << hwm_before << " -> " << hwm_after << " KiB, VmRSS " << rss_before << " -> " << rss_after << " KiB");
    CHECK(hwm_after - hwm_before < uint64_t{16} * 1024);
    CHECK(rss_after < rss_before + uint64_t{16} * 1024);
    CHECK(::kill(pid, 0) == 0);  // alive
    CHECK(run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3")).exit_status == 0);
}

TEST_CASE("serve under ulimit -n 48: a flood of connections does not make it spin, and it serves again afterwards", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    // Control sessions (the agent keeps a quiet observer) hold descriptors; allow more than fit in 48.
    Server server(lab, {"--max-control", "500", "--max-control-per-source", "500", "--max-handshakes-per-source", "500"}, {"prlimit", "--nofile=48"});
    const pid_t pid = server.process.pid();
    Connections flood(lab, 120);
    flood.send_each(R"({"v":)" + std::to_string(nm::kControlVersion) + R"(,"type":"control_hello","client_nonce":")" + std::string(64, 'a') +
                    "\"}\n");
    // Descriptors run out while the flood is taken off the queue (the server says so); then hold it and
    // measure the CPU time over 3 s (a measuring period, not a wait for anything).
    REQUIRE_THAT(server.process.read_until("out of file descriptors", seconds(15)), Catch::Contains("out of file descriptors"));
    const double cpu_before = nm::test::process_cpu_seconds(pid);
    const auto t0 = SteadyTime::now();
    std::this_thread::sleep_for(seconds(3));
    const double cpu = nm::test::process_cpu_seconds(pid) - cpu_before;
    const double wall = since(t0);
    INFO("server CPU " << cpu << " s over " << wall << " s");
    CHECK(cpu < 0.25 * wall);           // a spinning accept loop burns a whole core
    CHECK(flood.closed_by_peer() > 0);  // the ones over the limit were accepted and closed, not left queued
    flood.close_all();
    nm::wait_until([&] { return run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3")).exit_status == 0; }, seconds(15),
                   "the server to serve a test again");
}

TEST_CASE("serve --allow-from: other sources are refused at accept and logged, listed ones are served", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    {
        Server server(lab, {"--allow-from", "198.18.0.99/32", "--allow-from", "2001:2::/48"});
        const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3"), seconds(20));
        INFO(r.output);
        CHECK(r.exit_status == 1);
        CHECK_THAT(server.process.read_until("not in --allow-from", seconds(5)),
                   Catch::Contains("refused " + nm::strip_prefix(lab.client().ipv4) + ": not in --allow-from"));
    }
    Server server(lab, {"--allow-from", "198.18.0.0/24"});
    CHECK(run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3")).exit_status == 0);
    const auto bad = run_in_netns(lab.server().netns, nicmatrix_binary() + " serve -p 5399 --allow-from 198.18.0.0/33");
    CHECK(bad.exit_status == 2);
    CHECK_THAT(bad.output, Catch::Contains("--allow-from 198.18.0.0/33: prefix length must be 0..32"));
}

TEST_CASE("serve --key-file: a test without the key is refused, with it the test runs, a wrong key is refused", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::test::TempDir dir;
    const std::string key = write_key(dir, "key", 'k');
    const std::string other = write_key(dir, "other", 'o');
    {
        Server server(lab, {"--key-file", key});
        auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3"));
        INFO(r.output);
        CHECK(r.exit_status == 1);
        CHECK_THAT(r.output, Catch::Contains("this server requires the key for tests") && Catch::Contains("--key-file"));
        r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.5 --json --key-file " + key));
        INFO(r.output);
        REQUIRE(r.exit_status == 0);
        CHECK(nlohmann::json::parse(r.output).at("bytes").get<double>() > 1e6);
        r = run_in_netns(lab.client().netns, run_cmd(lab, "-u -b 10M -t 0.5 --key-file " + key));
        CHECK(r.exit_status == 0);
        r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3 --key-file " + other));
        INFO(r.output);
        CHECK(r.exit_status == 1);
        CHECK_THAT(r.output, Catch::Contains("authentication failed"));
    }
    // A client holding a key does not take figures from a server that cannot prove it holds it.
    Server plain(lab, {});
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-t 0.3 --key-file " + key));
    INFO(r.output);
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("does not authenticate tests"));
}

TEST_CASE("run -u -l 65507 --gso is refused before any data, naming the payload and the path MTU", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab, {});
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-u -l 65507 --gso -t 1"));
    INFO(r.output);
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("a UDP payload of 65507 bytes") &&
                             Catch::Contains("path MTU 1500 to " + nm::strip_prefix(lab.server().ipv4)) && Catch::Contains("1472 bytes or less"));
    CHECK(run_in_netns(lab.client().netns, run_cmd(lab, "-u -l 1472 --gso -b 50M -t 0.5")).exit_status == 0);
}

TEST_CASE("A result bigger than one control message (256 streams, 0.01 s intervals) reaches the client whole", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab, {"--json"});
    const auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-P 128 --bidir -t 1.5 -i 0.01 --json"), seconds(30));
    INFO(r.output.substr(0, 2000));
    REQUIRE(r.exit_status == 0);
    const auto res = nlohmann::json::parse(r.output);
    CHECK(res.at("status") == "ok");
    CHECK(res.at("streams").size() == 256);
    CHECK(res.at("intervals").size() >= 140);
    // The server's own line for the test is the same report, which was more than the 64 KiB cap.
    const auto line = server.process.read_until("\"report\"", seconds(5));
    REQUIRE_FALSE(line.empty());
    const auto report = nlohmann::json::parse(line).at("report");
    CHECK(report.dump().size() > size_t{64} * 1024);
    uint64_t received = 0;
    for (const auto& s : res.at("streams")) {
        if (s.at("direction") == "forward") received += s.at("bytes").get<uint64_t>();
    }
    CHECK(received == report.at("received_bytes").get<uint64_t>());
}

TEST_CASE("sweep --lab with a config of 300 streams is exit 2 at load, naming the field, no lab is made", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    std::ifstream in(std::string(NM_SOURCE_DIR) + "/configs/offload-mtu.json");
    auto config = nlohmann::json::parse(in);
    config["traffic"][0]["streams"] = 300;
    const std::string file = dir.file("s.json");
    std::ofstream(file) << config.dump();
    const std::string name = nm::test::unique_name("nms");
    const auto r = nm::test::run_command(nicmatrix_binary() + " sweep " + file + " --lab --lab-name " + name + " -o " + dir.file("r.json") +
                                         " --journal " + dir.file("j.json"));
    INFO(r.output);
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains(file + ": /traffic/0/streams: expected a positive integer (at most 256), got 300"));
    CHECK_THAT(nm::test::run_command("ip netns list").output, !Catch::Contains(name));
    CHECK_FALSE(std::filesystem::exists(dir.file("r.json")));
    CHECK_FALSE(std::filesystem::exists(dir.file("j.json")));
}

namespace {

/// Datagrams aimed at the server's UDP test port from the lab's client namespace while a test runs: a
/// valid-looking engine header for stream 0 in the window, sequence numbers cycling over [0, span), in
/// this build's layout with a guessed cookie and in the layout without a cookie (seq, send time, stream).
class Spoofer {
public:
    Spoofer(const nm::test::ScopedLab& lab, const std::string& from, uint16_t port, uint64_t span) {
        thread_ = std::jthread([&lab, from, port, span](std::stop_token stop) {
            nm::NetnsScope scope(lab.client().netns);
            nm::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
            const auto local = nm::resolve_address(from, port);
            if (::bind(fd.get(), local.get(), local.len) != 0) return;
            const auto to = nm::resolve_address(nm::strip_prefix(lab.server().ipv4), nm::kDefaultPort);
            unsigned char buf[1472] = {};
            for (uint64_t seq = 0; !stop.stop_requested(); seq = (seq + 1) % span) {
                std::memcpy(buf, &seq, 8);  // the layout before the cookie: seq, send_ns, stream | window bit
                const uint64_t ns = 1000;
                std::memcpy(buf + 8, &ns, 8);
                const uint16_t stream = 0x8000;
                std::memcpy(buf + 16, &stream, 2);
                (void)::sendto(fd.get(), buf, sizeof buf, MSG_DONTWAIT, to.get(), to.len);
                nm::UdpHeader{seq, 1000, 0, true, static_cast<uint32_t>(seq * 2654435761u)}.write(buf);
                (void)::sendto(fd.get(), buf, sizeof buf, MSG_DONTWAIT, to.get(), to.len);
                if (seq % 20 == 0) std::this_thread::sleep_for(milliseconds(1));
            }
        });
    }

private:
    std::jthread thread_;
};

}  // namespace

namespace {

// "dropped N" of the qdisc with handle `handle` on `itf`, from `tc -s qdisc show`: the kernel's own count.
uint64_t qdisc_dropped(const nm::LabInterface& itf, const std::string& handle) {
    const auto r = nm::test::run_command("tc -n " + itf.netns + " -s qdisc show dev " + itf.ifname);
    const auto at = r.output.find("qdisc pfifo " + handle);
    REQUIRE(at != std::string::npos);
    const auto d = r.output.find("dropped ", at);
    REQUIRE(d != std::string::npos);
    return std::stoull(r.output.substr(d + 8));
}

}  // namespace

TEST_CASE("Spoofed UDP datagrams do not hide loss: the run's loss is what the shaper on the path dropped", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& a = lab.client();
    const std::string tc = "tc -n " + a.netns + " ";
    const std::string dev = " dev " + a.ifname + " ";
    // The test's UDP goes through a 16 Mbit/s class with a 10-packet queue, which drops what does not fit;
    // TCP (the control connection) and the spoofers (source ports 40000-40001) go around it.
    for (const std::string& cmd :
         {"qdisc add" + dev + "root handle 1: htb default 10", "class add" + dev + "parent 1: classid 1:1 htb rate 10gbit",
          "class add" + dev + "parent 1:1 classid 1:10 htb rate 16mbit ceil 16mbit", "class add" + dev + "parent 1:1 classid 1:20 htb rate 5gbit",
          "qdisc add" + dev + "parent 1:10 handle 10: pfifo limit 10",
          "filter add" + dev + "parent 1: protocol ip u32 match ip protocol 6 0xff flowid 1:20",
          "filter add" + dev + "parent 1: protocol ip u32 match ip sport 40000 0xfffe flowid 1:20"}) {
        REQUIRE(nm::test::run_command(tc + cmd).exit_status == 0);
    }
    REQUIRE(nm::test::run_command("ip -n " + a.netns + " addr add 198.18.0.77/24 dev " + a.ifname).exit_status == 0);
    Server server(lab, {});
    // 20 Mbit/s of 1472-byte datagrams for 2 s: about 3400, a fifth of them over the class's rate. The
    // spoofers send every sequence number up to 4000 again and again, from the client's own address and
    // from another one.
    Spoofer same(lab, nm::strip_prefix(a.ipv4), 40000, 4000);
    Spoofer other(lab, "198.18.0.77", 40001, 4000);
    const uint64_t dropped_before = qdisc_dropped(a, "10:");
    const auto r = run_in_netns(a.netns, run_cmd(lab, "-u -b 20M -t 2 --json"), seconds(30));
    const uint64_t dropped = qdisc_dropped(a, "10:") - dropped_before;
    INFO(r.output.substr(0, 3000));
    REQUIRE(r.exit_status == 0);
    const auto loss = nlohmann::json::parse(r.output).at("loss");
    const auto lost = loss.at("lost").get<uint64_t>();
    INFO("lost " << lost << ", the shaper dropped " << dropped);
    REQUIRE(dropped > 200);
    // Counted spoofs would fill the gaps: lost would be near 0 and duplicates pile up.
    CHECK(static_cast<double>(lost) == Approx(static_cast<double>(dropped)).margin(10));
    CHECK(loss.at("duplicates") == 0);
    CHECK(loss.at("received").get<uint64_t>() + lost == loss.at("sent").get<uint64_t>());
}

TEST_CASE("A UDP flood across the end of a test does not hang the server, and SIGTERM still stops it", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab, {});
    std::vector<std::unique_ptr<Spoofer>> flood;
    for (uint16_t i = 0; i < 2; ++i) flood.push_back(std::make_unique<Spoofer>(lab, nm::strip_prefix(lab.client().ipv4), 40000 + i, 1u << 30));
    const auto t0 = SteadyTime::now();
    auto r = run_in_netns(lab.client().netns, run_cmd(lab, "-u -b 10M -t 1"), seconds(30));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(since(t0) < 8);
    // The next test is served (the first one's receivers let go), and SIGTERM during it ends the server.
    ChildProcess client(nicmatrix_in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-u", "-b", "10M", "-t", "5"}));
    // Its first live interval line: the test is under way.
    REQUIRE_THAT(client.read_until("[SUM]", seconds(15)), Catch::Contains("sent"));
    const auto t1 = SteadyTime::now();
    server.process.signal(SIGTERM);
    const int rc = server.process.wait(seconds(10));
    CHECK(since(t1) < 5);
    CHECK(rc == 0);
    CHECK(client.wait(seconds(15)) != 0);  // told its test was interrupted
}
