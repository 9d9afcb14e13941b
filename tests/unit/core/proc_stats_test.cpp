#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/host/proc_stats.hpp"

namespace {

// Captured from a 2-CPU Debian 12 VM (kernel 6.1), trimmed.
constexpr const char* kStat =
    "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0\n"
    "cpu0 1393991 20331 448349 6025046 2134 0 16108 0 0 0\n"
    "cpu1 1393340 19796 444587 6026478 2065 0 3217 0 0 0\n"
    "intr 199292 0 9 0 0\n"
    "ctxt 9982847\n";

constexpr const char* kSoftnet =
    "0000a1b2 00000001 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
    "00000010 00000000 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001\n";

constexpr const char* kInterrupts =
    "           CPU0       CPU1       \n"
    "  0:         22          0   IO-APIC   2-edge      timer\n"
    " 24:        100         50   PCI-MSI 65536-edge      eth0-TxRx-0\n"
    " 25:         10          5   PCI-MSI 65537-edge      eth0-TxRx-1\n"
    " 26:          7          0   PCI-MSI 65538-edge      eth0\n"
    " 27:          9          9   PCI-MSI 65539-edge      eth01-TxRx-0\n"
    " 28:          3          3   PCI-MSI 65540-edge      ahci[0000:00:1f.2], eth1\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "ERR:          0\n";

constexpr const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
    "    lo:    1234      12    0    0    0     0          0         0     1234      12    0    0    0     0       0          0\n"
    "  nm-b: 3620021984 73933 1 2 3 4 0 5 9876543 4321 6 7 8 9 10 0\n";

}  // namespace

TEST_CASE("parse_proc_stat reads the aggregate cpu line", "[unit]") {
    const auto t = nm::parse_proc_stat(kStat);
    CHECK(t.user == 10132153);
    CHECK(t.nice == 290696);
    CHECK(t.system == 3084719);
    CHECK(t.idle == 46828483);
    CHECK(t.iowait == 16683);
    CHECK(t.irq == 0);
    CHECK(t.softirq == 25195);
    CHECK_THROWS_AS(nm::parse_proc_stat("intr 1 2 3\n"), nm::Error);
}

TEST_CASE("system_cpu_between turns tick deltas into percent of all CPUs", "[unit]") {
    nm::CpuTimes a, b;
    b.user = 100;     // 10 %
    b.system = 200;   // 20 %
    b.irq = 50;       // 5 %
    b.softirq = 150;  // 15 %
    b.idle = 450;
    b.iowait = 50;  // idle too
    b.steal = 100;  // 10 %: busy from this guest's view (it wanted the CPU), and reported apart
    b.idle = 350;
    const auto s = nm::system_cpu_between(a, b);
    CHECK(s.user_pct == Approx(10));
    CHECK(s.sys_pct == Approx(20));
    CHECK(s.irq_pct == Approx(5));
    CHECK(s.softirq_pct == Approx(15));
    CHECK(s.steal_pct == Approx(10));
    CHECK(s.busy_pct == Approx(60));
    CHECK(nm::system_cpu_between(a, a).busy_pct == 0);
}

TEST_CASE("parse_softnet_stat sums the hex columns over CPUs", "[unit]") {
    const auto n = nm::parse_softnet_stat(kSoftnet);
    CHECK(n.processed == 0xa1b2 + 0x10);
    CHECK(n.dropped == 1);
    CHECK(n.time_squeeze == 5);
}

TEST_CASE("parse_proc_interrupts sums the lines naming the interface, not a longer name", "[unit]") {
    CHECK(nm::parse_proc_interrupts(kInterrupts, "eth0") == 150 + 15 + 7);
    CHECK(nm::parse_proc_interrupts(kInterrupts, "eth01") == 18);
    CHECK(nm::parse_proc_interrupts(kInterrupts, "eth1") == 6);
    CHECK(nm::parse_proc_interrupts(kInterrupts, "nm-b") == 0);
    CHECK(nm::parse_proc_interrupts(kInterrupts, "") == 0);
}

TEST_CASE("parse_proc_net_dev maps the columns to stats64 fields", "[unit]") {
    const auto devs = nm::parse_proc_net_dev(kNetDev);
    REQUIRE(devs.size() == 2);
    const auto& c = devs.at("nm-b");
    CHECK(c.rx_bytes == 3620021984ULL);
    CHECK(c.rx_packets == 73933);
    CHECK(c.rx_errors == 1);
    CHECK(c.rx_dropped == 2);
    CHECK(c.rx_fifo_errors == 3);
    CHECK(c.rx_frame_errors == 4);
    CHECK(c.multicast == 5);
    CHECK(c.tx_bytes == 9876543);
    CHECK(c.tx_packets == 4321);
    CHECK(c.tx_errors == 6);
    CHECK(c.tx_dropped == 7);
    CHECK(c.tx_fifo_errors == 8);
    CHECK(c.collisions == 9);
    CHECK(c.tx_carrier_errors == 10);
    CHECK(devs.at("lo").rx_bytes == 1234);
}

TEST_CASE("counter_delta is a counter's growth, 0 when it went back", "[unit]") {
    CHECK(nm::counter_delta(10, 25) == 15);
    CHECK(nm::counter_delta(7, 7) == 0);
    CHECK(nm::counter_delta(25, 10) == 0);  // a reset, not 2^64 - 15
}

TEST_CASE("parse_proc_stat_cpus reads every cpuN line by number, skipping what is not one", "[unit]") {
    const auto s = nm::parse_proc_stat_cpus(std::string(kStat) + "cpufreq 1 2 3\n");
    CHECK(s.all.user == 10132153);
    REQUIRE(s.cpus.size() == 2);
    CHECK(s.cpus[0].cpu == 0);
    CHECK(s.cpus[0].times.softirq == 16108);
    CHECK(s.cpus[1].cpu == 1);
    CHECK(s.cpus[1].times.idle == 6026478);
    CHECK_THROWS_AS(nm::parse_proc_stat_cpus("cpu0 1 2 3 4\n"), nm::Error);
}

TEST_CASE("system_cpu_between per CPU: each CPU's own percent, the busiest, busy CPU-seconds", "[unit]") {
    // Two readings 100 ticks per CPU apart (HZ 100: one second). cpu0 busy 90 %: 60 user, 10 sys,
    // 20 softirq; cpu2 (cpu1 offline) busy 30 %: 10 steal, 20 sys. cpu3 appears only after: no figure.
    nm::ProcStat a, b;
    a.cpus = {{0, {}}, {2, {}}};
    b.cpus.push_back({0, {}});
    b.cpus[0].times.user = 60;
    b.cpus[0].times.system = 10;
    b.cpus[0].times.softirq = 20;
    b.cpus[0].times.idle = 10;
    b.cpus.push_back({2, {}});
    b.cpus[1].times.steal = 10;
    b.cpus[1].times.system = 20;
    b.cpus[1].times.idle = 60;
    b.cpus[1].times.iowait = 10;
    b.cpus.push_back({3, {}});
    b.cpus[2].times.user = 100;
    for (const auto& c : {b.cpus[0], b.cpus[1]}) {
        b.all.user += c.times.user;
        b.all.system += c.times.system;
        b.all.softirq += c.times.softirq;
        b.all.steal += c.times.steal;
        b.all.idle += c.times.idle;
        b.all.iowait += c.times.iowait;
    }
    const auto s = nm::system_cpu_between(a, b, 100);
    REQUIRE(s.per_cpu.size() == 2);
    CHECK(s.per_cpu[0].cpu == 0);
    CHECK(s.per_cpu[0].busy_pct == Approx(90));
    CHECK(s.per_cpu[0].user_pct == Approx(60));
    CHECK(s.per_cpu[0].softirq_pct == Approx(20));
    CHECK(s.per_cpu[1].cpu == 2);
    CHECK(s.per_cpu[1].busy_pct == Approx(30));
    CHECK(s.per_cpu[1].steal_pct == Approx(10));
    CHECK(s.busiest_cpu == 0);
    CHECK(s.busiest_cpu_busy_pct == Approx(90));
    CHECK(s.busy_pct == Approx(60));     // the aggregate: 120 busy of 200 ticks
    CHECK(s.busy_cpu_s == Approx(1.2));  // 120 busy ticks at 100 per second
    CHECK(nm::system_cpu_between(a, a, 100).busiest_cpu == -1);
}

TEST_CASE("parse_proc_softirqs reads one row by the header's CPU numbers", "[unit]") {
    const std::string text =
        "                    CPU0       CPU1       CPU3\n"
        "          HI:          0          0          1\n"
        "      NET_TX:          5          1          0\n"
        "      NET_RX:       3254      49171         17\n"
        "       BLOCK:          9          9          9\n";
    CHECK(nm::parse_proc_softirqs(text, "NET_RX") == std::vector<uint64_t>{3254, 49171, 0, 17});
    CHECK(nm::parse_proc_softirqs(text, "NET_TX") == std::vector<uint64_t>{5, 1, 0, 0});
    CHECK(nm::parse_proc_softirqs(text, "RCU").empty());
    CHECK(nm::parse_proc_softirqs("", "NET_RX").empty());
}
