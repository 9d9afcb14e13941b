// `run --profile` and sweeps with "profile": true on the lab, checked from outside: against `perf record -a`
// sampling the same window, against the offloads `ethtool -k` shows in effect, and refusals without the
// capability to profile.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

using Json = nlohmann::json;

/// `nicmatrix run --profile --json` from the client namespace to an in-process server in the other.
Json profiled_run(const nm::test::ScopedLab& lab, uint16_t port, const std::string& extra = "") {
    const auto r = run_in_netns(lab.client().netns, nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " -p " +
                                                        std::to_string(port) + " -t 1.5 -i 0 --profile --json " + extra);
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    Json j = Json::parse(r.output);
    REQUIRE(j.at("status") == "ok");
    return j;
}

/// The effective state of `feature` on the lab interface, as `ethtool -k` prints it ("on"/"off").
std::string ethtool_state(const nm::LabInterface& itf, const std::string& feature) {
    const auto r = run_in_netns(itf.netns, "ethtool -k " + itf.ifname);
    REQUIRE(r.exit_status == 0);
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(feature + ": ", 0) == 0) return line.substr(feature.size() + 2, line.find(' ', feature.size() + 2) - feature.size() - 2);
    }
    FAIL("ethtool -k " << itf.ifname << " has no " << feature);
    return "";
}

void ethtool_set(const nm::LabInterface& itf, const std::string& args) {
    const auto r = run_in_netns(itf.netns, "ethtool -K " + itf.ifname + " " + args);
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
}

double share(const Json& run, const std::string& category) {
    const auto& p = run.at("cpu_profile").at("sender");
    REQUIRE(p.is_object());
    CHECK(p.at("lost") == 0);
    return p.at("categories").at(category).get<double>();
}

using Shares = std::vector<std::pair<std::string, double>>;  // hottest first

// The share of `symbol` in `list`; for a symbol the list does not have, `absent`.
double share_of(const Shares& list, const std::string& symbol, double absent) {
    for (const auto& [s, pct] : list) {
        if (s == symbol) return pct;
    }
    return absent;
}

}  // namespace

TEST_CASE("profile vs perf record -a: the top 10 symbols of the same window agree within 3 points", "[integration][serial]") {
    nm::test::require_net_admin();
    REQUIRE(run_command("command -v perf").exit_status == 0);
    nm::test::ScopedLab lab;
    nm::test::LabServer server(lab.server().netns);
    nm::test::TempDir dir;
    // nicmatrix samples at 4000 Hz, perf at 3989: about 12000 samples each in the window, so two samplers
    // of the same window differ by well under 3 points by chance (a 35% symbol's share has a standard error
    // of about 0.4 points; at 1000 Hz it was 0.9, and a 3-point bound failed on a loaded machine). Not both
    // at 4000: two cpu-clock timers of one period keep one phase to each other for the whole window, and
    // one sampler then keeps landing just after the other's interrupt (shares 3.3 to 4.6 points apart in 4 of
    // 19 runs on one day; with the periods apart, 0 of 10).
    // perf starts disabled and is enabled through its control fifo, which acknowledges: it is sampling
    // before nicmatrix's window opens, and stops after it closes. Times on CLOCK_MONOTONIC, as nicmatrix's.
    // The traffic writes 128 KiB (-l): with the default whole-unit writes the flow is twice as fast and the
    // receiving vCPU's halt/copy cycles fall in step with timer interrupts, so that two perf record -a of
    // one window (3989 and 4000 Hz) disagreed by up to 4.5 points on pv_native_safe_halt and _copy_to_iter
    // (8 runs; with 128 KiB writes by at most 1.4): a bound tighter than perf's agreement with itself
    // would test the samplers' interplay, not the profiler.
    const std::string run_cmd = "ip netns exec " + lab.client().netns + " " + nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) +
                                " -p " + std::to_string(server.port()) + " -t 1.5 -i 0 -l 128K --profile --profile-hz 4000 --json > run.json";
    const std::string script =
        "cd " + dir.path.string() +
        " && mkfifo ctl ack && "
        "{ perf record -q -a -e cpu-clock -F 3989 -k CLOCK_MONOTONIC -D -1 --control fifo:ctl,ack -o perf.data -- sleep 60 & P=$!; "
        "exec 3>ctl 4<ack; echo enable >&3; read a <&4; " +
        run_cmd +
        "; RC=$?; echo disable >&3; read a <&4; "
        "kill -INT $P; wait $P; exit $RC; }";
    const auto r = run_command("sh -c '" + script + "'", std::chrono::seconds(90));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    std::ifstream run_file(dir.file("run.json"));
    const Json run = Json::parse(run_file);
    REQUIRE(run.at("status") == "ok");
    const auto& p = run.at("cpu_profile").at("sender");
    REQUIRE(p.is_object());
    CHECK(p.at("shared_with") == "receiver");
    CHECK(run.at("cpu_profile").at("receiver").at("samples") == p.at("samples"));
    const double lo = p.at("start_monotonic_s"), hi = p.at("end_monotonic_s");
    CHECK(p.at("lost") == 0);

    // perf's samples inside nicmatrix's window, by symbol.
    const auto script_out = run_command("perf script -i " + dir.file("perf.data") + " -F time,ip,sym 2>/dev/null", std::chrono::seconds(120));
    REQUIRE(script_out.exit_status == 0);
    std::map<std::string, uint64_t> counts;
    uint64_t total = 0;
    std::istringstream lines(script_out.output);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream f(line);
        std::string time, ip, sym;
        if (!(f >> time >> ip)) continue;
        std::getline(f, sym);
        sym.erase(0, sym.find_first_not_of(' '));
        if (sym.empty()) sym = "[unknown]";
        const double t = std::stod(time);
        if (t < lo || t >= hi) continue;
        ++counts[sym];
        ++total;
    }
    REQUIRE(total > 0);
    // "[unknown]" is not a symbol but addresses a tool could not name (other programs' code without
    // symbols, JIT); which addresses those are differs between the tools, so only named symbols are
    // compared (their shares stay shares of all samples).
    Shares perf;
    for (const auto& [s, n] : counts) {
        if (s != "[unknown]") perf.emplace_back(s, 100.0 * static_cast<double>(n) / static_cast<double>(total));
    }
    std::stable_sort(perf.begin(), perf.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    // By name, as perf script's counts are: two entries of one name (the same symbol at two addresses, as
    // kallsyms can list it) are one line of perf's.
    std::map<std::string, double> by_name;
    for (const auto& t : p.at("top")) {
        if (t.at("symbol") != "[unknown]") by_name[t.at("symbol").get<std::string>()] += t.at("pct").get<double>();
    }
    Shares ours(by_name.begin(), by_name.end());
    std::stable_sort(ours.begin(), ours.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    REQUIRE(ours.size() >= 10);
    REQUIRE(perf.size() >= 10);

    std::ostringstream table;
    for (size_t i = 0; i < 10; ++i) {
        table << ours[i].first << ' ' << ours[i].second << "  |  " << perf[i].first << ' ' << perf[i].second << '\n';
    }
    INFO("nicmatrix " << p.at("samples") << " samples, perf " << total << " in the window\n" << table.str());
    // Each symbol of either top 10 has the same share in both, within 3 points. A symbol our top 20 lacks
    // has at most the 20th's share there.
    const double our_floor = ours.back().second;
    const double our_10th = ours[9].second, perf_10th = perf[9].second;
    for (size_t i = 0; i < 10; ++i) {
        INFO("ours " << ours[i].first);
        CHECK(std::fabs(ours[i].second - share_of(perf, ours[i].first, 0)) <= 3.0);
        INFO("perf " << perf[i].first);
        const double mine = share_of(ours, perf[i].first, -1);
        if (mine >= 0) CHECK(std::fabs(perf[i].second - mine) <= 3.0);
        else CHECK(perf[i].second <= our_floor + 3.0);
    }
    // The same set: a symbol in one top 10 and not in the other is a tie, its share within 3 points of the
    // other's 10th (on a loaded machine the tail is many symbols of under 1%, in any order).
    for (size_t i = 0; i < 10; ++i) {
        const bool in_perf = std::any_of(perf.begin(), perf.begin() + 10, [&](const auto& s) { return s.first == ours[i].first; });
        if (!in_perf) CHECK(ours[i].second <= perf_10th + 3.0);
        const bool in_ours = std::any_of(ours.begin(), ours.begin() + 10, [&](const auto& s) { return s.first == perf[i].first; });
        if (!in_ours) CHECK(perf[i].second <= our_10th + 3.0);
    }
    // The hottest symbols are the same ones: the top 3 of each are in the other's top 10.
    for (size_t i = 0; i < 3; ++i) {
        CHECK(std::any_of(perf.begin(), perf.begin() + 10, [&](const auto& s) { return s.first == ours[i].first; }));
    }
}

TEST_CASE("profile gro share: sender TSO+GSO off, over 1% with the receiver's GRO on, under 0.2% with it off", "[integration][serial]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::test::LabServer server(lab.server().netns);
    ethtool_set(lab.client(), "tso off gso off");
    REQUIRE(ethtool_state(lab.client(), "tcp-segmentation-offload") == "off");
    REQUIRE(ethtool_state(lab.client(), "generic-segmentation-offload") == "off");

    ethtool_set(lab.server(), "gro on");
    REQUIRE(ethtool_state(lab.server(), "generic-receive-offload") == "on");
    const Json on = profiled_run(lab, server.port(), "-P 2");
    ethtool_set(lab.server(), "gro off");
    REQUIRE(ethtool_state(lab.server(), "generic-receive-offload") == "off");
    const Json off = profiled_run(lab, server.port(), "-P 2");
    INFO("gro on: " << on.at("cpu_profile").at("sender").at("categories").dump()
                    << "\ngro off: " << off.at("cpu_profile").at("sender").at("categories").dump());
    // Shares of all CPU time sampled on the host (idle included): GRO off next to nothing, GRO on over 1%
    // (about 10% on an idle 2-CPU lab).
    CHECK(share(off, "gro") < 0.2);
    CHECK(share(on, "gro") > 1.0);
    CHECK(share(on, "gro") > share(off, "gro") + 0.2);
}

TEST_CASE("profile checksum share: tx-checksumming off at the sender shows one that all-on lacks", "[integration][serial]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::test::LabServer server(lab.server().netns);
    for (const auto* itf : {&lab.client(), &lab.server()}) ethtool_set(*itf, "rx on tx on sg on tso on gso on gro on");
    REQUIRE(ethtool_state(lab.client(), "tx-checksumming") == "on");
    const Json all_on = profiled_run(lab, server.port());
    ethtool_set(lab.client(), "tx off");
    REQUIRE(ethtool_state(lab.client(), "tx-checksumming") == "off");
    const Json tx_off = profiled_run(lab, server.port());
    INFO("all on: " << all_on.at("cpu_profile").at("sender").at("categories").dump()
                    << "\ntx off: " << tx_off.at("cpu_profile").at("sender").at("categories").dump());
    CHECK(share(all_on, "checksum") < 0.2);
    CHECK(share(tx_off, "checksum") > 1.0);
    CHECK(share(tx_off, "checksum") > share(all_on, "checksum") + 0.2);
    // The symbol doing it is in the top list, in that category.
    bool listed = false;
    for (const auto& t : tx_off.at("cpu_profile").at("sender").at("top")) listed = listed || t.at("category") == "checksum";
    CHECK(listed);
}

TEST_CASE("profile refusals: without CAP_PERFMON and CAP_SYS_ADMIN, run and sweep name perf_event_paranoid, exit 2, change nothing",
          "[integration]") {
    nm::test::require_net_admin();
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int paranoid = 0;
    in >> paranoid;
    if (paranoid <= 0) {
        WARN("kernel.perf_event_paranoid is " << paranoid << ": any process may profile here, there is no refusal to see");
        return;
    }
    REQUIRE(run_command("command -v capsh").exit_status == 0);
    const std::string drop = "capsh --drop=cap_sys_admin,cap_perfmon -- -c ";
    // In a lab's namespace, so that a refusal that did not happen could reach only the lab.
    nm::test::ScopedLab lab;
    const auto r = run_command("ip netns exec " + lab.client().netns + " " + drop + "'" + nicmatrix_binary() + " run -c " +
                               nm::strip_prefix(lab.server().ipv4) + " -p 9 --profile'");
    INFO(r.output);
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("kernel.perf_event_paranoid <= 0; it is " + std::to_string(paranoid)));
    CHECK_THAT(r.output, Catch::Contains("CAP_PERFMON"));

    nm::test::TempDir dir;
    const std::string name = nm::test::unique_name("nmtp");
    {
        std::ofstream(dir.file("p.json")) << R"({"name": "p", "offloads": [{"name": "on", "features": {"gro": "on"}}], "mtu": [1500],
            "traffic": [{"streams": 1}], "duration_s": 1, "repetitions": 1, "profile": true})";
    }
    const auto s = run_command(drop + "'" + nicmatrix_binary() + " sweep " + dir.file("p.json") + " --lab --lab-name " + name + " -o " +
                               dir.file("r.json") + "'");
    INFO(s.output);
    CHECK(s.exit_status == 2);
    CHECK_THAT(s.output, Catch::Contains("\"profile\": true") && Catch::Contains("kernel.perf_event_paranoid"));
    // Nothing was made: no lab namespace, no results file.
    CHECK(nm::test::netns_named(name).empty());
    CHECK_FALSE(std::ifstream(dir.file("r.json")).good());
}

TEST_CASE("profile sweep: offload-mtu.json with \"profile\": true has a breakdown for every ok cell, and report shows it", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    // The shipped config, shortened for CI: one repetition of 1 s, MTUs 1500 and 9000.
    std::ifstream shipped(std::string(NM_SOURCE_DIR) + "/configs/offload-mtu.json");
    Json config = Json::parse(shipped);
    config["profile"] = true;
    config["repetitions"] = 1;
    config["duration_s"] = 1;
    config["omit_s"] = 0.2;
    config["mtu"] = Json::array({1500, 9000});
    std::ofstream(dir.file("offload-mtu.json")) << config.dump();
    const std::string name = nm::test::unique_name("nmtp");
    const auto s =
        run_command(nicmatrix_binary() + " sweep " + dir.file("offload-mtu.json") + " --lab --lab-name " + name + " -q -o " + dir.file("r.json"),
                    std::chrono::seconds(240));
    INFO(s.output);
    REQUIRE(s.exit_status == 0);
    std::ifstream file(dir.file("r.json"));
    const Json results = Json::parse(file);
    size_t ok = 0;
    for (const auto& c : results.at("cells")) {
        if (c.at("status") != "ok") continue;
        ++ok;
        INFO(c.at("key"));
        for (const auto& run : c.at("runs")) {
            const auto& p = run.at("cpu_profile").at("sender");
            REQUIRE(p.is_object());
            CHECK(p.at("samples").get<uint64_t>() > 0);
            double sum = 0;
            for (const auto& [k, v] : p.at("categories").items()) sum += v.get<double>();
            CHECK(sum == Approx(100.0).margin(0.01));
        }
        CHECK(c.at("summary").contains("cpu:copy"));
        CHECK(c.at("summary").contains("cpu:gro"));
    }
    CHECK(ok >= 4);
    const auto report = run_command(nicmatrix_binary() + " report " + dir.file("r.json") + " --cpu-breakdown");
    INFO(report.output);
    REQUIRE(report.exit_status == 0);
    for (const auto& c : results.at("cells")) {
        if (c.at("status") == "ok") CHECK_THAT(report.output, Catch::Contains(c.at("key").get<std::string>()));
    }
    CHECK_THAT(report.output, Catch::Contains("copy"));
    const auto metric = run_command(nicmatrix_binary() + " report " + dir.file("r.json") + " --metric cpu:copy");
    INFO(metric.output);
    CHECK(metric.exit_status == 0);
    CHECK_THAT(metric.output, Catch::Contains("%"));
    const auto cmp = run_command(nicmatrix_binary() + " compare " + dir.file("r.json") + " " + dir.file("r.json") + " --metric cpu:gro");
    INFO(cmp.output);
    CHECK(cmp.exit_status == 0);
}
