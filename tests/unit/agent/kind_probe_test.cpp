#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_protocol.hpp"
#include "agent/kind_probe.hpp"

namespace {

// A host whose files are writable except those under `read_only` (a prefix), as a sandbox's read-only
// mounts leave them; the interface nm-b has queues rx-0, rx-1 and tx-0.
struct FakeHost {
    std::set<std::string> read_only;
    std::string qdisc_why;
    std::vector<std::string> opened;

    nm::KindProbeOps ops() {
        return {[this](const std::string& path) {
                    opened.push_back(path);
                    for (const auto& prefix : read_only) {
                        if (path.rfind(prefix, 0) == 0) return std::string("Read-only file system");
                    }
                    return std::string();
                },
                [](const std::string& dir, const std::string& prefix) {
                    if (dir != "/sys/class/net/nm-b/queues") return std::vector<std::string>{};
                    return prefix == "rx-" ? std::vector<std::string>{"rx-0", "rx-1"} : std::vector<std::string>{"tx-0"};
                },
                [this] { return qdisc_why; }};
    }
};

const std::vector<std::string> kAll = nm::parse_agent_kinds({"all"});

}  // namespace

TEST_CASE("Kind probe: a writable host leaves every kind available and opens each file the kinds write", "[unit]") {
    FakeHost host;
    CHECK(nm::unavailable_kinds(kAll, {"nm-b"}, host.ops()).empty());
    for (const char* path :
         {"/sys/class/net/nm-b/queues/rx-0/rps_cpus", "/sys/class/net/nm-b/queues/rx-1/rps_cpus", "/sys/class/net/nm-b/queues/tx-0/xps_cpus",
          "/sys/class/net/nm-b/gro_flush_timeout", "/sys/class/net/nm-b/napi_defer_hard_irqs", "/proc/irq/default_smp_affinity"}) {
        INFO(path);
        CHECK(std::find(host.opened.begin(), host.opened.end(), path) != host.opened.end());
    }
    CHECK(std::any_of(host.opened.begin(), host.opened.end(), [](const std::string& p) { return p.rfind("/proc/sys/net/", 0) == 0; }));
}

TEST_CASE("Kind probe: the packaged unit's sandbox (read-only /sys, /proc/sys, /proc/irq, no scratch namespace)", "[unit]") {
    FakeHost host;
    host.read_only = {"/sys/", "/proc/sys/", "/proc/irq/"};
    host.qdisc_why = "unshare a scratch network namespace: Operation not permitted";
    const auto u = nm::unavailable_kinds(kAll, {"nm-b"}, host.ops());
    CHECK(u == std::map<std::string, std::string>{
                   {"rps", "nm-b: /sys/class/net/nm-b/queues/rx-0/rps_cpus: Read-only file system"},
                   {"xps", "nm-b: /sys/class/net/nm-b/queues/tx-0/xps_cpus: Read-only file system"},
                   {"napi", "nm-b: /sys/class/net/nm-b/gro_flush_timeout: Read-only file system"},
                   {"sysctl", u.count("sysctl") ? u.at("sysctl") : "missing"},
                   {"irq_affinity", "/proc/irq/default_smp_affinity: Read-only file system"},
                   {"qdisc", "a root qdisc cannot be replaced here: unshare a scratch network namespace: Operation not permitted"}});
    CHECK(u.at("sysctl").rfind("/proc/sys/net/", 0) == 0);
    // Only the kinds asked are probed: an agent allowing mtu and offloads opens nothing.
    FakeHost quiet;
    quiet.read_only = host.read_only;
    CHECK(nm::unavailable_kinds({"mtu", "offloads", "channels", "rings", "coalesce"}, {"nm-b"}, quiet.ops()).empty());
    CHECK(quiet.opened.empty());
}

TEST_CASE("Kind probe: the files drop-in (the interface's sysfs directory writable) makes rps, xps and napi available", "[unit]") {
    FakeHost host;
    host.read_only = {"/proc/sys/", "/proc/irq/"};
    host.qdisc_why = "unshare a scratch network namespace: Operation not permitted";
    const auto u = nm::unavailable_kinds(nm::default_agent_kinds(), {"nm-b"}, host.ops());
    CHECK(u.size() == 1);
    CHECK(u.count("qdisc") == 1);
}

TEST_CASE("Agent requests: the op unsupported takes an interface and settings and changes nothing", "[unit]") {
    const auto r = nm::parse_agent_request(nm::Json{{"op", "unsupported"}, {"ifname", "nm-b"}, {"settings", {{"tuning", {{"rps", {{"*", "0"}}}}}}}});
    CHECK(r.op == nm::AgentOp::Unsupported);
    CHECK(r.settings.tuning.rps.at("*") == "0");
    CHECK_FALSE(nm::takes_control(nm::AgentOp::Unsupported));
    CHECK(nm::op_from_name("unsupported") == nm::AgentOp::Unsupported);
    CHECK_THROWS(nm::parse_agent_request(nm::Json{{"op", "unsupported"}, {"ifname", "nm-b"}}));  // needs the settings
}
