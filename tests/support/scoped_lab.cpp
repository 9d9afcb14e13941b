#include "tests/support/scoped_lab.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/base/error.hpp"
#include "ethtool_ctl/lab.hpp"

namespace nm::test {

std::string unique_name(const std::string& prefix) {
    const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
    return prefix + std::to_string(::getpid()) + "x" + std::to_string(ns % 100000000);
}

ScopedLab::ScopedLab(LabTopology topology) : info_(lab_up(unique_name(), topology)) {}

ScopedLab::~ScopedLab() {
    try {
        lab_down(info_.name);
    } catch (const Error& e) {
        std::fprintf(stderr, "ScopedLab: could not remove lab %s: %s\n", info_.name.c_str(), e.what());
    }
}

}  // namespace nm::test
