// The test scaffolding's own promise: labs a dead test process left behind are removed, a live one's
// are kept. Checked in /run/netns, where `ip netns` keeps them.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "ethtool_ctl/lab.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

bool netns_listed(const std::string& name) {
    const auto names = nm::test::netns_named(name);
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("remove_orphaned_labs: a lab named for a process that is gone is taken down, a live process's lab stays", "[integration]") {
    nm::test::require_net_admin();
    // A pid that existed and is gone: a child that has exited and been reaped.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) ::_exit(0);
    REQUIRE(::waitpid(child, nullptr, 0) == child);
    const std::string orphan = "nmt" + std::to_string(child) + "x1";
    nm::test::ScopedLab mine;  // this process is alive: its lab is not an orphan (and the once-per-process sweep is done)
    nm::lab_up(orphan);
    struct Down {
        std::string lab;
        ~Down() { nm::lab_down(lab); }  // whatever the checks say
    } down{orphan};
    REQUIRE(netns_listed(orphan + "-a"));
    const auto removed = nm::test::remove_orphaned_labs();
    CHECK(std::find(removed.begin(), removed.end(), orphan) != removed.end());
    CHECK_FALSE(netns_listed(orphan + "-a"));
    CHECK_FALSE(netns_listed(orphan + "-b"));
    CHECK(netns_listed(mine.client().netns));
    CHECK(netns_listed(mine.server().netns));
}
