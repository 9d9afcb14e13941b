#include "tests/support/ends_as_it_began.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tests/support/command.hpp"

namespace nm::test {
namespace {

// Marks the start of each view in the one shell the snapshot runs (one `ip netns exec` for all of them).
const std::string kMark = "@@nm-view ";

// What changes by itself: a bridge's and a bridge port's running timers ("hello_timer    0.00"), a
// qdisc's reference count, and the name ip gives a veth peer's namespace: it looks through /run/netns,
// which other tests change meanwhile (its "Peer netns reference is invalid" goes to stderr, left out).
std::string without_moving_parts(const std::string& view, std::string text) {
    if (view == "ip -d link") {
        text = std::regex_replace(text, std::regex(R"(\b\w+_timer\s+[0-9.]+ ?)"), "");
        text = std::regex_replace(text, std::regex(R"( link-netns[a-z]* [^ \n]*)"), "");
    }
    if (view == "tc qdisc") text = std::regex_replace(text, std::regex(R"(refcnt [0-9]+ ?)"), "");
    return text;
}

// Each line with how often it occurs: ethtool -l prints "RX: 2" under the maximums and the current counts.
std::map<std::string, int> lines_of(const std::string& text) {
    std::map<std::string, int> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) ++lines[line];
    return lines;
}

// The lines of `a` that `b` has fewer of, as often as it has fewer, each prefixed with `mark`.
std::string missing_from(const std::map<std::string, int>& a, const std::map<std::string, int>& b, const std::string& mark) {
    std::string out;
    for (const auto& [line, n] : a) {
        const auto it = b.find(line);
        for (int i = it == b.end() ? 0 : it->second; i < n; ++i) out += mark + line + "\n";
    }
    return out;
}

}  // namespace

InterfaceState interface_state(const std::string& netns, const std::string& ifname, const std::vector<std::string>& sysctls) {
    // Each command's stderr is part of its view (ethtool's "Operation not supported"), but ip link's.
    std::vector<std::pair<std::string, std::string>> views{
        {"ip -d link", "ip -d link show dev " + ifname + " 2>/dev/null"},
        {"ip -br addr", "ip -br addr show dev " + ifname},
        {"ethtool -k", "ethtool -k " + ifname},
        {"ethtool -l", "ethtool -l " + ifname},
        {"ethtool -g", "ethtool -g " + ifname},
        {"ethtool -c", "ethtool -c " + ifname},
        {"tc qdisc", "tc qdisc show dev " + ifname},
        {"rps_cpus", "cat /sys/class/net/" + ifname + "/queues/rx-*/rps_cpus"},
    };
    for (const auto& name : sysctls) views.emplace_back("sysctl " + name, "sysctl -n " + name);
    std::string script;
    for (const auto& [view, command] : views) {
        const bool own_stderr = command.find("2>") != std::string::npos;
        script += "echo '" + kMark + view + "'; " + command + (own_stderr ? "" : " 2>&1") + "; echo \"exit $?\"; ";
    }
    // The script's quotes would end run_command's: it runs from a file-free `sh -c` given through stdin.
    const auto r = run_in_netns(netns, "sh -s <<'NM_VIEWS_END'\n" + script + "\nNM_VIEWS_END\n");
    if (r.exit_status != 0) throw std::runtime_error("the state of " + ifname + " in " + netns + ": " + r.output);
    InterfaceState state;
    std::string* current = nullptr;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(kMark, 0) == 0) {
            current = &state[line.substr(kMark.size())];
        } else if (current != nullptr) {
            *current += line + "\n";
        }
    }
    for (auto& [view, text] : state) text = without_moving_parts(view, text);
    if (state.size() != views.size()) throw std::runtime_error("the state of " + ifname + " in " + netns + ": " + r.output);
    return state;
}

std::string state_difference(const InterfaceState& before, const InterfaceState& after) {
    std::string out;
    std::set<std::string> views;
    for (const auto& [view, text] : before) views.insert(view);
    for (const auto& [view, text] : after) views.insert(view);
    for (const auto& view : views) {
        const auto b = before.count(view) ? before.at(view) : "(none)\n";
        const auto a = after.count(view) ? after.at(view) : "(none)\n";
        if (a == b) continue;
        out += view + ":\n";
        const auto lb = lines_of(b), la = lines_of(a);
        out += missing_from(lb, la, "  - ") + missing_from(la, lb, "  + ");
        if (lb == la) out += "  (the same lines in another order)\n";
    }
    return out;
}

EndsAsItBegan::EndsAsItBegan(std::string netns, std::string ifname, std::vector<std::string> sysctls)
    : netns_(std::move(netns)), ifname_(std::move(ifname)), sysctls_(std::move(sysctls)), before_(interface_state(netns_, ifname_, sysctls_)) {}

EndsAsItBegan::EndsAsItBegan(const LabInterface& end, std::vector<std::string> sysctls) : EndsAsItBegan(end.netns, end.ifname, std::move(sysctls)) {}

std::string EndsAsItBegan::difference() const { return state_difference(before_, interface_state(netns_, ifname_, sysctls_)); }

bool EndsAsItBegan::check() const {
    const std::string difference = this->difference();
    INFO(ifname_ << " in " << netns_ << " did not end as it began:\n" << difference);
    CHECK(difference.empty());
    return difference.empty();
}

EndsAsItBegan::~EndsAsItBegan() {
    if (std::uncaught_exceptions() > uncaught_at_start_) return;
    try {
        check();
    } catch (const std::exception& e) {
        FAIL_CHECK(ifname_ << " in " << netns_ << ": its state at the end could not be read: " << e.what());
    }
}

}  // namespace nm::test
