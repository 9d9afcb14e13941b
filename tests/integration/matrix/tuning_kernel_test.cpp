// The tuning axes (channels, RPS/XPS, NAPI, sysctls, the root qdisc, rings, coalescing) on real veth:
// the runner with NetlinkDeviceControl on both ends, and a stand-in engine that, while each cell
// "measures", asks outside tools (ethtool -l, cat rps_cpus/xps_cpus, sysctl, tc) what the kernel has.
// What they see must be what the cell records; afterwards every kind must be as before.
#include <catch2/catch.hpp>

#include <sstream>

#include "core/base/clock.hpp"
#include "core/device/device_codec.hpp"
#include "core/host/host_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "matrix/config.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/runner.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_sweep.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::CellStatus;
using nm::test::run_in_netns;

namespace {

// What the outside tools say of one interface.
struct OutsideView {
    std::string channels;  // "rx=N tx=N" from ethtool -l's current settings
    std::string rps;       // every rx queue's rps_cpus, as sysfs prints them
    std::string xps;
    std::string napi;   // gro_flush_timeout napi_defer_hard_irqs
    std::string cc;     // sysctl -n net.ipv4.tcp_congestion_control
    std::string qdisc;  // the kind tc -j qdisc show reports for the root
    bool operator==(const OutsideView& o) const {
        return channels == o.channels && rps == o.rps && xps == o.xps && napi == o.napi && cc == o.cc && qdisc == o.qdisc;
    }
};

std::ostream& operator<<(std::ostream& os, const OutsideView& v) {
    return os << "channels[" << v.channels << "] rps[" << v.rps << "] xps[" << v.xps << "] napi[" << v.napi << "] cc[" << v.cc << "] qdisc["
              << v.qdisc << "]";
}

std::string out(const std::string& netns, const std::string& cmd) {
    const auto r = run_in_netns(netns, cmd);
    REQUIRE(r.exit_status == 0);
    std::string s = r.output;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

OutsideView look(const std::string& netns, const std::string& ifname) {
    OutsideView v;
    // ethtool -l: the second RX:/TX: lines are the current settings.
    const std::string l =
        out(netns, "ethtool -l " + ifname + " | sed -n '/Current/,$p' | awk '/^RX:/{r=$2} /^TX:/{t=$2} END{print \"rx=\" r \" tx=\" t}'");
    v.channels = l;
    v.rps = out(netns, "sh -c 'cat /sys/class/net/" + ifname + "/queues/rx-*/rps_cpus | tr \"\\n\" \" \"'");
    v.xps = out(netns, "sh -c 'cat /sys/class/net/" + ifname + "/queues/tx-*/xps_cpus | tr \"\\n\" \" \"'");
    v.napi =
        out(netns, "sh -c 'echo $(cat /sys/class/net/" + ifname + "/gro_flush_timeout) $(cat /sys/class/net/" + ifname + "/napi_defer_hard_irqs)'");
    v.cc = out(netns, "sysctl -n net.ipv4.tcp_congestion_control");
    const auto tc = nm::Json::parse(out(netns, "tc -j qdisc show dev " + ifname + " root"));
    v.qdisc = tc.empty() ? "" : tc.at(0).at("kind").get<std::string>();
    return v;
}

// A CPU list as the kernel's hex mask prints ("0-1" -> "3", "none" -> "0"), for comparing with sysfs.
std::string mask_of(const std::string& list) {
    if (list == "none") return "0";
    unsigned m = 0;
    std::stringstream in(list);
    std::string part;
    while (std::getline(in, part, ',')) {
        const auto dash = part.find('-');
        const unsigned lo = std::stoul(part.substr(0, dash));
        const unsigned hi = dash == std::string::npos ? lo : std::stoul(part.substr(dash + 1));
        for (unsigned c = lo; c <= hi; ++c) m |= 1U << c;
    }
    std::ostringstream o;
    o << std::hex << m;
    return o.str();
}

// What a cell's record says the outside tools should see.
OutsideView expected(const nm::EndSettings& e, const OutsideView& original) {
    REQUIRE(e.tuning);
    const auto& t = *e.tuning;
    OutsideView v = original;
    if (!t.channels.empty()) v.channels = "rx=" + std::to_string(t.channels.at("rx")) + " tx=" + std::to_string(t.channels.at("tx"));
    const auto masks = [](const std::map<std::string, std::string>& m) {
        std::string s;
        for (const auto& [q, list] : m) {
            if (!s.empty()) s += ' ';
            s += mask_of(list);
        }
        return s;
    };
    if (!t.rps.empty()) v.rps = masks(t.rps);
    if (!t.xps.empty()) v.xps = masks(t.xps);
    if (!t.napi.empty()) v.napi = std::to_string(t.napi.at("gro_flush_timeout")) + " " + std::to_string(t.napi.at("napi_defer_hard_irqs"));
    if (const auto it = t.sysctl.find("net.ipv4.tcp_congestion_control"); it != t.sysctl.end()) v.cc = it->second;
    if (t.qdisc) v.qdisc = t.qdisc->kind;
    return v;
}

// Runs nothing; takes the outside view of both ends while the cell is applied.
class OutsideRunner final : public nm::TrafficRunner {
public:
    OutsideRunner(const nm::LabInterface& a, const nm::LabInterface& b) : a_(a), b_(b) {}
    nm::RunResult run(const nm::TestSpec& spec, std::stop_token) override {
        seen.emplace_back(look(a_.netns, a_.ifname), look(b_.netns, b_.ifname));
        nm::RunResult r;
        r.spec = spec;
        r.duration_s = spec.duration_s;
        r.throughput_bps = 1e9;
        return r;
    }
    std::vector<std::pair<OutsideView, OutsideView>> seen;

private:
    const nm::LabInterface& a_;
    const nm::LabInterface& b_;
};

// Counts changes, so a test can tell that nothing was sent.
class CountingDevice final : public nm::DeviceControl {
public:
    explicit CountingDevice(nm::DeviceControl& d) : d_(d) {}
    nm::LinkState read(std::string_view ifname) override { return d_.read(ifname); }
    void validate(std::string_view ifname, const nm::LinkSettings& w) override { d_.validate(ifname, w); }
    std::string unsupported(std::string_view ifname, const nm::LinkSettings& w) override { return d_.unsupported(ifname, w); }
    nm::ApplyReport apply(std::string_view ifname, const nm::LinkSettings& w) override {
        ++applies;
        return d_.apply(ifname, w);
    }
    int applies = 0;

private:
    nm::DeviceControl& d_;
};

/// Skips the test without CAP_NET_ADMIN before the lab is made.
struct TuningSweep : nm::test::NeedsNetAdmin {
    nm::test::ScopedLab lab;
    const nm::LabInterface& a = lab.client();
    const nm::LabInterface& b = lab.server();
    nm::NetlinkDeviceControl real_a{a.netns}, real_b{b.netns};
    CountingDevice dev_a{real_a}, dev_b{real_b};
    OutsideRunner traffic{a, b};

    TuningSweep() { nm::test::wait_for_lab_path(lab.info()); }
    nm::SweepOutcome run(const nm::SweepConfig& config) { return nm::test::run_lab_sweep(lab, config, dev_a, dev_b, traffic); }
};

const char* kAxes = R"({"name": "axes", "offloads": [{"name": "o", "features": {}}], "mtu": [1500],
  "channels": [{"name": "ch1", "rx": 1, "tx": 1}, {"name": "ch2", "rx": 2, "tx": 2}],
  "rps": ["none", "all"],
  "xps": [{"name": "xps-0", "xps": "0"}],
  "napi": [{"name": "defer", "gro_flush_timeout": 200000, "napi_defer_hard_irqs": 2}],
  "sysctl": [{"name": "reno", "net.ipv4.tcp_congestion_control": "reno"}],
  "qdisc": ["pfifo", {"name": "tbf", "kind": "tbf", "rate": "1gbit", "burst": 65536, "latency_ms": 20}],
  "traffic": [{"name": "tcp", "protocol": "tcp"}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1,
  "order": "sequential", "interference": {"sample_ms": 0}, "apply_to": {"offloads": "both", "mtu": "both", "qdisc": "local"}})";

}  // namespace

TEST_CASE("Tuning axes on real veth: outside tools see what each cell records, and every kind is back afterwards", "[integration]") {
    TuningSweep k;
    const OutsideView before_a = look(k.a.netns, k.a.ifname);
    const OutsideView before_b = look(k.b.netns, k.b.ifname);
    const auto config = nm::parse_sweep_config_text(kAxes, "axes");
    const auto outcome = k.run(config);
    const auto& cells = outcome.results.cells;
    REQUIRE(cells.size() == 8);
    REQUIRE(k.traffic.seen.size() == 8);
    for (size_t i = 0; i < cells.size(); ++i) {
        INFO(cells[i].spec.key << ": " << cells[i].error);
        REQUIRE(cells[i].status == CellStatus::Ok);
        REQUIRE(cells[i].applied_local);
        REQUIRE(cells[i].applied_remote);
        CHECK(k.traffic.seen[i].first == expected(*cells[i].applied_local, before_a));
        CHECK(k.traffic.seen[i].second == expected(*cells[i].applied_remote, before_b));
        // The record is what was asked, not only what was read: the labels hold.
        CHECK(cells[i].applied_local->tuning->channels.at("rx") == (cells[i].spec.axes.at("channels") == "ch1" ? 1U : 2U));
        CHECK(cells[i].applied_local->tuning->qdisc->kind == cells[i].spec.axes.at("qdisc"));
        CHECK(cells[i].applied_remote->tuning->qdisc->kind == "noqueue");  // qdisc applies to the local end only
    }
    CHECK(look(k.a.netns, k.a.ifname) == before_a);
    CHECK(look(k.b.netns, k.b.ifname) == before_b);
    // The results file's originals carry every kind, for `nicmatrix restore` and for readers.
    REQUIRE(outcome.results.local.interface->tuning);
    CHECK(outcome.results.local.interface->tuning->qdisc->kind == before_a.qdisc);
}

TEST_CASE("Rings and coalescing on veth are infeasible with the kernel's reason, found before any change", "[integration]") {
    TuningSweep k;
    const auto config = nm::parse_sweep_config_text(R"({"offloads": [{"name": "o", "features": {}}], "mtu": [1500],
      "rings": [{"rx": 256, "tx": 256}], "coalesce": [{"rx-usecs": 8, "adaptive-rx": "off"}],
      "traffic": [{"protocol": "tcp"}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1, "interference": {"sample_ms": 0}})",
                                                    "rings");
    const auto outcome = k.run(config);
    REQUIRE(outcome.results.cells.size() == 1);
    const auto& c = outcome.results.cells[0];
    CHECK(c.status == CellStatus::Infeasible);
    CHECK_THAT(c.error, Catch::Contains("rings: Operation not supported") && Catch::Contains("coalesce: Operation not supported"));
    CHECK(k.traffic.seen.empty());
    CHECK(k.dev_a.applies == 0);  // not even the MTU: nothing was sent to either end
    CHECK(k.dev_b.applies == 0);
    // ethtool itself says the same.
    CHECK(run_in_netns(k.a.netns, "ethtool -g " + k.a.ifname).exit_status != 0);
}

TEST_CASE("A channel count above the device's maximum is infeasible before any change", "[integration]") {
    TuningSweep k;
    const auto config = nm::parse_sweep_config_text(R"({"offloads": [{"name": "o", "features": {}}], "mtu": [1500],
      "channels": [{"rx": 3, "tx": 3}], "traffic": [{"protocol": "tcp"}], "duration_s": 0.1, "omit_s": 0, "repetitions": 1,
      "interference": {"sample_ms": 0}})",
                                                    "ch3");
    const auto outcome = k.run(config);
    REQUIRE(outcome.results.cells.size() == 1);
    CHECK(outcome.results.cells[0].status == CellStatus::Infeasible);
    CHECK_THAT(outcome.results.cells[0].error, Catch::Contains("channels rx 3: above the device's maximum 2"));
    CHECK(k.dev_a.applies == 0);
}
