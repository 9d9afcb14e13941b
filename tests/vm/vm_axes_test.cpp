// Every kind of setting on the guest's real drivers (issue 37 point 3): sweeps run inside the suite's guest
// over two of its NICs (as `sweep --lab vm:` does, `--lab --lab-from` a pair file in the share), and the
// guest's own ethtool, ip, /proc and `ip monitor` are the oracles. NICs of the suite lab: nic0 e1000e +
// nic1 8139cp (one hub), nic2 vmxnet3 + nic3 tulip (another).
#include <catch2/catch.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/vm_lab.hpp"

namespace {

namespace fs = std::filesystem;
using nm::test::vm_exec;
using nm::test::vm_exec_in;

// A folder of the guest's 9p share for one test (host side and guest side), removed at scope exit.
struct ShareFolder {
    fs::path host;
    std::string guest;
    explicit ShareFolder(const nm::LabInfo& lab)
        : host(fs::path(lab.vm->state_dir) / "share" / nm::test::unique_name("t")), guest("/share/" + host.filename().string()) {
        fs::create_directories(host);
    }
    ~ShareFolder() {
        std::error_code ec;
        fs::remove_all(host, ec);
    }
    ShareFolder(const ShareFolder&) = delete;
    ShareFolder& operator=(const ShareFolder&) = delete;
    std::string file(const std::string& name) const { return (host / name).string(); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }
};

// The suite lab's NICs `client` and `server` as a lab of two (what `sweep --lab --lab-from` takes).
void write_pair(const ShareFolder& f, const nm::LabInfo& lab, const std::string& client, const std::string& server) {
    nm::LabInfo pair = lab;
    pair.interfaces.clear();
    pair.namespaces.clear();
    for (const auto* want : {&client, &server}) {
        for (auto i : lab.interfaces) {
            if (i.netns != *want) continue;
            i.role = want == &client ? "client" : "server";
            pair.interfaces.push_back(i);
            pair.namespaces.push_back(i.netns);
        }
    }
    REQUIRE(pair.interfaces.size() == 2);
    f.write("lab.json", nm::Json(pair).dump(2));
}

// The sweep in the guest, from the share folder; its journal on the guest's tmpfs.
std::string guest_sweep(const ShareFolder& f, const std::string& extra = "") {
    return "cd " + f.guest + " && mkdir -p /run/" + f.host.filename().string() +
           " && nicmatrix sweep config.json --lab --lab-from lab.json -o r.json --journal /run/" + f.host.filename().string() + "/j.json -q" + extra;
}

nm::Json load(const std::string& path) {
    std::ifstream in(path);
    return nm::Json::parse(in);
}

// One interface of the guest as outside tools show it: ethtool -g -c -k, its MTU, and the affinity of each of its
// device's interrupts (MSI-X from msi_irqs, else its INTx line).
std::string snapshot(const std::string& ns) {
    const auto r = vm_exec_in(
        ns, "ethtool -g " + ns + " 2>&1; ethtool -c " + ns + " 2>&1; ethtool -k " + ns + "; ip -o link show " + ns +
                " | grep -o 'mtu [0-9]*'; d=/sys/class/net/" + ns +
                "/device; for i in $(ls $d/msi_irqs 2>/dev/null || cat $d/irq); do echo irq $i $(cat /proc/irq/$i/smp_affinity_list); done");
    REQUIRE(r.exit_status == 0);
    return r.output;
}

// Seconds since the epoch of `ip -t monitor`'s "Timestamp: Sun Dec  6 06:40:39 2026 4911 usec" (the guest's UTC).
double monitor_time(const std::smatch& m) {
    static const std::string months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    std::tm t{};
    t.tm_mon = static_cast<int>(months.find(m[1].str()) / 3);
    t.tm_mday = std::stoi(m[2]);
    t.tm_hour = std::stoi(m[3]);
    t.tm_min = std::stoi(m[4]);
    t.tm_sec = std::stoi(m[5]);
    t.tm_year = std::stoi(m[6]) - 1900;
    return static_cast<double>(::timegm(&t)) + std::stod(m[7]) / 1e6;
}

// "2026-12-06T06:40:39.123Z" as seconds since the epoch.
double iso_time(const std::string& s) {
    std::tm t{};
    REQUIRE(::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &t) != nullptr);
    const auto dot = s.find('.');
    return static_cast<double>(::timegm(&t)) + (dot == std::string::npos ? 0.0 : std::stod("0" + s.substr(dot, s.size() - dot - 1)));
}

// Starts the sweep of `f` in the guest in the background, waits until `changed` (a predicate on the NIC's
// snapshot) holds, SIGKILLs it, runs `nicmatrix restore` on its journal, and checks the NIC is back to `before`.
void kill_mid_sweep_and_restore(const ShareFolder& f, const std::string& ns, const std::function<bool(const std::string&)>& changed) {
    const std::string before = snapshot(ns);
    const auto started = vm_exec("(" + guest_sweep(f) + " > " + f.guest + "/log 2>&1 & echo $! > " + f.guest + "/pid)");
    REQUIRE(started.exit_status == 0);
    std::string during;
    nm::wait_until([&] { return changed(during = snapshot(ns)); }, std::chrono::seconds(240), "the sweep's change to show in ethtool and /proc");
    INFO("during the cell:\n" << during);
    REQUIRE(vm_exec("kill -9 $(cat " + f.guest + "/pid)").exit_status == 0);
    nm::wait_until([&] { return vm_exec("kill -0 $(cat " + f.guest + "/pid) 2>/dev/null").exit_status != 0; }, std::chrono::seconds(30),
                   "the killed sweep to be gone");
    const auto restore = vm_exec("nicmatrix restore --journal /run/" + f.host.filename().string() + "/j.json", std::chrono::seconds(120));
    INFO(restore.output);
    CHECK(restore.exit_status == 0);
    std::string after;
    // The restore waits for the link; ethtool's figures are there at once.
    nm::wait_until([&] { return (after = snapshot(ns)) == before; }, std::chrono::seconds(60), "the NIC to be back as it was");
    CHECK(after == before);
}

}  // namespace

TEST_CASE("e1000e: MTU, offloads, rings, coalescing and IRQ affinity hold mid-sweep, and after SIGKILL restore puts back each exactly", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    ShareFolder f(lab);
    write_pair(f, lab, "nic0", "nic1");
    // One long cell, every kind on the e1000e end only (8139cp has no rings to set and no coalescing).
    f.write("config.json", R"({"name": "vm-e1000e-kinds", "offloads": [{"name": "tso-gro-off", "features": {"tso": "off", "gro": "off"}}],
      "mtu": [1400], "rings": [{"name": "r512", "rx": 512, "tx": 512}], "coalesce": [{"name": "c10", "rx-usecs": 10}], "irq_affinity": ["1"],
      "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 120, "omit_s": 0, "repetitions": 1, "link_wait_s": 20,
      "apply_to": {"offloads": "local", "mtu": "local", "rings": "local", "coalesce": "local", "irq_affinity": "local"}})");
    kill_mid_sweep_and_restore(f, "nic0", [](const std::string& s) {
        // Every IRQ of the device (rx-0, tx-0, other) on CPU 1, and the rest as asked.
        const std::regex irq_elsewhere("irq [0-9]+ (?!1\n)");
        return s.find("mtu 1400") != std::string::npos && s.find("rx-usecs: 10\n") != std::string::npos &&
               s.find("tcp-segmentation-offload: off") != std::string::npos && s.find("generic-receive-offload: off") != std::string::npos &&
               std::regex_search(s, std::regex("Current hardware settings:\nRX:\\s+512\n")) && s.find("irq ") != std::string::npos &&
               !std::regex_search(s, irq_elsewhere);
    });
}

TEST_CASE("vmxnet3: LRO off and its three rings hold mid-sweep, and after SIGKILL restore puts them back", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    ShareFolder f(lab);
    write_pair(f, lab, "nic2", "nic3");
    REQUIRE_THAT(snapshot("nic2"), Catch::Contains("large-receive-offload: on"));  // vmxnet3's default
    f.write("config.json", R"({"name": "vm-vmxnet3-lro", "offloads": [{"name": "lro-off", "features": {"lro": "off"}}], "mtu": [1500],
      "rings": [{"name": "r2048", "rx": 2048, "rx_jumbo": 1024, "tx": 1024}],
      "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 120, "omit_s": 0, "repetitions": 1,
      "apply_to": {"offloads": "local", "mtu": "local", "rings": "local"}})");
    kill_mid_sweep_and_restore(f, "nic2", [](const std::string& s) {
        return s.find("large-receive-offload: off") != std::string::npos &&
               std::regex_search(s, std::regex("Current hardware settings:\nRX:\\s+2048\nRX Mini:\\s+n/a\nRX Jumbo:\\s+1024\nTX:\\s+1024\n"));
    });
}

TEST_CASE("e1000e: the carrier lost after an MTU change is measured and waited out, and the run starts after the link is back", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    ShareFolder f(lab);
    write_pair(f, lab, "nic0", "nic1");
    f.write("config.json", R"({"name": "vm-link", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1400],
      "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 1, "omit_s": 0, "repetitions": 1, "link_wait_s": 20,
      "apply_to": {"offloads": "local", "mtu": "local"}})");
    // `ip -t monitor link` in nic0's namespace, subscribed before the sweep (an alias change it must show first).
    const std::string g = f.guest;
    const auto r = vm_exec(
        "cd " + g + " && (ip -t -n nic0 monitor link > mon.log 2>&1 & echo $! > mon.pid) && " +
            "n=0; until grep -q nmtest-mark mon.log || [ $n -ge 300 ]; do ip -n nic0 link set nic0 alias nmtest-mark; sleep 0.1; n=$((n+1)); done; " +
            "ip netns exec nic0 cat /sys/class/net/nic0/carrier_down_count > drops.before; " + guest_sweep(f) + "; rc=$?; " +
            "ip netns exec nic0 cat /sys/class/net/nic0/carrier_down_count > drops.after; kill $(cat mon.pid); " +
            "ip -n nic0 link set nic0 alias ''; exit $rc",
        std::chrono::seconds(300));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = load(f.file("r.json"));
    const auto& cell = results.at("cells").at(0);
    REQUIRE(cell.at("status") == "ok");
    const auto& run = cell.at("runs").at(0);
    REQUIRE(run.contains("link"));
    const auto& link = run.at("link");
    INFO(link.dump());
    // e1000e negotiates again for seconds after an MTU change (1.9-3.1 s measured by the issue).
    CHECK(link.at("link_down_s").get<double>() > 1.0);
    const auto& end = link.at("ends").at(0);
    // The sweep waited the renegotiation out: the end's wait (from the end of its change until carrier was
    // back) is of the same order, and settle_s holds it. link_down_s counts from the change's start when the
    // loss came during the change, so it exceeds the wait by the change's own time (0.27 s seen under TCG
    // at load 13): no tighter relation holds between the two.
    CHECK(end.at("back") == true);
    CHECK(end.at("wait_s").get<double>() > 1.0);
    CHECK(link.at("settle_s").get<double>() >= end.at("wait_s").get<double>());
    CHECK(end.at("ifname") == "nic0");
    CHECK(end.at("carrier_drops").get<int>() >= 1);
    // The kernel's counter saw at least the cell's drops (the restore at the end drops the link once more).
    const auto read_int = [&](const std::string& name) {
        std::ifstream in(f.file(name));
        int x = -1;
        in >> x;
        return x;
    };
    const int drops = read_int("drops.after") - read_int("drops.before");
    CHECK(drops >= end.at("carrier_drops").get<int>() + 1);

    // ip monitor, read independently: carrier gone at MTU 1400 (NO-CARRIER), back (LOWER_UP) before the run started.
    std::ifstream mon(f.file("mon.log"));
    const std::regex stamp(R"(Timestamp: \w+ (\w+) +(\d+) (\d\d):(\d\d):(\d\d) (\d+) (\d+) usec)");
    double now = 0, down_at = 0, up_at = 0;
    for (std::string line; std::getline(mon, line);) {
        std::smatch m;
        if (std::regex_search(line, m, stamp)) {
            now = monitor_time(m);
        } else if (line.find("nic0:") != std::string::npos && line.find("mtu 1400") != std::string::npos) {
            if (line.find("NO-CARRIER") != std::string::npos && down_at == 0) down_at = now;
            if (line.find("LOWER_UP") != std::string::npos && down_at > 0 && up_at == 0) up_at = now;
        }
    }
    REQUIRE(down_at > 0);
    REQUIRE(up_at > down_at);
    const double started = iso_time(run.at("started").get<std::string>());
    CHECK(started >= up_at - 0.05);  // measured only once the link was back (ip's stamp is its delivery time)
    // The outage as ip saw it and as the sweep measured it agree within the polling and the delivery delays.
    CHECK(link.at("link_down_s").get<double>() == Approx(up_at - down_at).margin(0.5));
}

TEST_CASE(
    "Fixed rings, no coalescing, a fixed feature and an MTU above the device's maximum are infeasible before anything changes, "
    "with the kernel's reason",
    "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    const struct {
        std::string client, server, config, expect;
    } cases[] = {
        {"nic1", "nic0", R"("rings": [{"name": "r512", "rx": 512}], "apply_to": {"rings": "local"})", "above the device's maximum 64"},
        {"nic1", "nic0", R"("coalesce": [{"name": "c10", "rx-usecs": 10}], "apply_to": {"coalesce": "local"})", "not supported"},
        {"nic1", "nic0", R"("mtu": [9000], "apply_to": {"mtu": "local"})", "mtu 9000 outside the device's range 60..4096"},  // 8139cp
        {"nic3", "nic2", R"("mtu": [9000], "apply_to": {"mtu": "local"})", "mtu 9000 outside the device's range 68..1500"},  // tulip
        {"nic0", "nic1", R"("offloads": [{"name": "lro-on", "features": {"lro": "on"}}], "apply_to": {"offloads": "local"})", "fixed"},
    };
    for (const auto& c : cases) {
        INFO(c.client << ": " << c.config);
        ShareFolder f(lab);
        write_pair(f, lab, c.client, c.server);
        nm::Json config = nm::Json::parse(R"({"name": "vm-infeasible", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1500],
          "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 1, "omit_s": 0, "repetitions": 1})");
        config.merge_patch(nm::Json::parse("{" + c.config + "}"));
        f.write("config.json", config.dump());
        const std::string before = snapshot(c.client);
        const std::string drops = "cat /sys/class/net/" + c.client + "/carrier_down_count";
        const auto drops_before = vm_exec_in(c.client, drops).output;
        const auto r = vm_exec(guest_sweep(f), std::chrono::seconds(240));
        INFO(r.output);
        CHECK(r.exit_status == 0);
        const auto results = load(f.file("r.json"));
        const auto& cell = results.at("cells").at(0);
        CHECK(cell.at("status") == "infeasible");
        CHECK_THAT(cell.at("error").get<std::string>(), Catch::Contains(c.expect, Catch::CaseSensitive::No));
        CHECK(cell.at("runs").empty());
        // Nothing changed on the NIC, not even for a moment: the same settings and no carrier loss.
        CHECK(snapshot(c.client) == before);
        CHECK(vm_exec_in(c.client, drops).output == drops_before);
    }
}

TEST_CASE("show gives the link speed and duplex the driver negotiated, as ethtool does", "[vm]") {
    nm::test::require_net_admin();
    nm::test::suite_vm_lab();
    for (const std::string ns : {"nic0", "nic1", "nic2"}) {
        INFO(ns);
        const auto shown = vm_exec_in(ns, "nicmatrix show " + ns + " --json");
        REQUIRE(shown.exit_status == 0);
        const auto j = nm::Json::parse(shown.output);
        const auto tool = vm_exec_in(ns, "ethtool " + ns).output;
        std::smatch speed, duplex;
        REQUIRE(std::regex_search(tool, speed, std::regex(R"(Speed: (\d+)Mb/s)")));
        REQUIRE(std::regex_search(tool, duplex, std::regex(R"(Duplex: (\w+))")));
        CHECK(j.at("speed_mbps") == std::stoi(speed[1]));
        std::string d = duplex[1];
        for (auto& ch : d) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        CHECK(j.at("duplex") == d);
    }
}

TEST_CASE("The agent on the e1000e and the sweep on the 8139cp: the agent waits out its own link reset and both NICs end as they began", "[vm]") {
    nm::test::require_net_admin();
    const auto& lab = nm::test::suite_vm_lab();
    ShareFolder f(lab);
    const std::string run = "/run/" + f.host.filename().string();
    f.write("config.json", R"({"name": "vm-agent", "offloads": [{"name": "gso-off", "features": {"gso": "off"}}], "mtu": [1400],
      "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 1, "omit_s": 0, "repetitions": 1, "link_wait_s": 20,
      "apply_to": {"offloads": "both", "mtu": "both"}})");
    const std::string before0 = snapshot("nic0"), before1 = snapshot("nic1");
    const auto r =
        vm_exec("mkdir -p " + run + " && cd " + f.guest + " && head -c 32 /dev/urandom > " + run + "/key && chmod 600 " + run + "/key && " +
                    "(ip netns exec nic0 nicmatrix serve --allow-control nic0 --key-file " + run + "/key --journal " + run +
                    "/agent.json > agent.log 2>&1 & echo $! > agent.pid) && " +
                    "n=0; until grep -q 'listening' agent.log || [ $n -ge 300 ]; do sleep 0.1; n=$((n+1)); done; " +
                    "ip netns exec nic1 nicmatrix sweep config.json --iface nic1 --peer 198.18.0.1 --peer-iface nic0 --key-file " + run +
                    "/key -o r.json --journal " + run + "/j.json -q; rc=$?; kill $(cat agent.pid); " +
                    "n=0; while kill -0 $(cat agent.pid) 2>/dev/null && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done; cat agent.log; exit $rc",
                std::chrono::seconds(400));
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    const auto results = load(f.file("r.json"));
    const auto& cell = results.at("cells").at(0);
    REQUIRE(cell.at("status") == "ok");
    const auto& link = cell.at("runs").at(0).at("link");
    INFO(link.dump());
    bool remote_dropped = false;
    for (const auto& e : link.at("ends")) {
        if (e.at("end") == "remote") {
            CHECK(e.at("ifname") == "nic0");
            CHECK(e.at("link_down_s").get<double>() > 1.0);  // the agent measured its e1000e's renegotiation
            remote_dropped = e.at("carrier_drops").get<int>() >= 1;
        }
    }
    CHECK(remote_dropped);
    std::string after0, after1;
    nm::wait_until([&] { return (after0 = snapshot("nic0")) == before0 && (after1 = snapshot("nic1")) == before1; }, std::chrono::seconds(60),
                   "both NICs back as they were");
    CHECK(after0 == before0);
    CHECK(after1 == before1);
}
