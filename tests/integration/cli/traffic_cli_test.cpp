// `nicmatrix serve` and `nicmatrix run` as processes in the lab (`ip netns exec`), checked from outside:
// exit codes, a killed server, and CPU figures against the kernel's per-process accounting.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/wait_until.hpp"
#include "core/traffic/traffic_types.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/command.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::ChildProcess;
using nm::test::nicmatrix_binary;
using nm::test::nicmatrix_in_netns;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

// The processes' stdout alone: --json output must parse.
constexpr auto kStdout = ChildProcess::Output::StdoutOnly;

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

uint64_t rx_bytes(const nm::LabInterface& itf) {
    const auto r = run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    return nlohmann::json::parse(r.output).at(0).at("stats64").at("rx").at("bytes");
}

}  // namespace

TEST_CASE("serve and run as processes: JSON result, CPU checked against /proc and wait4", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    ChildProcess server(nicmatrix_in_netns(lab.server().netns, {"serve", "--json"}), kStdout);
    const auto listening = nlohmann::json::parse(server.read_line(std::chrono::seconds(5)));  // the READY line
    CHECK(listening.at("listening") == nm::kDefaultPort);
    const double server_cpu_before = nm::test::process_cpu_seconds(server.pid());

    ChildProcess client(nicmatrix_in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-t", "1.5", "--json"}), kStdout);
    const std::string out = client.drain(std::chrono::seconds(10));
    rusage usage{};
    REQUIRE(client.wait(std::chrono::seconds(10), &usage) == 0);
    const auto test_line = nlohmann::json::parse(server.read_line(std::chrono::seconds(5)));  // the server logged the test
    const double server_cpu = nm::test::process_cpu_seconds(server.pid()) - server_cpu_before;

    const auto res = nlohmann::json::parse(out);
    INFO(out);
    CHECK(res.at("status") == "ok");
    CHECK(res.at("bytes").get<double>() > 1e7);
    CHECK(test_line.at("report").at("received_bytes") == res.at("bytes"));
    const auto& cpu = res.at("cpu");
    const double sender = cpu.at("sender").at("user_s").get<double>() + cpu.at("sender").at("sys_s").get<double>();
    const double receiver = cpu.at("receiver").at("user_s").get<double>() + cpu.at("receiver").at("sys_s").get<double>();
    const double client_total = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    INFO("sender " << sender << " s vs client process " << client_total << " s; receiver " << receiver << " s vs server process " << server_cpu
                   << " s");
    // The engine counts its worker threads over the window; the kernel counts the whole process over its
    // life. So: never more than the process (one clock tick of slack), and a good part of it for a busy 1.5 s
    // run (the part outside the window is start-up and teardown, which a loaded machine stretches).
    CHECK(sender <= client_total + 0.02);
    CHECK(sender >= 0.3 * client_total - 0.02);
    CHECK(receiver <= server_cpu + 0.02);
    CHECK(receiver >= 0.3 * server_cpu - 0.02);
    // util_pct is over the sender's own window (ends.sender.duration_s), which a loaded machine can set apart
    // from the result's duration_s (the receiver's) by more than 1%.
    CHECK(cpu.at("sender").at("util_pct").get<double>() ==
          Approx(100 * sender / res.at("ends").at("sender").at("duration_s").get<double>()).epsilon(0.01));
}

TEST_CASE("Killing the server mid-test ends the client within duration + 5 s with a clear error", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    ChildProcess server(nicmatrix_in_netns(lab.server().netns, {"serve"}), kStdout);
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    const auto start = std::chrono::steady_clock::now();
    ChildProcess client(nicmatrix_in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-t", "3", "--json"}), kStdout);
    nm::wait_until([&] { return rx_bytes(lab.server()) > 50'000'000; }, std::chrono::seconds(5), "data to flow");
    server.signal(SIGKILL);
    const std::string out = client.drain(std::chrono::seconds(10));
    rusage usage{};
    const int rc = client.wait(std::chrono::seconds(10), &usage);
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
    ChildProcess server(nicmatrix_in_netns(lab.server().netns, {"serve"}), kStdout);
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
    r = client("-t 1");  // nothing listening
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("Connection refused"));

    ChildProcess server(nicmatrix_in_netns(lab.server().netns, {"serve"}), kStdout);
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
    ChildProcess server(nicmatrix_in_netns(lab.server().netns, {"serve"}), kStdout);
    REQUIRE_THAT(server.read_line(std::chrono::seconds(5)), Catch::Contains("listening"));
    // 30 s: the run is certainly still going when its second interval is read, however loaded the machine.
    ChildProcess client(nicmatrix_in_netns(lab.client().netns, {"run", "-c", nm::strip_prefix(lab.server().ipv4), "-b", "50M", "-t", "30"}), kStdout);
    std::string seen, second;
    for (std::string line; second.empty() && !(line = client.read_line(std::chrono::seconds(15))).empty();) {
        seen += line + "\n";
        if (line.find("[SUM]   1.") == 0) second = line;
    }
    INFO(seen);
    REQUIRE_FALSE(second.empty());
    CHECK_THAT(seen, Catch::Contains("Live (client's own counts"));
    CHECK(::waitpid(client.pid(), nullptr, WNOHANG) == 0);  // still running: the line came live
    // The sender's pacing (the kernel's SO_MAX_PACING_RATE) holds 50 Mbit/s; by the second interval the
    // socket buffer has filled, so what the sender hands over each second is what leaves.
    CHECK_THAT(second, Catch::EndsWith("sent"));
    const double mbit = std::stod(second.substr(second.rfind("Bytes") + 5));
    CHECK_THAT(second, Catch::Contains("Mbits/sec"));
    CHECK(mbit > 40);
    CHECK(mbit < 60);
    REQUIRE(::kill(client.pid(), SIGINT) == 0);
    const std::string rest = client.drain(std::chrono::seconds(10));
    rusage usage{};
    CHECK(client.wait(std::chrono::seconds(10), &usage) == 1);
    CHECK_THAT(rest, Catch::Contains("interrupted"));
}
