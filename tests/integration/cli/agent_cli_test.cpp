// `nicmatrix serve --allow-control` and `nicmatrix sweep --peer --key-file` as processes in the lab, each
// in its own namespace, checked from outside with ip and ethtool: a sweep refused before any change, a
// client killed mid-sweep, a change that cuts the path rolled back on both ends, impostor and broken
// agents, an agent killed mid-sweep with and without a restart, and the peer's channels and RPS changed
// through the agent (and refused by an agent whose allow-list does not name them).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/key_file.hpp"
#include "core/base/unique_fd.hpp"
#include "core/base/wait_until.hpp"
#include "core/control/control_protocol.hpp"
#include "core/host/net.hpp"
#include "ethtool_ctl/netns.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/fake_agent.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

extern char** environ;

using nm::test::ethtool_features;
using nm::test::link_mtu;
using nm::test::nicmatrix_binary;

namespace {

/// A process with stdout and stderr in a file; SIGKILLed and reaped on scope exit if still running.
class Spawned {
public:
    Spawned(const std::vector<std::string>& argv, const std::string& log) : log_(log) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        std::vector<char*> args = nm::test::exec_argv(argv);
        const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        REQUIRE(rc == 0);
    }
    ~Spawned() { stop(SIGKILL); }
    Spawned(Spawned&& other) noexcept : pid_(std::exchange(other.pid_, -1)), log_(std::move(other.log_)) {}
    Spawned(const Spawned&) = delete;
    Spawned& operator=(const Spawned&) = delete;

    void stop(int sig) {
        if (pid_ <= 0) return;
        ::kill(pid_, sig);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    /// The exit status once the process has ended by itself within `limit` (a test failure otherwise).
    int wait_exit(std::chrono::seconds limit) {
        int status = 0;
        nm::wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, limit, "the process to exit");
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    /// True (and the exit status in `status`) once the process has ended; false while it runs.
    bool poll_exit(int& status) {
        if (pid_ <= 0) return false;
        int raw = 0;
        if (::waitpid(pid_, &raw, WNOHANG) != pid_) return false;
        pid_ = -1;
        status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        return true;
    }
    std::string output() const {
        std::ifstream in(log_);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

private:
    pid_t pid_ = -1;
    std::string log_;
};

std::vector<std::string> in_netns(const std::string& ns, std::vector<std::string> args) {
    std::vector<std::string> argv{"ip", "netns", "exec", ns, nicmatrix_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

std::string address(const std::string& with_prefix) { return with_prefix.substr(0, with_prefix.find('/')); }

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

const std::string kKey = "0123456789abcdef0123456789abcdef";

/// The key, readable by its owner only (as the agent and the sweep require).
std::string write_key(const nm::test::TempDir& dir) {
    write_file(dir.file("key"), kKey);
    std::filesystem::permissions(dir.file("key"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return dir.file("key");
}

std::string config(const std::string& mtus, double duration_s) {
    return R"({"name": "agent", "offloads": [{"name": "tso-off", "features": {"tso": "off"}}], "mtu": [)" + mtus +
           R"(], "traffic": [{"name": "tcp", "protocol": "tcp", "streams": 1}], "duration_s": )" + std::to_string(duration_s) +
           R"(, "omit_s": 0, "repetitions": 1, "cooldown_s": 0, "order": "sequential", "interference": {"max_wait_s": 0}, )"
           R"("apply_to": {"offloads": "both", "mtu": "both"}})";
}

/// The agent in the lab's server namespace, waited for until it says what it allows. Its heartbeat timeout
/// (1 s) is shorter than the sweep's confirm window (3 s).
std::unique_ptr<Spawned> start_agent(const nm::test::ScopedLab& lab, const nm::test::TempDir& dir, const std::vector<std::string>& extra,
                                     const std::string& log = "agent.log") {
    std::vector<std::string> args{"serve", "--journal", dir.file("agent-journal.json"), "--heartbeat-timeout", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto agent = std::make_unique<Spawned>(in_netns(lab.server().netns, args), dir.file(log));
    nm::wait_until([&] { return agent->output().find("nicmatrix serve: settings") != std::string::npos; }, std::chrono::seconds(5),
                   "the agent to start");
    return agent;
}

/// Both ends of the lab, each to end as it began (the destructors check; check() checks both now).
struct BothEnds {
    nm::test::EndsAsItBegan a, b;
    BothEnds(const nm::LabInterface& client, const nm::LabInterface& server) : a(client), b(server) {}
    void check() const {
        a.check();
        b.check();
    }
};

/// A lab for a test of the agent: the client end `a`, the server end `b` (where the agent runs), a scratch
/// directory `dir` with the key in dir/key; the test is skipped without CAP_NET_ADMIN. The test writes the
/// sweep's config to dir/sweep.json.
struct AgentLab : nm::test::NeedsNetAdmin {
    nm::test::ScopedLab lab;
    nm::test::TempDir dir;
    const nm::LabInterface& a = lab.client();
    const nm::LabInterface& b = lab.server();

    explicit AgentLab(nm::LabTopology topology = nm::LabTopology::Pair) : lab(topology) { write_key(dir); }

    /// `sweep` of dir/sweep.json from `a` against the agent at `peer` (b's IPv4 address unless named) with
    /// the key, its journal in dir/j.json and its results in dir/r.json; `extra` flags after those.
    std::vector<std::string> sweep_args(const std::vector<std::string>& extra = {}, const std::string& peer = "") const {
        std::vector<std::string> args{
            "sweep",      dir.file("sweep.json"), "--iface",   a.ifname,           "--peer", peer.empty() ? address(b.ipv4) : peer,
            "--key-file", dir.file("key"),        "--journal", dir.file("j.json"), "-o",     dir.file("r.json")};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }
    /// sweep_args() run to its end in `a`'s namespace, bounded by `limit`.
    nm::test::CommandResult run_sweep(std::chrono::seconds limit, const std::vector<std::string>& extra = {}, const std::string& peer = "") const {
        std::string command = nicmatrix_binary();
        for (const auto& arg : sweep_args(extra, peer)) command += " " + arg;
        return nm::test::run_in_netns(a.netns, command, limit);
    }
    /// run_sweep() against `fake` (an impostor or a broken agent on `b`, on a port of its own).
    nm::test::CommandResult sweep_against(const nm::test::FakeAgent& fake) const {
        return run_sweep(std::chrono::seconds(30), {"--port", std::to_string(fake.port())});
    }
    /// sweep_args() started in `a`'s namespace, its output in dir/sweep.log.
    Spawned start_sweep() const { return Spawned(in_netns(a.netns, sweep_args()), dir.file("sweep.log")); }
    /// start_sweep() of a config whose second cell has MTU 4000, with `agent` SIGKILLed once that cell is on
    /// the peer (waited for at most 20 s).
    Spawned start_sweep_and_kill_agent_in_second_cell(Spawned& agent) const {
        Spawned sweep = start_sweep();
        nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == "4000\n"; }, std::chrono::seconds(20), "the second cell on the peer");
        agent.stop(SIGKILL);
        return sweep;
    }
    /// The agent on `b` allowed to change it for holders of the key, `extra` flags after those.
    std::unique_ptr<Spawned> keyed_agent(const std::vector<std::string>& extra = {}, const std::string& log = "agent.log") const {
        std::vector<std::string> args{"--allow-control", b.ifname, "--key-file", dir.file("key")};
        args.insert(args.end(), extra.begin(), extra.end());
        return start_agent(lab, dir, args, log);
    }
};

/// AgentLab on the bridge topology (a 1500-byte bridge between the ends).
struct BridgedAgentLab : AgentLab {
    BridgedAgentLab() : AgentLab(nm::LabTopology::Bridge) {}
};

}  // namespace

TEST_CASE_METHOD(AgentLab, "sweep --peer: an agent without a key makes the sweep refuse before anything changes on either end", "[integration]") {
    write_file(dir.file("sweep.json"), config("4000", 1));
    const auto agent = start_agent(lab, dir, {"--allow-control", b.ifname});
    CHECK(agent->output().find("settings changes refused: the agent has no key (start it with --key-file), so it changes no settings; "
                               "traffic tests are served") != std::string::npos);
    const BothEnds unchanged(a, b);

    const auto r = run_sweep(std::chrono::seconds(30));
    // A client holding a key uses only an agent that proves it holds the same key (exit 1).
    CHECK(r.exit_status == 1);
    CHECK(r.output == "nicmatrix: peer agent " + address(b.ipv4) +
                          ":5301 does not authenticate (it was started without --key-file, or it "
                          "is not a nicmatrix agent); a client holding a key uses only an agent that proves it holds the same key\n");
    unchanged.check();

    // `run --key-file` wants the server to prove it holds the key; this one cannot.
    const auto run = nm::test::run_in_netns(a.netns, nicmatrix_binary() + " run -c " + address(b.ipv4) + " -t 0.2 --key-file " + dir.file("key"));
    CHECK(run.exit_status == 1);
    CHECK(run.output == "Connecting to host " + address(b.ipv4) + ", port 5301\nnicmatrix: server " + address(b.ipv4) +
                            ":5301 does not authenticate tests (it was started without --key-file); this run holds a key, so it does "
                            "not take figures from a server that cannot prove it holds it\n");
}

TEST_CASE_METHOD(AgentLab, "sweep --peer: a client killed with SIGKILL mid-sweep leaves the peer restored by its agent", "[integration]") {
    write_file(dir.file("sweep.json"), config("4000", 5));
    const nm::test::EndsAsItBegan b_unchanged(b);
    const auto agent = keyed_agent();

    Spawned sweep = start_sweep();
    nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == "4000\n"; }, std::chrono::seconds(10), "the agent to apply the cell");
    CHECK_FALSE(ethtool_features(b.netns, b.ifname).at("tcp-segmentation-offload"));
    sweep.stop(SIGKILL);
    // Within the heartbeat timeout (1 s), or the confirm window of a change in flight (3 s), and some slack.
    nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == "1500\n"; }, std::chrono::seconds(6), "the agent to restore the peer");
    b_unchanged.check();
    CHECK(agent->output().find("restored " + b.ifname + " after") != std::string::npos);

    // `run --key-file` with the agent's key: it proves itself and the test runs.
    const auto run =
        nm::test::run_in_netns(a.netns, nicmatrix_binary() + " run -c " + address(b.ipv4) + " -t 0.3 --json --key-file " + dir.file("key"));
    CHECK(run.exit_status == 0);
}

TEST_CASE_METHOD(BridgedAgentLab,
                 "sweep --peer: a change that cuts the path (jumbo MTU through a 1500-byte bridge) is rolled back on both ends and the "
                 "sweep goes on",
                 "[integration]") {
    nm::test::wait_for_lab_path(lab.info());
    write_file(dir.file("sweep.json"), config("9000, 1500", 1));
    const BothEnds unchanged(a, b);
    const auto agent = keyed_agent();

    const auto r = run_sweep(std::chrono::seconds(60));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = read_json(dir.file("r.json"));
    const auto& cells = results.at("cells");
    REQUIRE(cells.size() == 2);
    CHECK(cells[0].at("status") == "unreachable_after_change");
    CHECK(cells[0].at("error").get<std::string>().find("the data path failed: 9000-byte ICMP echo with DF set") != std::string::npos);
    CHECK(cells[0].at("error").get<std::string>().find("both ends reverted it") != std::string::npos);
    CHECK(cells[1].at("status") == "ok");
    CHECK(cells[1].at("applied").at("remote").at("mtu") == 1500);
    // The agent reverted its side by itself (no confirm came), not by the final restore.
    CHECK(agent->output().find("rolled back " + b.ifname + " for " + address(a.ipv4) + ": the change was not confirmed in time") !=
          std::string::npos);
    unchanged.check();
}

TEST_CASE_METHOD(AgentLab, "sweep --peer NAME -6 through the agent: the name resolves to the peer's IPv6 address and the sweep runs over IPv6",
                 "[integration]") {
    nm::test::wait_for_lab_path(lab.info());
    // `ip netns exec` shows /etc/netns/NS/hosts as /etc/hosts inside NS: the name exists only there.
    const std::filesystem::path etc = "/etc/netns/" + a.netns;
    std::filesystem::create_directories(etc);
    struct RemoveEtc {
        std::filesystem::path p;
        ~RemoveEtc() { std::filesystem::remove_all(p); }
    } remove_etc{etc};
    write_file((etc / "hosts").string(), "127.0.0.1 localhost\n198.18.0.2 nm-peer\n" + address(b.ipv6) + " nm-peer\n");
    write_file(dir.file("sweep.json"), config("4000", 1));
    const BothEnds unchanged(a, b);
    const auto agent = keyed_agent();
    const auto counter = [&](const std::string& cmd) {
        const auto r = nm::test::run_in_netns(b.netns, cmd);
        return r.output.empty() ? 0ULL : std::stoull(r.output);
    };
    const auto v6_octets = [&] { return counter("awk '$1==\"Ip6InOctets\"{print $2}' /proc/net/snmp6"); };
    const auto v4_packets = [&] { return counter("awk '$1==\"Ip:\" && $2 ~ /^[0-9]+$/ {print $4}' /proc/net/snmp"); };
    const auto v6_before = v6_octets();
    const auto v4_before = v4_packets();

    const auto r = run_sweep(std::chrono::seconds(60), {"-6", "-q"}, "nm-peer");
    INFO(r.output << agent->output());
    REQUIRE(r.exit_status == 0);
    const auto results = read_json(dir.file("r.json"));
    const auto& cells = results.at("cells");
    REQUIRE(cells.size() == 1);
    CHECK(cells[0].at("status") == "ok");
    CHECK(cells[0].at("applied").at("remote").at("mtu") == 4000);
    const auto& run = cells[0].at("runs").at(0);
    CHECK(run.at("spec").at("host") == address(b.ipv6));
    // The peer's own IPv6 counters carried at least the bytes measured; IPv4 saw no data (a 1-s TCP run
    // at 4000 bytes would be thousands of packets).
    CHECK(v6_octets() - v6_before >= run.at("bytes").get<uint64_t>());
    CHECK(v4_packets() - v4_before < 100);
    // Both ends' metadata, the peer's through its agent (describe), each checked in its own namespace with
    // tc, cat, sysctl, ethtool and uname.
    const auto line = [](const std::string& ns, const std::string& cmd) {
        auto out = nm::test::run_in_netns(ns, cmd);
        while (!out.output.empty() && out.output.back() == '\n') out.output.pop_back();
        return out;
    };
    for (const auto& [end, ns, ifname] : {std::tuple{"local", a.netns, a.ifname}, std::tuple{"remote", b.netns, b.ifname}}) {
        INFO(end);
        const auto& h = results.at("hosts").at(end);
        CHECK(h.at("kernel") == line(ns, "uname -r").output);
        CHECK(h.at("sysctls").at("net.ipv4.tcp_congestion_control") == line(ns, "sysctl -n net.ipv4.tcp_congestion_control").output);
        CHECK(h.at("cpu_layout").at("cpus").size() == std::stoul(line(ns, "getconf _NPROCESSORS_ONLN").output));
        const auto& iface = h.at("interface");
        CHECK(iface.at("driver_version") == line(ns, "ethtool -i " + ifname + " | awk '/^version:/{print $2}'").output);
        const auto& sys = iface.at("system");
        REQUIRE(sys.is_object());
        const std::string qdisc =
            "qdisc " + sys.at("qdisc").at("kind").get<std::string>() + " " + sys.at("qdisc").at("handle").get<std::string>() + " root";
        CHECK(line(ns, "tc qdisc show dev " + ifname + " root").output.rfind(qdisc, 0) == 0);
        CHECK(sys.at("irqs").empty());  // veth
        CHECK(sys.at("numa_node").is_null());
        REQUIRE_FALSE(sys.at("rps_cpus").empty());
        CHECK(sys.at("rps_cpus")[0].at("mask") == line(ns, "cat /sys/class/net/" + ifname + "/queues/rx-0/rps_cpus").output);
    }
    CHECK_THAT(nm::test::results_schema_errors(dir.file("r.json")), Catch::Equals(""));
    unchanged.check();
}

TEST_CASE_METHOD(AgentLab,
                 "sweep --key-file refuses an impostor agent that skips authentication or cannot prove the key: exit 1, nothing changed "
                 "on either end",
                 "[integration]") {
    write_file(dir.file("sweep.json"), config("4000", 1));
    // Each impostor, and what the sweep says of it.
    const std::pair<nm::test::FakeAgent::Mode, const char*> impostors[] = {
        {nm::test::FakeAgent::Mode::SkipsAuth, "does not authenticate"}, {nm::test::FakeAgent::Mode::WrongProof, "could not prove it holds the key"}};
    const BothEnds unchanged(a, b);
    for (const auto& [mode, says] : impostors) {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), mode);
        const auto r = sweep_against(fake);
        INFO(r.output);
        CHECK(r.exit_status == 1);
        CHECK_THAT(r.output, Catch::Contains(says));
        CHECK(fake.requests().empty());  // no request was sent, signed or not
        CHECK_FALSE(std::filesystem::exists(dir.file("r.json")));
    }
    unchanged.check();
}

TEST_CASE_METHOD(AgentLab,
                 "sweep --peer: a tampered or malformed agent reply stops the sweep cleanly: exit 1, the local side restored, no cell "
                 "recorded under settings it did not have",
                 "[integration]") {
    write_file(dir.file("sweep.json"), config("4000", 1));
    const BothEnds unchanged(a, b);
    for (const auto mode : {nm::test::FakeAgent::Mode::TampersApplyReply, nm::test::FakeAgent::Mode::MalformedApplyReply}) {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), mode);
        const auto r = sweep_against(fake);
        INFO(r.output);
        CHECK(r.exit_status == 1);  // not 134 (std::terminate)
        CHECK(r.output.find("nicmatrix: sweep stopped: lost the peer agent: not reconnecting to peer agent") != std::string::npos);
        CHECK(r.output.find(mode == nm::test::FakeAgent::Mode::TampersApplyReply ? "sent a message with a bad MAC" : "malformed") !=
              std::string::npos);
        // The local end had its half of the cell applied before the peer's reply came: it is back.
        unchanged.a.check();
        const auto results = read_json(dir.file("r.json"));
        CHECK(results.at("cells").empty());
        CHECK(results.at("run").at("finished").is_null());
        CHECK_THAT(nm::test::results_schema_errors(dir.file("r.json")), Catch::Equals(""));
        std::filesystem::remove(dir.file("r.json"));
    }
    unchanged.b.check();
}

TEST_CASE_METHOD(AgentLab,
                 "sweep --peer: the agent killed with SIGKILL mid-sweep ends the sweep within 30 s with the local side restored and a "
                 "valid file of the finished cells",
                 "[integration]") {
    write_file(dir.file("sweep.json"), config("1500, 4000, 6000", 1));
    const BothEnds unchanged(a, b);
    auto agent = keyed_agent();
    Spawned sweep = start_sweep_and_kill_agent_in_second_cell(*agent);
    const auto killed = std::chrono::steady_clock::now();
    const int status = sweep.wait_exit(std::chrono::seconds(30));
    INFO(sweep.output());
    CHECK(std::chrono::steady_clock::now() - killed < std::chrono::seconds(30));
    CHECK(status == 1);
    CHECK(sweep.output().find("nicmatrix: sweep stopped: lost the peer agent: peer agent " + address(b.ipv4) + ":5301 did not come back") !=
          std::string::npos);
    unchanged.a.check();
    const auto results = read_json(dir.file("r.json"));
    CHECK_THAT(nm::test::results_schema_errors(dir.file("r.json")), Catch::Equals(""));
    REQUIRE(results.at("cells").size() == 1);
    CHECK(results.at("cells")[0].at("key") == "tso-off/mtu1500/tcp");
    CHECK(results.at("cells")[0].at("status") == "ok");
    CHECK(results.at("run").at("finished").is_null());
    // The dead agent could not restore its side; its journal does, at its next start.
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
    agent = keyed_agent({}, "agent2.log");
    CHECK(agent->output().find("restored " + b.ifname + " from the journal a previous agent left") != std::string::npos);
    unchanged.b.check();
}

TEST_CASE_METHOD(AgentLab, "sweep --peer: the agent killed and restarted mid-sweep: the sweep reconnects, runs the cut cell again and finishes",
                 "[integration]") {
    write_file(dir.file("sweep.json"), config("1500, 4000, 6000", 1));
    const BothEnds unchanged(a, b);
    auto agent = keyed_agent();
    Spawned sweep = start_sweep_and_kill_agent_in_second_cell(*agent);
    agent = keyed_agent({}, "agent2.log");
    const int status = sweep.wait_exit(std::chrono::seconds(60));
    INFO(sweep.output());
    INFO(agent->output());
    REQUIRE(status == 0);
    CHECK(sweep.output().find("reconnected to the peer agent; its side is at its original state") != std::string::npos);
    const auto results = read_json(dir.file("r.json"));
    CHECK_THAT(nm::test::results_schema_errors(dir.file("r.json")), Catch::Equals(""));
    REQUIRE(results.at("cells").size() == 3);
    for (const auto& c : results.at("cells")) {
        INFO(c.at("key"));
        CHECK(c.at("status") == "ok");
        CHECK(c.at("applied").at("remote").at("mtu") == c.at("params").at("mtu"));
    }
    CHECK(results.at("run").at("finished").is_string());
    unchanged.check();
}

namespace {

// Channels 1 and 2 x RPS none and all, on the peer only (through its agent); the local end keeps its own.
std::string peer_tuning_config(double duration_s) {
    return R"({"name": "peer-queues", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1500],
               "channels": [{"name": "ch1", "rx": 1, "tx": 1}, {"name": "ch2", "rx": 2, "tx": 2}],
               "rps": [{"name": "rps-none", "rps": "none"}, {"name": "rps-all", "rps": "all"}],
               "traffic": [{"name": "tcp", "protocol": "tcp", "streams": 1}], "duration_s": )" +
           std::to_string(duration_s) + R"(, "omit_s": 0, "repetitions": 1, "cooldown_s": 0, "order": "sequential",
               "interference": {"max_wait_s": 0},
               "apply_to": {"offloads": "local", "mtu": "local", "channels": "peer", "rps": "peer"}})";
}

// What ethtool -l and rps_cpus show on one end: "RX: 1 TX: 1 | 3".
std::string queues_seen(const std::string& netns, const std::string& ifname) {
    return nm::test::ethtool_channels(netns, ifname) + " | " + nm::test::rps_masks(netns, ifname);
}

}  // namespace

TEST_CASE_METHOD(AgentLab,
                 "sweep --peer: the agent changes the peer's channels and RPS cell by cell, as ethtool -l and rps_cpus in its namespace "
                 "show, and puts them back",
                 "[integration]") {
    write_file(dir.file("sweep.json"), peer_tuning_config(1.5));
    const BothEnds unchanged(a, b);
    const auto before_b = queues_seen(b.netns, b.ifname);
    REQUIRE(before_b == "RX: 2 TX: 2 | 0 0");
    const auto agent = keyed_agent();
    CHECK(agent->output().find("of the kinds mtu, offloads, channels, rings, coalesce, rps, xps, napi, qdisc") != std::string::npos);

    Spawned sweep = start_sweep();
    // An outside reader in the peer's namespace, while the sweep runs: every state it passes through.
    const unsigned cpus = std::thread::hardware_concurrency();
    std::ostringstream all_mask;
    all_mask << std::hex << ((1u << cpus) - 1);
    std::set<std::string> seen;
    int status = -1;
    nm::wait_until(
        [&] {
            seen.insert(queues_seen(b.netns, b.ifname));
            int s = 0;
            if (sweep.poll_exit(s)) {
                status = s;
                return true;
            }
            return false;
        },
        std::chrono::seconds(120), "the sweep to finish");
    INFO(sweep.output());
    REQUIRE(status == 0);
    for (const std::string& want :
         std::vector<std::string>{"RX: 1 TX: 1 | 0", "RX: 1 TX: 1 | " + all_mask.str(), "RX: 2 TX: 2 | " + all_mask.str() + " " + all_mask.str()}) {
        INFO("seen: " << [&] {
            std::string t;
            for (const auto& x : seen) t += "[" + x + "] ";
            return t;
        }());
        CHECK(seen.count(want) == 1);
    }
    // Each cell records what the peer had, under its labels.
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 4);
    for (const auto& c : results.cells) {
        INFO(c.spec.key << ": " << c.error);
        CHECK(c.status == nm::CellStatus::Ok);
        REQUIRE(c.applied_remote);
        REQUIRE(c.applied_remote->tuning);
        const uint64_t n = c.spec.axes.at("channels") == "ch1" ? 1 : 2;
        CHECK(c.applied_remote->tuning->channels.at("rx") == n);
        CHECK(c.applied_remote->tuning->rps.size() == n);
        for (const auto& [queue, list] : c.applied_remote->tuning->rps)
            CHECK(list == (c.spec.axes.at("rps") == "rps-all" ? "0-" + std::to_string(cpus - 1) : "none"));
    }
    // Afterwards both ends are as they were.
    nm::wait_until([&] { return queues_seen(b.netns, b.ifname) == before_b; }, std::chrono::seconds(5), "the peer's queues to be back");
    unchanged.check();
}

TEST_CASE_METHOD(AgentLab,
                 "sweep --peer: an agent whose allow-list does not name channels and RPS refuses the sweep (exit 2, the kind named) "
                 "before anything changes",
                 "[integration]") {
    write_file(dir.file("sweep.json"), peer_tuning_config(0.5));
    const BothEnds unchanged(a, b);
    const auto agent = keyed_agent({"--allow-kinds", "mtu,offloads"});

    const auto r = run_sweep(std::chrono::seconds(30));
    CHECK(r.exit_status == 2);
    CHECK(r.output ==
          "nicmatrix: sweep peer-queues: the config changes channels on the peer, which its agent does not let a client change "
          "(it allows mtu, offloads); start the agent with --allow-kinds naming channels, or set \"apply_to\" for channels to "
          "\"local\"\n");
    unchanged.check();
    CHECK_FALSE(std::filesystem::exists(dir.file("r.json")));

    // An unknown kind is a usage error of serve itself.
    const auto bad = nm::test::run_in_netns(b.netns, nicmatrix_binary() + " serve --allow-control " + b.ifname + " --key-file " + dir.file("key") +
                                                         " --allow-kinds mtu,ring --port 5399");
    CHECK(bad.exit_status == 2);
    // The error quotes the whole list, not the item the CLI split off.
    CHECK(bad.output.find("--allow-kinds mtu,ring: unknown kind \"ring\"") != std::string::npos);
}

namespace {

/// One line from a raw TCP connection to the agent's port, opened in the lab's client namespace: what the
/// agent answers to `lines` (sent one after another, each answer read before the next is sent). An empty
/// answer means the agent closed the connection (or said nothing within 5 s).
std::vector<std::string> exchange_raw(const nm::test::ScopedLab& lab, const std::vector<std::string>& lines) {
    nm::NetnsScope scope(lab.client().netns);
    const auto to = nm::resolve_address(address(lab.server().ipv4), nm::kDefaultPort);
    nm::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd);
    REQUIRE(::connect(fd.get(), to.get(), to.len) == 0);
    std::vector<std::string> answers;
    for (const auto& line : lines) {
        if (::send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) break;
        std::string answer;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        char c = 0;
        while (nm::wait_fd(fd.get(), POLLIN, deadline) && ::recv(fd.get(), &c, 1, MSG_DONTWAIT) == 1 && c != '\n') answer += c;
        answers.push_back(answer);
        if (answer.empty()) break;
    }
    return answers;
}

/// `levels` arrays one inside the other, closed: valid JSON of 2 x levels bytes.
std::string nested(size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

}  // namespace

TEST_CASE_METHOD(AgentLab,
                 "JSON nested 30000 deep before authentication gets an error or a close, the agent keeps running and a sweep against "
                 "it works (review finding 9)",
                 "[integration]") {
    write_file(dir.file("sweep.json"), config("4000", 0.5));
    // The key makes tests authenticate too: the second message of a test is checked under its key.
    auto agent = keyed_agent();
    const std::string v = std::to_string(nm::kControlVersion);
    const std::string nonce(64, 'a');
    REQUIRE(nested(30000).size() + 100 < nm::kMaxControlMessage);
    // A first message whose version is 30000 arrays deep (a95a16e quoted it back with a recursive dump).
    const auto deep_version = exchange_raw(lab, {R"({"type":"control_hello","v":)" + nested(30000) + "}\n"});
    // A settings session's control_hello, then an auth 30000 deep in place of the proof.
    const auto deep_auth = exchange_raw(lab, {R"({"v":)" + v + R"(,"type":"control_hello","client_nonce":")" + nonce + "\"}\n",
                                              R"({"v":)" + v + R"(,"type":"auth","mac":)" + nested(30000) + "}\n"});
    // A test's hello, then an auth 30000 deep (a95a16e copied and dumped it to check its MAC).
    const auto deep_test =
        exchange_raw(lab, {R"({"v":)" + v + R"(,"type":"hello","client_nonce":")" + nonce + "\"}\n",
                           R"({"v":)" + v + R"(,"type":"auth","seq":1,"spec":)" + nested(30000) + R"(,"mac":")" + std::string(64, '0') + "\"}\n"});
    for (const auto* answers : {&deep_version, &deep_auth, &deep_test}) {
        INFO((answers->empty() ? std::string() : answers->back().substr(0, 300)));
        REQUIRE_FALSE(answers->empty());
        // An error naming the nesting, or the connection closed: never a reply that read the message.
        CHECK((answers->back().empty() || answers->back().find("\"error\"") != std::string::npos));
    }
    CHECK_THAT(deep_version.back(), Catch::Contains("nested deeper than 32 levels"));
    CHECK_THAT(deep_auth.front(), Catch::Contains("\"challenge\""));
    CHECK_THAT(deep_test.front(), Catch::Contains("\"challenge\""));
    // The agent runs (its process has not ended) and logged what it refused.
    int status = 0;
    INFO(agent->output());
    REQUIRE_FALSE(agent->poll_exit(status));
    CHECK_THAT(agent->output(), Catch::Contains("nested deeper than 32 levels"));
    // And a sweep through it works, the peer put back at its end.
    const nm::test::EndsAsItBegan b_unchanged(b);
    const auto sweep = run_sweep(std::chrono::seconds(60));
    INFO(sweep.output);
    CHECK(sweep.exit_status == 0);
    b_unchanged.check();
    CHECK(nm::load_results(dir.file("r.json")).cells.size() == 1);
    REQUIRE_FALSE(agent->poll_exit(status));
}

TEST_CASE_METHOD(AgentLab,
                 "serve --allow-control, a key holder's setting names that would form paths are refused, and nothing outside the "
                 "interface changes (canary files, lo's MTU, ip_forward, core_pattern)",
                 "[integration]") {
    write_file(dir.file("canary"), "XXXXXXXX");
    write_file(dir.file("rps_cpus"), "XXXXXXXX");
    const auto outside = [&] {
        return nm::test::run_in_netns(b.netns,
                                      "sh -c 'cat /sys/class/net/lo/mtu /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/core_pattern; "
                                      "cat /sys/class/net/" +
                                          b.ifname + "/queues/rx-0/rps_cpus /sys/class/net/" + b.ifname + "/gro_flush_timeout; ip link show dev " +
                                          b.ifname + "'")
            .output;
    };
    const std::string before = outside();
    const auto agent = keyed_agent();
    const std::string up = "../../../../../../../..";
    const auto apply = [&](const std::string& tuning) {
        return R"({"op": "apply", "ifname": ")" + b.ifname + R"(", "confirm_ms": 60000, "settings": {"tuning": )" + tuning + "}}\n";
    };
    const std::string requests = apply(R"({"napi": {")" + up + dir.file("canary") + R"(": 7}})") + apply(R"({"napi": {"../lo/mtu": 1280}})") +
                                 apply(R"({"napi": {")" + up + R"(/proc/sys/net/ipv4/ip_forward": 1}})") +
                                 apply(R"({"rps": {")" + up + dir.path.string() + R"(": "1"}})") +
                                 apply(R"({"xps": {"tx-0\u0000/../../../lo": "1"}})") + apply(R"({"rps": {"rx-9": "1"}})") +
                                 apply(R"({"irq_affinity": {"../../../proc/sys/kernel/core_pattern": "0"}})") +
                                 apply(R"({"sysctl": {"kernel.core_pattern": "|/bin/false"}})") + apply(R"({"qdisc": {"kind": "netem"}})");
    write_file(dir.file("requests"), requests);
    const auto r = nm::test::run_in_netns(lab.client().netns, std::string(NM_SOURCE_DIR) + "/tests/support/agent_client.py " + address(b.ipv4) +
                                                                  " 5301 " + dir.file("key") + " < " + dir.file("requests"));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    std::istringstream lines(r.output);
    std::string line;
    std::getline(lines, line);
    CHECK(nlohmann::json::parse(line).at("type") == "welcome");
    int refused = 0;
    while (std::getline(lines, line)) {
        const auto reply = nlohmann::json::parse(line);
        INFO(line);
        CHECK(reply.at("type") == "error");
        refused += reply.at("type") == "error";
    }
    CHECK(refused == 9);
    // Judged from outside: the files are as they were, and so is everything of the namespace.
    CHECK(nm::test::run_command("cat " + dir.file("canary") + " " + dir.file("rps_cpus")).output == "XXXXXXXXXXXXXXXX");
    CHECK(outside() == before);
}

TEST_CASE_METHOD(AgentLab,
                 "sweep --peer: an agent whose /sys is read-only (as under the packaged unit's ProtectKernelTunables) does not offer RPS, "
                 "names it unavailable, and the sweep makes the RPS cells infeasible before anything changes on either end",
                 "[integration]") {
    write_file(dir.file("sweep.json"), peer_tuning_config(0.5));
    const BothEnds unchanged(a, b);
    const auto before_b = queues_seen(b.netns, b.ifname);
    // The agent in a mount namespace of its own whose /sys mount is read-only, the rest as start_agent.
    const std::string serve = nicmatrix_binary() + " serve --journal " + dir.file("agent-journal.json") + " --heartbeat-timeout 1 --allow-control " +
                              b.ifname + " --key-file " + dir.file("key");
    Spawned agent(
        {"ip", "netns", "exec", b.netns, "unshare", "-m", "--propagation", "private", "sh", "-c", "mount -o remount,bind,ro /sys && exec " + serve},
        dir.file("agent.log"));
    nm::wait_until([&] { return agent.output().find("nicmatrix serve: settings") != std::string::npos; }, std::chrono::seconds(5),
                   "the agent to start");
    INFO(agent.output());
    CHECK(agent.output().find("of the kinds mtu, offloads, channels, rings, coalesce, qdisc\n") != std::string::npos);
    CHECK(agent.output().find("rps is allowed but cannot be changed here, so it is not offered: " + b.ifname + ": /sys/class/net/" + b.ifname +
                              "/queues/rx-0/rps_cpus: Read-only file system") != std::string::npos);

    Spawned sweep = start_sweep();
    // An outside reader in the peer's namespace, while the sweep runs: the peer's queues never move.
    std::set<std::string> seen;
    int status = -1;
    nm::wait_until(
        [&] {
            seen.insert(queues_seen(b.netns, b.ifname));
            return sweep.poll_exit(status);
        },
        std::chrono::seconds(60), "the sweep to finish");
    INFO(sweep.output());
    CHECK(status == 0);
    CHECK(seen == std::set<std::string>{before_b});
    unchanged.check();
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 4);
    for (const auto& c : results.cells) {
        INFO(c.spec.key);
        CHECK(c.status == nm::CellStatus::Infeasible);
        CHECK(c.error.find("rps: the agent cannot change it where it runs (" + b.ifname + ": /sys/class/net/" + b.ifname +
                           "/queues/rx-0/rps_cpus: Read-only file system)") != std::string::npos);
        CHECK(c.runs.empty());
    }
}
