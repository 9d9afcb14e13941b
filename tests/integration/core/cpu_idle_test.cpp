#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/host/cpu_affinity.hpp"
#include "core/host/cpu_idle.hpp"
#include "core/host/host_info.hpp"
#include "tests/support/command.hpp"

namespace {

struct CpupowerState {
    std::string name;
    bool disabled = false;
    std::string latency;
};

struct CpupowerIdle {
    std::string driver;
    std::string governor;
    std::vector<CpupowerState> states;
};

// `cpupower -c CPU idle-info`: "CPUidle driver: X", "CPUidle governor: Y", then per state a line "NAME:"
// (or "NAME (DISABLED) :") followed by "Flags/Description: ..." and "Latency: N".
CpupowerIdle cpupower_idle_info(uint32_t cpu) {
    const auto r = nm::test::run_command("timeout 20 cpupower -c " + std::to_string(cpu) + " idle-info 2>/dev/null");
    REQUIRE(r.exit_status == 0);
    CpupowerIdle out;
    std::vector<std::string> lines;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const auto after = [](const std::string& line, const std::string& prefix) {
        return line.compare(0, prefix.size(), prefix) == 0 ? line.substr(prefix.size()) : std::string();
    };
    for (size_t i = 0; i < lines.size(); ++i) {
        if (const auto d = after(lines[i], "CPUidle driver: "); !d.empty()) out.driver = d;
        if (const auto g = after(lines[i], "CPUidle governor: "); !g.empty()) out.governor = g;
        if (i + 1 < lines.size() && lines[i + 1].compare(0, 18, "Flags/Description:") == 0 && !lines[i].empty() && lines[i].back() == ':') {
            CpupowerState s;
            s.name = lines[i].substr(0, lines[i].size() - 1);
            if (const auto at = s.name.find(" (DISABLED) "); at != std::string::npos) {
                s.disabled = true;
                s.name.erase(at);
            }
            for (size_t k = i + 1; k < lines.size() && k < i + 6; ++k) {
                if (const auto l = after(lines[k], "Latency: "); !l.empty()) {
                    s.latency = l;
                    break;
                }
            }
            out.states.push_back(s);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("read_cpu_idle: driver, governor, states, latencies and disabled CPUs as cpupower idle-info shows them", "[integration]") {
    REQUIRE(nm::test::run_command("command -v cpupower").exit_status == 0);  // linux-cpupower (scripts/install-deps.sh)
    const auto idle = nm::read_cpu_idle();
    const auto first = cpupower_idle_info(0);
    if (first.driver.empty()) {  // "Could not determine cpuidle driver": nothing to record
        CHECK_FALSE(idle.has_value());
        return;
    }
    // A kernel idling without a driver says "none", with no states: recorded as it is.
    REQUIRE(idle.has_value());
    CHECK(idle->driver == first.driver);
    CHECK(idle->governor == first.governor);
    REQUIRE(idle->states.size() == first.states.size());
    const auto online = nm::test::run_command("cat /sys/devices/system/cpu/online");
    REQUIRE(online.exit_status == 0);
    std::string list = online.output;
    while (!list.empty() && list.back() == '\n') list.pop_back();
    for (const auto cpu : nm::parse_cpu_list(list, "cpu/online")) {
        const auto info = cpu == 0 ? first : cpupower_idle_info(cpu);
        REQUIRE(info.states.size() == idle->states.size());
        for (size_t k = 0; k < info.states.size(); ++k) {
            INFO("CPU " << cpu << " state " << k << " " << info.states[k].name);
            CHECK(idle->states[k].name == info.states[k].name);
            if (cpu == 0) CHECK((idle->states[k].latency_us ? std::to_string(*idle->states[k].latency_us) : "") == info.states[k].latency);
            const auto& off = idle->states[k].disabled_cpus;
            CHECK((std::find(off.begin(), off.end(), cpu) != off.end()) == info.states[k].disabled);
        }
    }
    // The driver's module parameters, as the files show them; and the host record carries the same.
    const auto params = nm::test::run_command("cd /sys/module/" + idle->driver + "/parameters 2>/dev/null && grep -H . * | sort");
    std::map<std::string, std::string> want;
    std::istringstream in(params.output);
    for (std::string line; std::getline(in, line);) {
        if (const auto colon = line.find(':'); colon != std::string::npos) want[line.substr(0, colon)] = line.substr(colon + 1);
    }
    CHECK(idle->driver_parameters == want);
    const auto host = nm::read_host_info();
    REQUIRE(host.cpu_idle.has_value());
    CHECK(host.cpu_idle->driver == idle->driver);
    CHECK(host.cpu_idle->states.size() == idle->states.size());
}
