// --peer-kind iperf3 against Debian's own `iperf3 -s`, started by each test in its lab's server namespace:
// what the run reports is checked against what iperf3 itself logged (its --json log, its -V text log),
// the kernel's interface counters, and ip/ethtool for what a sweep changed.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

using nlohmann::json;
using nm::test::ChildProcess;
using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

// Debian's iperf3 -s in `netns` on port 5201 (`ip netns exec` execs it: the child is iperf3 itself, killed
// and reaped when the test's scope ends), its log in `log`. Waits (by a deadline) until it listens.
class Iperf3Server {
public:
    Iperf3Server(const std::string& netns, const std::string& log, bool json_log) : netns_(netns), log_(log), process_(args(netns, log, json_log)) {
        nm::wait_until([&] { return !run_in_netns(netns_, "ss -Hltn 'sport = :5201'").output.empty(); }, std::chrono::milliseconds(5000),
                       "iperf3 -s to listen in " + netns_);
    }
    std::string log() const {
        std::ifstream in(log_);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    // The JSON objects of a --json log, one per test (iperf3 writes each as "{" ... "}" lines).
    std::vector<json> tests() const {
        std::vector<json> out;
        std::istringstream lines(log());
        std::string line, object;
        while (std::getline(lines, line)) {
            object += line + "\n";
            if (line == "}") {
                out.push_back(json::parse(object));
                object.clear();
            }
        }
        return out;
    }

private:
    static std::vector<std::string> args(const std::string& netns, const std::string& log, bool json_log) {
        std::vector<std::string> a{"ip", "netns", "exec", netns, "iperf3", "-s", "-p", "5201", "--logfile", log};
        a.push_back(json_log ? "--json" : "-V");
        return a;
    }
    std::string netns_, log_;
    ChildProcess process_;
};

uint64_t rx_bytes(const nm::LabInterface& itf) {
    const auto r = run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    return json::parse(r.output).at(0).at("stats64").at("rx").at("bytes");
}

// "iperf 3.12" from `iperf3 --version`'s first line ("iperf 3.12 (cJSON 1.7.15)").
std::string installed_iperf3_version() {
    const auto out = run_command("iperf3 --version").output;
    std::istringstream s(out);
    std::string name, number;
    s >> name >> number;
    return name + " " + number;
}

json run_json(const nm::test::ScopedLab& lab, const std::string& args) {
    const auto r =
        run_in_netns(lab.client().netns,
                     nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " --peer-kind iperf3 --json " + args + " 2>/dev/null",
                     std::chrono::seconds(30));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    return json::parse(r.output);
}

/// Skips the test without Debian's iperf3 installed.
struct NeedsIperf3 {
    NeedsIperf3() { nm::test::require_tool("iperf3"); }
};

/// A Catch2 fixture: a lab whose path carries packets and a scratch directory `dir`; skips the test without
/// CAP_NET_ADMIN or iperf3 before the lab is made.
struct Iperf3Lab : nm::test::NeedsNetAdmin, NeedsIperf3 {
    nm::test::ScopedLab lab;
    nm::test::TempDir dir;
    Iperf3Lab() { nm::test::wait_for_lab_path(lab.info()); }
};

}  // namespace

TEST_CASE_METHOD(Iperf3Lab, "run --peer-kind iperf3 against Debian's iperf3 -s, figures checked against its own log and the kernel's counters",
                 "[integration]") {
    Iperf3Server server(lab.server().netns, dir.file("iperf3.json"), true);
    const uint64_t rx_before = rx_bytes(lab.server());
    const json res = run_json(lab, "-t 1.5 -P 2");
    const uint64_t rx_delta = rx_bytes(lab.server()) - rx_before;
    INFO(res.dump(1));
    CHECK(res.at("status") == "ok");
    const auto& peer = res.at("peer");
    CHECK(peer.at("kind") == "iperf3");
    CHECK(peer.at("version") == installed_iperf3_version());  // a --json server tells it
    CHECK(peer.at("told").at("time_s") == 2);
    REQUIRE(peer.at("streams").size() == 2);
    CHECK(peer.at("streams")[1].at("id") == 3);
    // iperf3's own log of the test says what the protocol brought back.
    const auto tests = server.tests();
    REQUIRE(tests.size() == 1);
    const json& logged = tests[0];
    CHECK_FALSE(logged.contains("error"));
    CHECK(logged.at("end").at("sum_received").at("bytes") == peer.at("bytes_received"));
    CHECK(logged.at("start").at("test_start").at("num_streams") == 2);
    CHECK(peer.at("cpu").at("total_pct").get<double>() == Approx(logged.at("end").at("cpu_utilization_percent").at("host_total").get<double>()));
    // This end's senders over its window, the server's count over its own: everything the server counted
    // was sent in the window (no warm-up), and little of what was sent was still in flight at TEST_END.
    const auto sent = res.at("bytes").get<uint64_t>();
    const auto received = peer.at("bytes_received").get<uint64_t>();
    CHECK(received <= sent);
    CHECK(received >= 0.9 * static_cast<double>(sent));
    CHECK(res.at("throughput_bps").get<double>() == Approx(peer.at("received_bps").get<double>()).epsilon(0.1));
    // The kernel counted at least that much into the server's interface (headers on top).
    CHECK(rx_delta >= received);
    // The far end was not measured: null, not zero; this end was.
    CHECK(res.at("cpu").at("receiver").is_null());
    CHECK(res.at("nic").at("receiver").is_null());
    CHECK(res.at("cpu").at("sender").at("util_pct").get<double>() > 0);
    CHECK(res.at("packets_source") == "estimate");
}

TEST_CASE_METHOD(Iperf3Lab, "run --peer-kind iperf3 -R, the server sending, and --bidir, with iperf3's -V log free of errors", "[integration]") {
    Iperf3Server server(lab.server().netns, dir.file("iperf3.log"), false);
    const json rev = run_json(lab, "-t 1 -R");
    INFO(rev.dump(1));
    CHECK(rev.at("status") == "ok");
    const auto& peer = rev.at("peer");
    CHECK(peer.at("version").is_null());  // a text-mode server does not say
    const auto got = rev.at("bytes").get<uint64_t>();
    const auto sent = peer.at("bytes_sent").get<uint64_t>();
    CHECK(got > 0);
    CHECK(got <= sent);
    CHECK(got >= 0.85 * static_cast<double>(sent));
    CHECK(peer.at("figures_from_peer") == json({"tcp.retransmits", "streams[].retransmits"}));
    CHECK(rev.at("tcp").at("retransmits") == peer.at("retransmits"));
    CHECK(rev.at("cpu").at("sender").is_null());
    CHECK(rev.at("cpu").at("receiver").is_object());

    const json bidir = run_json(lab, "-t 1 --bidir -P 2");
    INFO(bidir.dump(1));
    CHECK(bidir.at("status") == "ok");
    CHECK(bidir.at("peer").at("bytes_received").get<uint64_t>() > 0);
    CHECK(bidir.at("peer").at("bytes_sent").get<uint64_t>() > 0);
    CHECK(bidir.at("streams").size() == 4);

    const std::string log = server.log();
    INFO(log);
    CHECK_THAT(log, Catch::Contains("Starting Test: protocol: TCP, 1 streams"));
    CHECK_THAT(log, Catch::Contains("Starting Test: protocol: TCP, 2 streams"));
    CHECK_THAT(log, !Catch::Contains("error"));
    CHECK_THAT(log, !Catch::Contains("unable"));
}

TEST_CASE("run --peer-kind iperf3 to a wrong port, to a nicmatrix server and with UDP fails with a clear error", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("iperf3");
    nm::test::ScopedLab lab;
    nm::test::wait_for_lab_path(lab.info());
    const std::string run = nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " --peer-kind iperf3 -t 1 ";
    auto r = run_in_netns(lab.client().netns, run + "-p 5999");
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("Connection refused") && Catch::Contains("is `iperf3 -s` listening on port 5999 there?"));
    // `nicmatrix serve` is no iperf3: its answer (or its silence) is named.
    ChildProcess serve(nm::test::nicmatrix_in_netns(lab.server().netns, {"serve"}));
    serve.read_until("listening", std::chrono::seconds(5));
    r = run_in_netns(lab.client().netns, run + "-p 5301", std::chrono::seconds(20));
    CHECK(r.exit_status == 1);
    CHECK_THAT(r.output, Catch::Contains("PARAM_EXCHANGE"));
    r = run_in_netns(lab.client().netns, run + "-u");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("-u (UDP): not with --peer-kind iperf3"));
}

TEST_CASE_METHOD(Iperf3Lab, "sweep --peer-kind iperf3 changes only the local interface, writes a valid results file, refuses --peer-iface",
                 "[integration]") {
    const auto& a = lab.client();
    const auto& b = lab.server();
    Iperf3Server server(b.netns, dir.file("iperf3.json"), true);
    const std::string cfg = dir.file("c.json");
    // Local only: an MTU below the peer's (a larger one would be a blackhole, the peer's veth dropping what
    // exceeds its own), forward and -R.
    std::ofstream(cfg) << R"({"name": "ip3", "offloads": [{"name": "tso-off", "features": {"tso": "off"}}], "mtu": [1500, 1400],
        "traffic": [{"name": "tcp-p1", "streams": 1}, {"name": "tcp-p1-R", "streams": 1, "direction": "reverse"}], "apply_to": "local",
        "duration_s": 1, "omit_s": 0, "repetitions": 1, "order": "sequential", "interference": {"max_wait_s": 0}})";
    const nm::test::EndsAsItBegan a_unchanged(a), b_unchanged(b);
    const std::string sweep = nicmatrix_binary() + " sweep " + cfg + " --iface " + a.ifname + " --peer " + nm::strip_prefix(b.ipv4) +
                              " --peer-kind iperf3 -q --journal " + dir.file("j.json") + " -o " + dir.file("r.json");
    auto r = run_in_netns(a.netns, sweep + " --peer-iface " + b.ifname);
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("--peer-iface " + b.ifname + ": not with --peer-kind iperf3"));
    r = run_in_netns(a.netns, sweep, std::chrono::seconds(90));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK(nm::test::results_schema_errors(dir.file("r.json")).empty());
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 4);
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key << ": " << cell.error);
        CHECK(cell.status == nm::CellStatus::Ok);
        REQUIRE(cell.runs.size() == 1);
        REQUIRE(cell.runs[0].iperf3_peer.has_value());
        CHECK(cell.runs[0].iperf3_peer->version == installed_iperf3_version());
        const bool reverse = cell.spec.traffic.test.direction == nm::Direction::Reverse;
        const auto& peer = *cell.runs[0].iperf3_peer;
        CHECK((reverse ? peer.bytes_sent : peer.bytes_received) > 0);
        CHECK(cell.summary.count("peer_cpu_pct") == 1);
        // The far end's engine figures are absent (iperf3 is the receiver forward, the sender with -R).
        CHECK(cell.summary.count(reverse ? "cpu_sender_pct" : "cpu_receiver_pct") == 0);
        CHECK(cell.summary.count(reverse ? "cpu_receiver_pct" : "cpu_sender_pct") == 1);
    }
    std::ifstream file_in(dir.file("r.json"));
    const json file = json::parse(file_in);
    CHECK(file.at("cells")[0].at("runs")[0].at("cpu").at("receiver").is_null());
    // Only the local interface changed, and it is back as it was; the far end never was touched.
    a_unchanged.check();
    b_unchanged.check();
    // iperf3 logged every test (the sweep's empty access check of each of the two traffic entries, and
    // its four cells) and no error.
    const auto tests = server.tests();
    CHECK(tests.size() == 6);
    for (const auto& t : tests) CHECK_FALSE(t.contains("error"));
}
