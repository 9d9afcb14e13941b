// Where the CPU went and where the engine ran, checked from outside the process: `nicmatrix serve` and
// `nicmatrix run` as processes in the lab, with /proc/stat, /proc/PID/task/*/stat and `ip -s -j link` read
// by the test itself while and around the run.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/file_text.hpp"
#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nlohmann::json;
using nm::test::nicmatrix_binary;

namespace {

// ---- the test's own readers (independent of core/host/proc_stats.cpp) ----

// cpuN -> {busy ticks, total ticks} from /proc/stat: busy is everything but idle (4th) and iowait (5th).
std::map<unsigned, std::pair<double, double>> read_stat_per_cpu() {
    std::ifstream in("/proc/stat");
    std::map<unsigned, std::pair<double, double>> out;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] == ' ') continue;
        std::istringstream f(line.substr(3));
        unsigned cpu = 0;
        f >> cpu;
        double v[8] = {};
        for (double& x : v) f >> x;
        double total = 0;
        for (double x : v) total += x;
        out[cpu] = {total - v[3] - v[4], total};
    }
    return out;
}

// The CPU each engine worker thread (comm "nm-send-K"/"nm-recv-K") of `pid` last ran on: field 39 of
// /proc/PID/task/TID/stat.
std::map<std::string, int> engine_thread_cpus(pid_t pid) {
    std::map<std::string, int> out;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream st(dir + "/" + e->d_name + "/stat");
        std::string text;
        std::getline(st, text);
        const auto open = text.find('(');
        const auto close = text.rfind(')');
        if (open == std::string::npos || close == std::string::npos) continue;
        const std::string comm = text.substr(open + 1, close - open - 1);
        if (comm.rfind("nm-send-", 0) != 0 && comm.rfind("nm-recv-", 0) != 0) continue;
        std::istringstream f(text.substr(close + 2));  // field 3 onwards
        std::vector<std::string> fields;
        for (std::string x; f >> x;) fields.push_back(x);
        if (fields.size() >= 37) out[comm + "/" + e->d_name] = std::stoi(fields[36]);  // field 39
    }
    ::closedir(d);
    return out;
}

uint64_t rx_packets(const nm::LabInterface& itf) {
    const auto r = nm::test::run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    return json::parse(r.output).at(0).at("stats64").at("rx").at("packets");
}

// A `nicmatrix serve` in the lab's server namespace, listening when constructed.
struct Server {
    nm::test::TempDir dir;
    nm::test::Background proc;
    explicit Server(const nm::test::ScopedLab& lab)
        : proc("ip netns exec " + lab.server().netns + " " + nicmatrix_binary() + " serve", dir.file("serve.log")) {
        nm::wait_until([&] { return proc.output().find("listening") != std::string::npos; }, std::chrono::seconds(5), "the server to listen");
    }
};

/// Skips the test on a machine with fewer than two CPUs (-A 0,1 pins to CPU 0 and CPU 1).
struct NeedsTwoCpus {
    NeedsTwoCpus() { nm::test::require_cpus(2, "-A 0,1"); }
};

/// A Catch2 fixture for a run pinned with -A 0,1: a lab whose server end runs `nicmatrix serve`; skips the
/// test without CAP_NET_ADMIN or two CPUs, before the lab is made.
struct PinnedLab : nm::test::NeedsNetAdmin, NeedsTwoCpus {
    nm::test::ScopedLab lab;
    Server server{lab};
};

std::string run_command_line(const nm::test::ScopedLab& lab, const std::string& args) {
    return "ip netns exec " + lab.client().netns + " " + nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " " + args;
}

}  // namespace

TEST_CASE_METHOD(PinnedLab, "run -A 0,1 pins the client's engine threads to CPU 0 and the server's to 1, as /proc/PID/task says", "[integration]") {
    nm::test::TempDir dir;
    nm::test::Background client(run_command_line(lab, "-t 1.5 -P 2 -A 0,1 --json"), dir.file("run.json"));
    const pid_t client_pid = client.pid();
    const pid_t server_pid = server.proc.pid();
    // Sampled by the test while the run goes on: every engine thread seen, and the CPUs it was on.
    std::set<int> client_seen, server_seen;
    std::set<std::string> client_threads, server_threads;
    while (client.running()) {
        for (const auto& [thread, cpu] : engine_thread_cpus(client_pid)) {
            client_threads.insert(thread);
            client_seen.insert(cpu);
        }
        for (const auto& [thread, cpu] : engine_thread_cpus(server_pid)) {
            server_threads.insert(thread);
            server_seen.insert(cpu);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a sampling period, not a wait for an event
    }
    REQUIRE(client.wait(std::chrono::seconds(10)) == 0);
    const auto res = json::parse(client.output());
    INFO(client.output());
    CHECK(res.at("status") == "ok");
    CHECK(res.at("spec").at("affinity") == json{{"client", {0}}, {"server", {1}}});
    CHECK_FALSE(client_threads.empty());
    CHECK_FALSE(server_threads.empty());
    CHECK(client_seen == std::set<int>{0});
    CHECK(server_seen == std::set<int>{1});
    // The run's own record agrees: forward, so the client is the sender.
    CHECK(res.at("placement").at("sender") == json::array({0}));
    CHECK(res.at("placement").at("receiver") == json::array({1}));

    // Without -A the record still says where the threads ran: CPUs that exist.
    const auto free = nm::test::run_command(run_command_line(lab, "-t 0.5 --json"));
    REQUIRE(free.exit_status == 0);
    const auto f = json::parse(free.output);
    CHECK_FALSE(f.at("placement").at("sender").empty());
    CHECK_FALSE(f.at("placement").at("receiver").empty());
    CHECK(f.at("placement").at("sender").back().get<unsigned>() < std::thread::hardware_concurrency());
    CHECK_FALSE(f.at("spec").contains("affinity"));
}

TEST_CASE("run -A with a CPU that does not exist: exit 2 naming the CPU and the end, nothing run", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab);
    const std::string none = std::to_string(std::thread::hardware_concurrency() + 7);
    auto r = nm::test::run_command(run_command_line(lab, "-t 0.5 -A " + none));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("affinity: client CPU " + none + " does not exist on this host"));
    r = nm::test::run_command(run_command_line(lab, "-t 0.5 -A 0," + none));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("rejected the test") && Catch::Contains("affinity: server CPU " + none + " does not exist"));
    r = nm::test::run_command(run_command_line(lab, "-t 0.5 -A 0,1,2"));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("-A/--affinity"));
    CHECK(nm::test::run_command(run_command_line(lab, "-t 0.3")).exit_status == 0);  // still serving
}

TEST_CASE("per_cpu against /proc/stat read by the test around the same run, the pinned CPU is the busy one", "[integration][serial]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab);
    const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
    const auto t0 = std::chrono::steady_clock::now();
    const auto before = read_stat_per_cpu();
    // Both ends on CPU 0: the engines, and on veth the whole receive path in their softirqs, keep it busy.
    const auto r = nm::test::run_command(run_command_line(lab, "-t 1.5 -A 0,0 --json"));
    const auto after = read_stat_per_cpu();
    const double outer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(r.exit_status == 0);
    const auto res = json::parse(r.output);
    INFO(r.output);
    for (const char* end : {"sender", "receiver"}) {
        INFO(end);
        const auto& sys = res.at("cpu").at("system").at(end);
        const double window_s = res.at("ends").at(end).at("duration_s").get<double>();
        const auto& per_cpu = sys.at("per_cpu");
        REQUIRE(per_cpu.size() == after.size());
        double mean_busy = 0;
        for (const auto& c : per_cpu) {
            const unsigned cpu = c.at("cpu").get<unsigned>();
            REQUIRE(before.count(cpu) == 1);
            // The engine's window lies inside the test's: its busy CPU time on this CPU is at most the
            // test's, and at least the test's less the time outside the window (at most one CPU-second
            // per second on one CPU). Slack: 3 ticks per end of a reading (tick accounting) and 2% for the
            // window's wall time against that CPU's tick total.
            const double inner = c.at("busy_pct").get<double>() / 100 * window_s;
            const double outer = (after.at(cpu).first - before.at(cpu).first) / hz;
            const double slack = 6 / hz + 0.02 * window_s;
            INFO("cpu " << cpu << ": engine window " << inner << " s busy of " << window_s << " s; test " << outer << " s busy of " << outer_s
                        << " s");
            CHECK(inner <= outer + slack);
            CHECK(outer - inner <= (outer_s - window_s) + slack);
            for (const char* f : {"user_pct", "sys_pct", "irq_pct", "softirq_pct", "steal_pct"}) {
                CHECK(c.at(f).get<double>() >= 0);
                CHECK(c.at(f).get<double>() <= c.at("busy_pct").get<double>() + 1e-6);
            }
            mean_busy += c.at("busy_pct").get<double>() / static_cast<double>(per_cpu.size());
        }
        // The aggregate is the CPUs' mean (each CPU counts the same ticks), within rounding of ticks: each
        // CPU's total over the window may be a tick or two off the others' (USER_HZ ticks, read at slightly
        // different moments), which moves a mean of ratios against a ratio of sums by up to a few ticks'
        // worth of the window (4 ticks: 2.7 points at 100 Hz over 1.5 s).
        CHECK(mean_busy == Approx(sys.at("busy_pct").get<double>()).margin(100.0 * 4 / hz / window_s));
        CHECK(per_cpu.at(0).at("busy_pct").get<double>() >= 80);
        CHECK(sys.at("busiest_cpu_busy_pct").get<double>() >= per_cpu.at(0).at("busy_pct").get<double>());
        CHECK(sys.at("busy_cpu_s").get<double>() == Approx(sys.at("busy_pct").get<double>() / 100 * per_cpu.size() * window_s).epsilon(0.05));
    }
    // netperf's per-end service demand: that host's busy CPU per KB.
    const double kb = res.at("bytes").get<double>() / 1024;
    CHECK(res.at("cpu").at("service_demand_us_per_kb").at("sender").get<double>() ==
          Approx(res.at("cpu").at("system").at("sender").at("busy_cpu_s").get<double>() * 1e6 / kb));
}

TEST_CASE("TCP packets_per_s is the receiving interface's rx_packets over the window, as ip -s -j link counts them", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    Server server(lab);
    const uint64_t before = rx_packets(lab.server());
    const auto r = nm::test::run_command(run_command_line(lab, "-t 1.5 --json"));
    const uint64_t after = rx_packets(lab.server());
    REQUIRE(r.exit_status == 0);
    const auto res = json::parse(r.output);
    INFO(r.output);
    const double packets = res.at("packets").get<double>();
    const double outer = static_cast<double>(after - before);
    INFO("engine window " << packets << " packets; ip -s link around the run " << outer);
    CHECK(res.at("packets_source") == "interface");
    CHECK(res.at("packets") == res.at("nic").at("receiver").at("rx_packets_delta"));
    // The window lies inside the test's readings; outside it only the handshake, the warm-up-free start
    // and the last packets after the receiver's window closed.
    CHECK(packets <= outer);
    CHECK(packets >= 0.8 * outer);
    CHECK(res.at("packets_per_s").get<double>() == Approx(packets / res.at("duration_s").get<double>()));
    // Segments per packet: the payload in MSS-sized segments over the packets; veth hands TSO
    // super-packets to its peer whole, so well above one here.
    const auto& stream = res.at("streams").at(0);
    const double mss = stream.at("mss").get<double>();
    REQUIRE(mss > 0);
    const double segments = std::ceil((res.at("bytes").get<double>() + res.at("tcp").at("retrans_bytes").get<double>()) / mss);
    CHECK(res.at("segments_per_packet").get<double>() == Approx(segments / packets));
    CHECK(res.at("segments_per_packet").get<double>() > 1);
}

TEST_CASE("sweep --lab with affinity: a CPU that does not exist stops it before anything, real CPUs are pinned and recorded", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const std::string none = std::to_string(std::thread::hardware_concurrency() + 7);
    const auto write = [&](const std::string& name, const std::string& affinity) {
        std::ofstream(dir.file(name)) << R"({"name": "pin", "offloads": [{"name": "orig", "features": {}}], "mtu": [1500],
            "traffic": [{}], "duration_s": 0.5, "omit_s": 0, "repetitions": 1, "interference": {"sample_ms": 0},
            "affinity": )" << affinity << "}";
        return dir.file(name);
    };
    // Other tests make and remove namespaces meanwhile: look for this lab's own.
    const std::string lab = nm::test::unique_name();
    auto r = nm::test::run_command(nicmatrix_binary() + " sweep " + write("bad.json", R"({"server": [)" + none + "]}") + " --lab --lab-name " + lab +
                                   " -o " + dir.file("bad-r.json"));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("affinity: server CPU " + none + " does not exist on this host"));
    CHECK_FALSE(std::filesystem::exists(dir.file("bad-r.json")));
    CHECK(nm::test::netns_named(lab).empty());  // no lab was made

    const unsigned last = std::thread::hardware_concurrency() - 1;
    r = nm::test::run_command(nicmatrix_binary() + " sweep " + write("ok.json", R"({"client": [0], "server": [)" + std::to_string(last) + "]}") +
                                  " --lab -q -o " + dir.file("ok-r.json"),
                              std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto res = json::parse(nm::read_file_text(dir.file("ok-r.json")));
    CHECK(res.at("run").at("config").at("affinity").at("client") == json::array({0}));
    const auto& run = res.at("cells").at(0).at("runs").at(0);
    CHECK(run.at("spec").at("affinity").at("server") == json::array({last}));
    CHECK(run.at("placement").at("sender") == json::array({0}));
    CHECK(run.at("placement").at("receiver") == json::array({last}));
    CHECK(res.at("hosts").at("local").at("cpu_accounting").at("source").is_string());
    CHECK(res.at("cells").at(0).at("summary").contains("busiest_cpu_busy_pct"));
}

namespace {

// NET_RX of /proc/softirqs by CPU number, read by the test's own parser: the header's "CPUn" columns.
std::map<unsigned, uint64_t> read_net_rx() {
    std::ifstream in("/proc/softirqs");
    std::string header;
    std::getline(in, header);
    std::vector<unsigned> cpus;
    std::istringstream h(header);
    for (std::string w; h >> w;) cpus.push_back(static_cast<unsigned>(std::stoul(w.substr(3))));
    std::map<unsigned, uint64_t> out;
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string name;
        f >> name;
        if (name != "NET_RX:") continue;
        for (unsigned cpu : cpus) f >> out[cpu];
    }
    return out;
}

}  // namespace

TEST_CASE_METHOD(PinnedLab,
                 "receive_path against /proc/softirqs read by the test around the same run, the socket's softirq CPU among those that ran NET_RX",
                 "[integration]") {
    const auto before = read_net_rx();
    const auto r = nm::test::run_command(run_command_line(lab, "-t 1.5 -A 0,1 --json"));
    const auto after = read_net_rx();
    REQUIRE(r.exit_status == 0);
    const auto res = json::parse(r.output);
    INFO(r.output);
    REQUIRE(before.size() == after.size());
    for (const char* end : {"sender", "receiver"}) {
        INFO(end);
        const auto& path = res.at("receive_path").at(end);
        const auto& per_cpu = path.at("net_rx_per_cpu");
        REQUIRE(per_cpu.size() == after.size());
        uint64_t engine_total = 0;
        for (const auto& [cpu, count] : after) {
            // The engine's window lies inside the test's readings, and the counters only grow.
            const uint64_t outer = count - before.at(cpu);
            INFO("cpu " << cpu << ": engine " << per_cpu.at(cpu).get<uint64_t>() << ", test " << outer);
            CHECK(per_cpu.at(cpu).get<uint64_t>() <= outer);
            engine_total += per_cpu.at(cpu).get<uint64_t>();
        }
        CHECK(engine_total > 0);
        // Each socket's last packet was processed in a NET_RX softirq on a CPU that ran some over the run.
        const auto& incoming = path.at("incoming_cpus");
        REQUIRE_FALSE(incoming.empty());
        for (const auto& cpu : incoming) {
            INFO("incoming cpu " << cpu);
            CHECK(after.at(cpu.get<unsigned>()) > before.at(cpu.get<unsigned>()));
        }
    }
    // veth runs the receive softirq where the packet was sent: the data's on the sender's CPU (0) or, when
    // an ACK's softirq on the receiver's CPU (1) pushed the next segments out, there.
    for (const auto& cpu : res.at("receive_path").at("receiver").at("incoming_cpus")) CHECK(cpu.get<unsigned>() <= 1);
}
