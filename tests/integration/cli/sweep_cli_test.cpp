// `nicmatrix sweep` end to end: checks before any change, and real sweeps on the lab with the real device
// control and traffic engine, checked against ethtool -k, ip and the JSON Schema.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/base/wait_until.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/lab_fixture.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/sweep_progress.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;
using nm::test::run_in_netns;

namespace {

const std::string kSource = NM_SOURCE_DIR;

// Sequential: these tests name the cells in turn (the shuffled rounds are in sweep_order_cli_test.cpp); no
// waiting for a quiet machine, which would only add to the times some of them bound.
const char* kSmall = R"({"name": "small",
  "offloads": [{"name": "all-on", "features": {"rx": "on", "tx": "on", "sg": "on", "tso": "on", "gso": "on", "gro": "on"}},
               {"name": "all-off", "features": {"rx": "off", "tx": "off", "sg": "off", "tso": "off", "gso": "off", "gro": "off"}}],
  "mtu": [1500, 9000], "traffic": [{"name": "tcp-p1", "streams": 1}],
  "duration_s": 1, "omit_s": 0.2, "repetitions": 2, "order": "sequential", "interference": {"max_wait_s": 0}})";

}  // namespace

TEST_CASE("sweep --dry-run lists every cell and its settings and changes nothing", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto r =
        run_command("cd " + dir.path.string() + " && " + nicmatrix_binary() + " sweep " + kSource + "/configs/offload-mtu.json --dry-run --lab");
    REQUIRE(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("  all-on/mtu1500/tcp-p1  local: mtu=1500 gro=on gso=on rx=on sg=on tso=on tx=on  peer: mtu=1500 gro=on"));
    CHECK_THAT(r.output, Catch::Contains("  all-off/mtu9000/tcp-p10  local: mtu=9000 gro=off"));
    CHECK_THAT(r.output, Catch::Contains("16 of 16 cells to run, 3 repetitions each, about 2:00 of measuring; nothing was changed (--dry-run)"));
    CHECK(std::filesystem::is_empty(dir.path));  // no results file, no directory
}

TEST_CASE("sweep without -o writes nicmatrix-results/NAME-STAMP.json in its current directory (made when missing), and -o wins", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("tiny.json", R"({"name": "tiny", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1500],
        "traffic": [{"name": "tcp-p1", "streams": 1}], "duration_s": 0.5, "omit_s": 0, "repetitions": 1, "order": "sequential",
        "interference": {"max_wait_s": 0}})");
    const auto cwd = dir.path / "work";
    std::filesystem::create_directories(cwd);
    const std::string in_cwd = "cd " + cwd.string() + " && " + nicmatrix_binary() + " sweep " + cfg + " --lab --journal " + dir.file("j.json");
    auto r = run_command(in_cwd, std::chrono::seconds(120));
    REQUIRE(r.exit_status == 0);
    std::vector<std::filesystem::path> written;
    for (const auto& entry : std::filesystem::directory_iterator(cwd / "nicmatrix-results")) written.push_back(entry.path());
    REQUIRE(written.size() == 1);
    CHECK_THAT(written[0].filename().string(), Catch::Matches(R"(tiny-\d{8}T\d{6}Z\.json)"));
    CHECK_THAT(r.output, Catch::Contains("results: nicmatrix-results/" + written[0].filename().string() + "\n"));
    CHECK(nm::load_results(written[0].string()).cells.size() == 1);

    r = run_command(in_cwd + " -o " + dir.file("chosen.json"), std::chrono::seconds(120));
    REQUIRE(r.exit_status == 0);
    CHECK(nm::load_results(dir.file("chosen.json")).cells.size() == 1);
    CHECK(std::distance(std::filesystem::directory_iterator(cwd / "nicmatrix-results"), std::filesystem::directory_iterator()) == 1);
}

TEST_CASE_METHOD(nm::test::LabFixture, "sweep --iface --peer without a key refuses a config that changes the peer, before changing anything",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    const auto r = run_in_netns(a.netns, nicmatrix_binary() + " sweep " + kSource + "/configs/offload-mtu.json --iface nm-a --peer 198.18.0.2 -o " +
                                             dir.file("r.json") + " --journal " + dir.file("j.json"));
    CHECK(r.exit_status == 2);
    CHECK(r.output ==
          "nicmatrix: sweep offload-mtu: the config changes the peer's side, which its agent does only for a client holding "
          "the key: give --key-file (or NICMATRIX_KEY_FILE), or set \"apply_to\" to \"local\"\n");
    unchanged.check();
    CHECK(std::filesystem::is_empty(dir.path));
}

TEST_CASE_METHOD(nm::test::LabFixture, "sweep --peer: an unreachable peer is found before the first change, exit 2", "[integration]") {
    nm::test::wait_for_lab_path(lab.info());
    const auto cfg = dir.write("local.json", R"({"offloads": [{"name": "tso-off", "features": {"tso": "off"}}], "mtu": [1500],
        "traffic": [{}], "apply_to": "local"})");
    const nm::test::EndsAsItBegan unchanged(a);
    auto r = run_in_netns(a.netns, nicmatrix_binary() + " sweep " + cfg + " --iface nm-a --peer 198.18.0.77 -o " + dir.file("r.json"));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("nicmatrix: peer 198.18.0.77 is unreachable: no answer to ping within 2000 ms"));
    r = run_in_netns(a.netns, nicmatrix_binary() + " sweep " + cfg + " --iface nm-a --peer 198.18.0.2 -o " + dir.file("r.json"));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("is `nicmatrix serve` running there?"));
    unchanged.check();
    CHECK_FALSE(std::filesystem::exists(dir.file("r.json")));
}

TEST_CASE("sweep without CAP_NET_ADMIN, with a bad config or a bad --metric: exit 2, nothing made", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    // Other tests make and remove namespaces meanwhile: look for this test's own.
    const std::string lab = nm::test::unique_name();
    auto r = run_command("setpriv --bounding-set -net_admin " + nicmatrix_binary() + " sweep " + kSource +
                         "/configs/offload-mtu.json --lab --lab-name " + lab + " -o " + dir.file("r.json"));
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("nicmatrix: sweep: changing interface settings needs CAP_NET_ADMIN; run as root"));
    const auto bad = dir.write("bad.json", R"({"offloads": [{"name": "a", "features": {}}], "mtu": [1500], "traffic": [{"streams": 0}]})");
    r = run_command(nicmatrix_binary() + " sweep " + bad + " --lab --lab-name " + lab);
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("nicmatrix: " + bad + ": /traffic/0/streams: expected a positive integer (at most 256), got 0"));
    r = run_command(nicmatrix_binary() + " sweep " + kSource + "/configs/offload-mtu.json --lab --lab-name " + lab + " --metric goodput");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("--metric goodput: expected one of busiest_cpu_busy_pct, cpu_receiver_pct,"));
    CHECK(nm::test::netns_named(lab).empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("r.json")));
}

TEST_CASE("report and compare render a results file, and a file that is not one is exit 2", "[integration]") {
    nm::test::require_net_admin();
    const std::string fixture = kSource + "/tests/fixtures/results/fake-lab.json";
    auto r = run_command(nicmatrix_binary() + " report " + fixture + " --format md");
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::StartsWith("| offloads / traffic | MTU 1500 | MTU 9000 |\n| --- | ---: | ---: |\n| original / tcp-p1 | "));
    r = run_command(nicmatrix_binary() + " compare " + fixture + " " + fixture + " --metric packets_per_s");
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("original/mtu1500/tcp-p1"));
    CHECK_THAT(r.output, Catch::Contains("1.00"));
    r = run_command(nicmatrix_binary() + " report " + kSource + "/configs/offload-mtu.json");
    CHECK(r.exit_status == 2);
    CHECK_THAT(r.output, Catch::Contains("offload-mtu.json: not a nicmatrix results file"));
}

TEST_CASE("sweep --lab: every cell ok, recorded settings match ethtool -k during the cell, valid file, lab gone", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("small.json", kSmall);
    const std::string name = nm::test::unique_name("nmsw");
    const std::string ns = name + "-a";
    // Read the progress as it comes: when a cell starts, wait until its MTU shows and take ethtool -k.
    std::map<std::string, std::map<std::string, bool>> seen;  // cell key -> ethtool -k during it
    const auto sweep = nm::test::follow_sweep(
        nicmatrix_binary() + " sweep " + cfg + " --lab --lab-name " + name + " -o " + dir.file("r.json") + " --journal " + dir.file("j.json"),
        std::chrono::seconds(120), [&](const std::string& key) {
            const std::string mtu = nm::test::mtu_of_key(key);
            nm::wait_until([&] { return nm::test::link_mtu(ns, "nm-a") == mtu + "\n"; }, std::chrono::seconds(5), "MTU " + mtu + " on nm-a");
            seen[key] = nm::test::ethtool_features(ns, "nm-a");
        });
    const std::string& text = sweep.output;
    const int status = sweep.wait_status;
    INFO(text);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK_THAT(text, Catch::Contains("[4/4] all-off/mtu9000/tcp-p1"));
    CHECK_THAT(text, Catch::Contains("offloads / traffic"));
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 4);
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key << ": " << cell.error);
        CHECK(cell.status == nm::CellStatus::Ok);
        CHECK(cell.runs.size() == 2);
        CHECK(cell.overhead_s <= 1.0);
        REQUIRE(seen.count(cell.spec.key));
        for (const auto& [feature, on] : cell.applied_local->features) {
            INFO(feature);
            if (seen[cell.spec.key].count(feature)) CHECK(seen[cell.spec.key].at(feature) == on);
        }
    }
    // On veth, offloads pay at 1500 bytes.
    CHECK(results.cells[0].summary.at("throughput_bps").median > results.cells[2].summary.at("throughput_bps").median);
    CHECK(run_command("/usr/bin/python3 -c \"import json,jsonschema,sys; s=json.load(open('" + kSource +
                      "/results/results.schema.json'));"
                      " c=json.load(open('" +
                      kSource +
                      "/configs/sweep.schema.json'));"
                      " r=jsonschema.RefResolver.from_schema(s, store={c['\\$id']: c});"
                      " jsonschema.Draft202012Validator(s, resolver=r).validate(json.load(open('" +
                      dir.file("r.json") + "')))\"")
              .exit_status == 0);
    CHECK(run_command("ip netns list | grep -q " + name).exit_status != 0);
}

TEST_CASE("sweep --lab --topology bridge: jumbo cells are path_mtu_blackhole before any traffic, 1500 ok", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("small.json", kSmall);
    const auto r = run_command(
        nicmatrix_binary() + " sweep " + cfg + " --lab --topology bridge -q -o " + dir.file("r.json") + " --journal " + dir.file("j.json"),
        std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = nm::load_results(dir.file("r.json"));
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key);
        CHECK(cell.status == (cell.spec.mtu == 1500 ? nm::CellStatus::Ok : nm::CellStatus::PathMtuBlackhole));
        // Found by the probe, not by a run that hangs: a blackhole cell has no run at all.
        CHECK(cell.runs.empty() == (cell.spec.mtu != 1500));
    }
}

namespace {

// A counter of the namespace's IP stack: Ip6InOctets from /proc/net/snmp6, or column `column` of the
// "Ip:" values line of /proc/net/snmp (4: InReceives). Read with awk, not with our code.
uint64_t ip6_in_octets(const std::string& ns) {
    const auto r = run_in_netns(ns, "awk '$1==\"Ip6InOctets\"{print $2}' /proc/net/snmp6");
    return r.exit_status == 0 && !r.output.empty() ? std::stoull(r.output) : 0;
}
uint64_t ip4_in_receives(const std::string& ns) {
    const auto r = run_in_netns(ns, "awk '$1==\"Ip:\" && $2 ~ /^[0-9]+$/ {print $4}' /proc/net/snmp");
    return r.exit_status == 0 && !r.output.empty() ? std::stoull(r.output) : 0;
}

const char* kSmallV6 = R"({"name": "small6",
  "offloads": [{"name": "all-on", "features": {"tso": "on", "gro": "on"}}],
  "mtu": [1500, 9000], "traffic": [{"name": "tcp-p1", "streams": 1}],
  "duration_s": 1, "omit_s": 0.2, "repetitions": 1, "order": "sequential", "interference": {"max_wait_s": 0}})";

}  // namespace

TEST_CASE("sweep --lab -6: every cell ok over IPv6, the server's IPv6 counters carry the data and IPv4 does not", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("small6.json", kSmallV6);
    const std::string name = nm::test::unique_name("nmsw6");
    FILE* out = ::popen(("timeout 120 " + nicmatrix_binary() + " sweep " + cfg + " --lab -6 --lab-name " + name + " -q -o " + dir.file("r.json") +
                         " --journal " + dir.file("j.json") + " >" + dir.file("log") + " 2>&1; echo $?")
                            .c_str(),
                        "r");
    REQUIRE(out != nullptr);
    // While it runs: the server namespace receives tens of MB over IPv6 and (almost) no IPv4 packets.
    uint64_t v6 = 0, v4 = 0;
    nm::wait_until(
        [&] {
            v6 = ip6_in_octets(name + "-b");
            v4 = ip4_in_receives(name + "-b");
            return v6 > 50'000'000;
        },
        std::chrono::seconds(60), "50 MB received over IPv6 in " + name + "-b");
    CHECK(v4 < 100);  // 50 MB over IPv4 would be 5,500 packets or more
    char status[16] = {};
    REQUIRE(std::fgets(status, sizeof status, out) != nullptr);
    ::pclose(out);
    std::ifstream log(dir.file("log"));
    std::stringstream log_text;
    log_text << log.rdbuf();
    INFO(log_text.str());
    REQUIRE(std::string(status) == "0\n");
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 2);
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key << ": " << cell.error);
        CHECK(cell.status == nm::CellStatus::Ok);
        REQUIRE(cell.runs.size() == 1);
        CHECK(cell.runs[0].spec.host == "2001:2::2");
        // Segments of IPv6's 1428 payload bytes per 1500-byte packet (72 header bytes with timestamps): the
        // packet count itself when it is an estimate, else the segments behind the interface's packets.
        if (cell.spec.mtu == 1500) {
            const auto& run = cell.runs[0];
            const double segments = std::ceil(static_cast<double>(run.bytes + run.tcp_retrans_bytes) / 1428.0);
            INFO(run.packets_source << " " << run.packets << " packets, " << run.segments_per_packet << " segments per packet");
            if (run.packets_source == "estimate") {
                CHECK(static_cast<double>(run.packets) == segments);
            } else {
                CHECK(run.packets_source == "interface");
                CHECK(std::abs(run.segments_per_packet * static_cast<double>(run.packets) - segments) <= 1e-6 * segments);
            }
        }
    }
    // The host's sysctls and command line, as sysctl and cat read them independently (tabs shown as spaces).
    for (const char* sysctl :
         {"net.ipv4.tcp_congestion_control", "net.core.rmem_max", "net.ipv4.tcp_rmem", "net.core.busy_poll", "net.core.netdev_budget"}) {
        INFO(sysctl);
        auto r = run_command(std::string("sysctl -n ") + sysctl + " | tr '\\t' ' '");
        REQUIRE(r.exit_status == 0);
        while (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
        REQUIRE(results.local.sysctls.count(sysctl));
        CHECK(results.local.sysctls.at(sysctl) == r.output);
    }
    auto cmdline = run_command("cat /proc/cmdline");
    while (!cmdline.output.empty() && cmdline.output.back() == '\n') cmdline.output.pop_back();
    CHECK(results.local.kernel_cmdline == cmdline.output);
    // The CPU vulnerabilities' mitigations, as grep prints them ("FILE:LINE"), and in the file's JSON too.
    const auto vul = run_command("cd /sys/devices/system/cpu/vulnerabilities 2>/dev/null && grep -H . * | sort");
    std::map<std::string, std::string> want;
    for (size_t at = 0; at < vul.output.size();) {
        const size_t nl = vul.output.find('\n', at);
        const std::string line = vul.output.substr(at, nl - at);
        at = nl == std::string::npos ? vul.output.size() : nl + 1;
        if (const auto colon = line.find(':'); colon != std::string::npos) want[line.substr(0, colon)] = line.substr(colon + 1);
    }
    CHECK(results.local.cpu_vulnerabilities == want);
    if (!want.empty()) {
        std::ifstream in(dir.file("r.json"));
        CHECK(nm::Json::parse(in).at("hosts").at("local").at("cpu_vulnerabilities").size() == want.size());
    }
    // The idle policy, as the kernel names its cpuidle driver, in the file's JSON too.
    const auto driver = run_command("cat /sys/devices/system/cpu/cpuidle/current_driver");
    CHECK(results.local.cpu_idle.has_value() == (driver.exit_status == 0));
    if (results.local.cpu_idle && driver.exit_status == 0) {
        CHECK(results.local.cpu_idle->driver + "\n" == driver.output);
        std::ifstream in(dir.file("r.json"));
        CHECK(nm::Json::parse(in).at("hosts").at("local").at("cpu_idle").at("driver") == results.local.cpu_idle->driver);
    }
    CHECK(run_command("ip netns list | grep -q " + name).exit_status != 0);
}

TEST_CASE("sweep --lab --topology bridge -6: jumbo cells are path_mtu_blackhole over ICMPv6 before any traffic, 1500 ok", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("small6.json", kSmallV6);
    const auto r = run_command(
        nicmatrix_binary() + " sweep " + cfg + " --lab --topology bridge --ipv6 -q -o " + dir.file("r.json") + " --journal " + dir.file("j.json"),
        std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = nm::load_results(dir.file("r.json"));
    REQUIRE(results.cells.size() == 2);
    for (const auto& cell : results.cells) {
        INFO(cell.spec.key);
        CHECK(cell.status == (cell.spec.mtu == 1500 ? nm::CellStatus::Ok : nm::CellStatus::PathMtuBlackhole));
        if (cell.spec.mtu == 9000) CHECK_THAT(cell.error, Catch::Contains("9000-byte ICMPv6 echo, don't-fragment, to 2001:2::2: no echo within"));
        CHECK(cell.runs.empty() == (cell.spec.mtu != 1500));  // found by the probe, before any traffic
    }
}

TEST_CASE("SIGKILL mid-sweep: the file keeps every finished cell, restore puts the lab back, --resume finishes", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.write("small.json", kSmall);
    const std::string name = nm::test::unique_name("nmsw");
    const std::string file = dir.file("r.json");
    const std::string journal = dir.file("j.json");
    nm::test::Background sweep(nicmatrix_binary() + " sweep " + cfg + " --lab --lab-name " + name + " -o " + file + " --journal " + journal,
                               dir.file("log"));
    // Kill it once a cell is in the file and the next one is measuring.
    nm::wait_until(
        [&] {
            try {
                return std::filesystem::exists(file) && !nm::load_results(file).cells.empty();
            } catch (const nm::Error&) {
                return false;
            }
        },
        std::chrono::seconds(60), "the first finished cell in " + file);
    REQUIRE(::kill(sweep.pid(), SIGKILL) == 0);
    REQUIRE(sweep.wait(std::chrono::seconds(10)) == 128 + SIGKILL);
    const auto partial = nm::load_results(file);  // valid JSON, a complete v1 file
    CHECK(partial.run.finished.empty());
    REQUIRE(partial.cells.size() < 4);
    const auto done = partial.cells.size();

    // The lab is still there, with a cell's settings on it; `nicmatrix restore` puts back the originals.
    REQUIRE(partial.local.interface);
    auto r = run_command(nicmatrix_binary() + " restore --journal " + journal);
    CHECK(r.exit_status == 0);
    CHECK(nm::test::link_mtu(name + "-a", "nm-a") == std::to_string(partial.local.interface->original.mtu) + "\n");
    const auto now = nm::test::ethtool_features(name + "-a", "nm-a");
    for (const auto& [feature, on] : partial.local.interface->original.features) {
        INFO(feature);
        if (now.count(feature)) CHECK(now.at(feature) == on);
    }
    run_command(nicmatrix_binary() + " lab down --name " + name);

    r = run_command(nicmatrix_binary() + " sweep " + cfg + " --lab --resume " + file + " --journal " + journal, std::chrono::seconds(120));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto full = nm::load_results(file);
    CHECK(full.cells.size() == 4);
    CHECK_FALSE(full.run.finished.empty());
    CHECK(nm::Json(full.cells[0]) == nm::Json(partial.cells[0]));
    // The file names its first run's build, and the resume with the build that continued it.
    CHECK(partial.run.resumed.empty());
    REQUIRE(full.run.resumed.size() == 1);
    CHECK_THAT(full.run.resumed[0].command, Catch::Contains("--resume " + file));
    CHECK(full.run.resumed[0].started >= partial.run.started);
    const auto& by = full.run.resumed[0].tool;  // the binary that resumed it, as its --version says
    CHECK(run_command(nicmatrix_binary() + " --version").output ==
          "nicmatrix " + by.version + (by.commit.empty() ? "" : " (" + by.commit + ")") + "\n");
    CHECK(nm::Json(by) == nm::Json(full.tool));  // the same build began it: no note of two builds
    CHECK_THAT(r.output, !Catch::Contains("is continued by"));
    CHECK(nm::Json(full.local.tool) == nm::Json(by));
    size_t progress_lines = 0;
    for (size_t at = r.output.find("\n["); at != std::string::npos; at = r.output.find("\n[", at + 1)) ++progress_lines;
    CHECK(progress_lines + (r.output.rfind('[', 0) == 0 ? 1 : 0) == 4 - done);
}
