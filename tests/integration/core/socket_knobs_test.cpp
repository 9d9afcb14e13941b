// The socket knobs (-C, -M, -N, --dscp, -Z, --skip-rx-copy, --bind-dev, --rx-spin) on a lab, each read from
// outside the engine while a test runs: `ss -tin` for congestion control, MSS and the bound device, a
// tcpdump capture for the TOS byte, strace for MSG_TRUNC, the kernel's error queue for zerocopy completions,
// GNU time's count of the receiving server's voluntary context switches for the receiver's spin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "core/session/traffic_client.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/watched_server.hpp"

using nm::test::LabServer;
using nm::test::run_against_watched_server;
using nm::test::run_in;
using nm::test::run_in_netns;

namespace {

nm::TestSpec stream_spec(const std::string& host, uint16_t port) {
    nm::TestSpec s;
    s.host = host;
    s.port = port;
    s.duration_s = 1.5;
    s.interval_s = 0;
    return s;
}

/// A congestion control the namespace offers that is not its default (so that seeing it proves -C).
std::string other_congestion(const std::string& netns) {
    const auto def = run_in_netns(netns, "cat /proc/sys/net/ipv4/tcp_congestion_control").output;
    const auto avail = run_in_netns(netns, "cat /proc/sys/net/ipv4/tcp_available_congestion_control").output;
    for (const char* cc : {"reno", "cubic", "bbr"}) {
        if (avail.find(cc) != std::string::npos && def.rfind(cc, 0) != 0) return cc;
    }
    return "";
}

/// `ss -tin` lines (state line + info line joined) of established sockets in `netns` that moved data.
std::vector<std::string> busy_sockets(const std::string& netns) {
    const auto r = run_in_netns(netns, "ss -tinH state established");
    std::vector<std::string> out;
    std::string line, joined;
    std::istringstream in(r.output);
    while (std::getline(in, line)) {
        if (!line.empty() && (line[0] == '\t' || line[0] == ' ')) {
            joined += line;
            if (joined.find("bytes_sent:") != std::string::npos || joined.find("bytes_received:") != std::string::npos) {
                const std::regex big("bytes_(sent|received):([0-9]{7,})");
                if (std::regex_search(joined, big)) out.push_back(joined);
            }
        } else {
            joined = line;
        }
    }
    return out;
}

}  // namespace

TEST_CASE_METHOD(nm::test::InProcessLab, "Knobs -C and -M: ss -tin shows the congestion control on the sender and the MSS on both ends",
                 "[integration]") {
    const std::string cc = other_congestion(lab.client().netns);
    if (cc.empty()) {
        std::fputs("SKIPPED: the namespace offers no congestion control besides its default\n", stderr);
        std::exit(77);
    }
    auto spec = stream_spec(nm::strip_prefix(lab.server().ipv4), server.port());
    spec.socket.congestion = cc;
    spec.socket.mss = 1000;
    spec.socket.nodelay = true;
    auto running = std::async(std::launch::async, [&] { return run_in(lab.client(), spec); });
    std::vector<std::string> client_lines, server_lines;
    nm::wait_until(
        [&] {
            client_lines = busy_sockets(lab.client().netns);
            server_lines = busy_sockets(lab.server().netns);
            return !client_lines.empty() && !server_lines.empty();
        },
        std::chrono::seconds(10), "the data connection in ss -tin on both ends");
    const auto res = running.get();
    INFO(client_lines.front() << "\n" << server_lines.front());
    REQUIRE(res.status == nm::RunStatus::Ok);
    CHECK(client_lines.front().find(" " + cc + " ") != std::string::npos);
    // TCP_MAXSEG 1000 on the client's SYN caps both ends; the MSS in use is that less the options.
    const std::regex mss_re("mss:([0-9]+)");
    std::smatch m;
    REQUIRE(std::regex_search(client_lines.front(), m, mss_re));
    const int client_mss = std::stoi(m[1]);
    REQUIRE(std::regex_search(server_lines.front(), m, mss_re));
    const int server_mss = std::stoi(m[1]);
    CHECK(client_mss <= 1000);
    CHECK(client_mss >= 960);
    CHECK(server_mss <= 1000);
    // What the result records is what ss shows.
    CHECK(res.socket.congestion == cc);
    CHECK(static_cast<int>(res.socket.mss) == client_mss);
    CHECK(res.socket.nodelay);
    CHECK(res.spec.socket.congestion == cc);
}

TEST_CASE_METHOD(nm::test::InProcessLab, "Knob -C with a congestion control the namespace lacks: a usage error naming the kernel's list, nothing run",
                 "[integration]") {
    auto spec = stream_spec(nm::strip_prefix(lab.server().ipv4), server.port());
    spec.socket.congestion = "nosuchcc";
    const auto avail = run_in_netns(lab.client().netns, "cat /proc/sys/net/ipv4/tcp_available_congestion_control").output;
    try {
        run_in(lab.client(), spec);
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        CHECK_THAT(std::string(e.what()), Catch::Contains("\"nosuchcc\"") && Catch::Contains("tcp_available_congestion_control"));
        std::istringstream names(avail);
        for (std::string n; names >> n;) CHECK_THAT(std::string(e.what()), Catch::Contains(n));
    }
}

TEST_CASE("Knob --dscp EF: a capture on the server's veth sees TOS 0xb8 on the data, both ways, IPv4 and IPv6", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("tcpdump");
    nm::test::ScopedLab lab;
    LabServer server(lab.server().netns);
    for (const auto& host : {nm::strip_prefix(lab.server().ipv4), nm::strip_prefix(lab.server().ipv6)}) {
        const bool v6 = host.find(':') != std::string::npos;
        for (auto pattern : {nm::TrafficPattern::Stream, nm::TrafficPattern::Rr}) {
            for (auto protocol : {nm::Protocol::Tcp, nm::Protocol::Udp}) {
                auto spec = stream_spec(host, server.port());
                spec.protocol = protocol;
                spec.pattern = pattern;
                spec.socket.dscp = 46;
                if (protocol == nm::Protocol::Udp && pattern == nm::TrafficPattern::Stream) spec.rate_pps = 20000;
                spec.duration_s = 1;
                auto running = std::async(std::launch::async, [&] { return run_in(lab.client(), spec); });
                if (protocol == nm::Protocol::Tcp) {
                    // Capture once the data connection is up, so the control connection's handshake is not
                    // most of what is seen.
                    nm::wait_until(
                        [&] {
                            const auto ss = run_in_netns(lab.client().netns, "ss -tnH state established").output;
                            return std::count(ss.begin(), ss.end(), '\n') >= 2;
                        },
                        std::chrono::seconds(10), "the data connection");
                }
                // 40 packets of the protocol, whichever way they go: the test's data (requests and answers,
                // data and ACKs) and perhaps a control message or two, which carry no DSCP.
                const auto cap = run_in_netns(lab.server().netns,
                                              "tcpdump -nn -v -c 40 -i " + lab.server().ifname + " " + (v6 ? "ip6 and " : "ip and ") +
                                                  (protocol == nm::Protocol::Udp ? "udp" : "tcp"),
                                              std::chrono::seconds(8));
                const auto res = running.get();
                INFO(host << " " << nlohmann::json(pattern).dump() << " " << nlohmann::json(protocol).dump() << "\n" << cap.output);
                REQUIRE(res.status == nm::RunStatus::Ok);
                const std::string mark = v6 ? "class 0xb8" : "tos 0xb8";
                size_t marked = 0, packets = 0;
                std::istringstream in(cap.output);
                for (std::string line; std::getline(in, line);) {
                    if (line.find(v6 ? "IP6 (" : "IP (") == std::string::npos) continue;
                    ++packets;
                    if (line.find(mark) != std::string::npos) ++marked;
                }
                CHECK(packets >= 30);
                CHECK(marked + 4 >= packets);
                CHECK(res.socket.tos == 0xb8);
                CHECK(res.receiver.socket.tos == 0xb8);
            }
        }
    }
}

TEST_CASE_METHOD(nm::test::InProcessLab,
                 "Knob --bind-dev: ss shows the client's data socket bound to its veth, a device that is not there is a usage error",
                 "[integration]") {
    auto spec = stream_spec(nm::strip_prefix(lab.server().ipv4), server.port());
    spec.socket.bind_dev = lab.client().ifname;
    auto running = std::async(std::launch::async, [&] { return run_in(lab.client(), spec); });
    std::vector<std::string> lines;
    nm::wait_until([&] { return !(lines = busy_sockets(lab.client().netns)).empty(); }, std::chrono::seconds(10), "the data connection in ss -tin");
    const auto res = running.get();
    INFO(lines.front());
    REQUIRE(res.status == nm::RunStatus::Ok);
    CHECK(lines.front().find("%" + lab.client().ifname + ":") != std::string::npos);
    CHECK(res.socket.bind_dev == lab.client().ifname);
    spec.socket.bind_dev = "nm-none";
    CHECK_THROWS_WITH(run_in(lab.client(), spec), Catch::Contains("bind-dev") && Catch::Contains("nm-none"));
}

TEST_CASE_METHOD(nm::test::InProcessLab,
                 "Knob -Z: zerocopy sends and their completions from the error queue, on veth the kernel copies, and it says so", "[integration]") {
    auto spec = stream_spec(nm::strip_prefix(lab.server().ipv4), server.port());
    spec.socket.zerocopy = true;
    const auto res = run_in(lab.client(), spec);
    INFO(nlohmann::json(res.socket).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    const auto& z = res.socket.zerocopy;
    CHECK(z.requested);
    CHECK(z.sends >= 64);
    CHECK(z.completions > 0);
    CHECK(z.completions <= z.sends);
    // veth delivers locally: the kernel copies the pinned pages (SO_EE_CODE_ZEROCOPY_COPIED), and the sender
    // then goes on with plain sends, noting why.
    CHECK(z.copied == z.completions);
    CHECK(z.fell_back);
    CHECK_THAT(z.note, Catch::Contains("copied"));
    CHECK(res.bytes > 1'000'000);
}

TEST_CASE("Knob --skip-rx-copy: strace sees the receiving server read with MSG_TRUNC", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("strace");
    nm::test::ScopedLab lab;
    // The server as a process under strace, so its receive calls are seen from outside.
    const auto [client, traced] = run_against_watched_server(lab, "strace -f -qq -e trace=recvfrom", "-t 1 --skip-rx-copy --json");
    INFO(client.output.substr(0, 2000));
    REQUIRE(client.exit_status == 0);
    CHECK(nlohmann::json::parse(client.output).at("socket").at("skip_rx_copy") == true);
    size_t trunc = 0;
    std::istringstream in(traced);
    for (std::string line; std::getline(in, line);) {
        if (line.find("MSG_TRUNC") != std::string::npos) ++trunc;
    }
    CHECK(trunc > 100);
}

namespace {

struct SpinRun {
    nlohmann::json result;    ///< the client's `run --json`
    long voluntary_switches;  ///< the server process's, from GNU time (wait4's rusage): how often it slept
};

/// A 1.5 s TCP stream with `--rx-spin us` against a `serve --once` under GNU time.
SpinRun spin_run(const nm::test::ScopedLab& lab, unsigned us) {
    const auto [client, timed] =
        run_against_watched_server(lab, "/usr/bin/time -f nvcsw=%w", "-t 1.5 -i 0 --rx-spin " + std::to_string(us) + " --json");
    INFO(client.output.substr(0, 2000));
    INFO(timed);
    REQUIRE(client.exit_status == 0);
    const auto at = timed.find("nvcsw=");
    REQUIRE(at != std::string::npos);
    return {nlohmann::json::parse(client.output), std::stol(timed.substr(at + 6))};
}

}  // namespace

TEST_CASE("Knob --rx-spin: the receiving server sleeps far less often (GNU time's voluntary context switches), and says how often it spun",
          "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("/usr/bin/time");
    nm::test::ScopedLab lab;
    const SpinRun sleeping = spin_run(lab, 0);
    const SpinRun spinning = spin_run(lab, 5000);
    const auto per_gb = [](const SpinRun& r) { return static_cast<double>(r.voluntary_switches) / (r.result.at("bytes").get<double>() / 1e9); };
    INFO("sleeping: " << sleeping.voluntary_switches << " switches, " << per_gb(sleeping) << " per GB, " << sleeping.result.at("socket").dump());
    INFO("spinning: " << spinning.voluntary_switches << " switches, " << per_gb(spinning) << " per GB, " << spinning.result.at("socket").dump());
    REQUIRE(sleeping.result.at("status") == "ok");
    REQUIRE(spinning.result.at("status") == "ok");
    // Without a spin, the receiver sleeps whenever it has drained its socket: thousands of times a second
    // on an idle machine, hundreds on a loaded one.
    CHECK(sleeping.result.at("socket").at("rx_spin").at("us") == 0);
    CHECK(sleeping.result.at("socket").at("rx_spin").at("spins") == 0);
    CHECK(sleeping.voluntary_switches > 200);
    // With 5 ms of polling, data usually comes first (how often depends on the machine's load: a sender
    // kept off its CPU for longer leaves the spin to run out), and the kernel counts far fewer sleeps. How
    // often the socket ran dry at all is the machine's: thousands of times on an idle one, 25 in 1.5 s on a
    // loaded CI machine where the receiver was mostly behind; it did at least once.
    const auto& spin = spinning.result.at("socket").at("rx_spin");
    CHECK(spin.at("us") == 5000);
    CHECK(spin.at("spins").get<uint64_t>() > 0);
    CHECK(spin.at("caught").get<uint64_t>() > 0);
    CHECK(spin.at("caught").get<uint64_t>() <= spin.at("spins").get<uint64_t>());
    CHECK(per_gb(spinning) < 0.4 * per_gb(sleeping));  // 1/40 on an idle machine, 1/7 under ctest -j2 and a build
    // The receiving end applied it, the sending end has no receivers in a forward test.
    CHECK(spinning.result.at("ends").at("receiver").at("socket").at("rx_spin").at("us") == 5000);
    CHECK(spinning.result.at("ends").at("sender").at("socket").at("rx_spin").at("us") == 0);
}

TEST_CASE("Knob --rx-spin out of range or on a request/response test: a usage error naming it, nothing run", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string bin = nm::test::nicmatrix_binary();
    const std::string target = " run -c " + nm::strip_prefix(lab.server().ipv4) + " -t 1 ";
    const auto big = run_in_netns(lab.client().netns, bin + target + "--rx-spin 10001");
    CHECK(big.exit_status != 0);
    CHECK_THAT(big.output, Catch::Contains("rx-spin: 10001 us; must be 0..10000"));
    const auto rr = run_in_netns(lab.client().netns, bin + target + "--rr --rx-spin 10");
    CHECK(rr.exit_status != 0);
    CHECK_THAT(rr.output, Catch::Contains("rx-spin: for stream receivers"));
}
