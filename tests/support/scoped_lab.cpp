#include "tests/support/scoped_lab.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <set>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab.hpp"
#include "tests/support/oracles.hpp"

namespace nm::test {

std::string unique_name(const std::string& prefix) {
    const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
    return prefix + std::to_string(::getpid()) + "x" + std::to_string(ns % 100000000);
}

std::vector<std::string> remove_orphaned_labs() {
    std::set<std::string> orphans;
    for (const std::string& ns : netns_named("nmt")) {
        const auto x = ns.find('x');
        const auto dash = ns.rfind('-');
        if (x == std::string::npos || x <= 3 || dash == std::string::npos || dash < x) continue;
        const std::string pid = ns.substr(3, x - 3);
        if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
        if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
        orphans.insert(ns.substr(0, dash));
    }
    std::vector<std::string> removed;
    for (const auto& lab : orphans) {
        try {
            if (!lab_down(lab).empty()) removed.push_back(lab);
        } catch (const Error& e) {
            std::fprintf(stderr, "ScopedLab: could not remove orphaned lab %s: %s\n", lab.c_str(), e.what());
        }
    }
    return removed;
}

namespace {

LabInfo first_lab_up(std::string_view name, LabTopology topology) {
    static std::once_flag swept;
    std::call_once(swept, [] {
        for (const auto& lab : remove_orphaned_labs())
            std::fprintf(stderr, "ScopedLab: removed lab %s, left by a test process that died\n", lab.c_str());
    });
    return lab_up(name, topology);
}

}  // namespace

ScopedLab::ScopedLab(LabTopology topology) : info_(first_lab_up(unique_name(), topology)) {}

ScopedLab::~ScopedLab() {
    try {
        lab_down(info_.name);
    } catch (const Error& e) {
        std::fprintf(stderr, "ScopedLab: could not remove lab %s: %s\n", info_.name.c_str(), e.what());
    }
}

}  // namespace nm::test
