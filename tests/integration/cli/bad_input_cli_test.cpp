// Bad input to the CLI, run inside a lab's client namespace: every bad config in tests/fixtures/bad_configs
// and every bad invocation in the table below gives its exact error and exit code 2, and leaves the lab's
// interfaces as they were (tests/support/ends_as_it_began.hpp: ip, ethtool, tc, sysfs before and after).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/file_text.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/lab_fixture.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_in_netns;

namespace {

const std::string kSource = NM_SOURCE_DIR;

}  // namespace

TEST_CASE_METHOD(nm::test::LabFixture, "Every bad config gives its exact error, exit 2, and changes nothing", "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    size_t checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kSource + "/tests/fixtures/bad_configs")) {
        if (entry.path().extension() != ".json") continue;
        const auto file = entry.path().string();
        auto expected = nm::read_file_text(std::filesystem::path(entry.path()).replace_extension(".expected"));
        INFO(file);
        const auto r =
            run_in_netns(a.netns, nicmatrix_binary() + " sweep " + file + " --iface " + a.ifname + " --peer 198.18.0.2 --key-file /nonexistent -o " +
                                      dir.file("r.json") + " --journal " + dir.file("j.json"));
        CHECK(r.exit_status == 2);
        CHECK(r.output == "nicmatrix: " + file + ": " + expected);
        ++checked;
    }
    CHECK(checked >= 16);
    unchanged.check();
    CHECK(std::filesystem::is_empty(dir.path));
}

TEST_CASE_METHOD(nm::test::LabFixture, "Bad invocations of sweep and serve give their exact error, exit 2, and change nothing", "[integration]") {
    // Key files: too short (but private), readable by everyone, too long, not a file.
    const auto key_file = [&](const std::string& name, const std::string& bytes, std::filesystem::perms mode) {
        std::ofstream(dir.file(name)) << bytes;
        std::filesystem::permissions(dir.file(name), mode);
        return dir.file(name);
    };
    const auto owner_only = std::filesystem::perms::owner_read | std::filesystem::perms::owner_write;
    const auto everyone = owner_only | std::filesystem::perms::group_read | std::filesystem::perms::others_read;
    key_file("short", "12345", owner_only);
    const auto open_key = key_file("open", "0123456789abcdef0123456789abcdef", everyone);
    const auto group_key = key_file("group", "0123456789abcdef0123456789abcdef", owner_only | std::filesystem::perms::group_read);
    const auto long_key = key_file("long", std::string(5000, 'k'), owner_only);
    std::filesystem::create_directories(dir.file("keydir"));
    const std::string open_key_error = "nicmatrix: key file " + open_key + ": mode 0644 lets group and others read it; chmod 600 " + open_key + "\n";
    const std::string cfg = kSource + "/configs/offload-mtu.json";
    const std::string journal = " --journal " + dir.file("j.json");
    struct Case {
        std::string args;
        std::string output;
    };
    const std::vector<Case> cases{
        {"sweep", "nicmatrix: sweep: the config file is missing (nicmatrix sweep CONFIG ...)\n"},
        {"sweep " + cfg + " --lab --iface nm-a --peer 198.18.0.2", "--lab excludes --iface\nRun with --help for more information.\n"},
        {"sweep " + cfg + " --iface nm-a" + journal, "nicmatrix: sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file /nonexistent/key" + journal,
         "nicmatrix: key file /nonexistent/key: cannot be read (No such file or directory)\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file " + dir.file("short") + journal,
         "nicmatrix: key file " + dir.file("short") + ": 5 bytes; at least 32 (make one with: head -c 32 /dev/urandom > " + dir.file("short") +
             ")\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file " + open_key + journal, open_key_error},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file " + group_key + journal,
         "nicmatrix: key file " + group_key + ": mode 0640 lets group read it; chmod 600 " + group_key + "\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file " + long_key + journal,
         "nicmatrix: key file " + long_key + ": longer than 4096 bytes; a key is 32 random bytes (head -c 32 /dev/urandom > " + long_key + ")\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2 --key-file " + dir.file("keydir") + journal,
         "nicmatrix: key file " + dir.file("keydir") + ": not a regular file\n"},
        {"run -c 198.18.0.2 -t 0.2 --key-file " + open_key, open_key_error},
        {"run -c 198.18.0.2 --rfc2544 --json-stream", "nicmatrix: --json-stream: not with --rfc2544 (use --json)\n"},
        {"run -c 198.18.0.2 --json --json-stream", "--json excludes --json-stream\nRun with --help for more information.\n"},
        {"sweep " + cfg + " --iface nm-a --peer 198.18.0.2" + journal,
         "nicmatrix: sweep offload-mtu: the config changes the peer's side, which its agent does only for a client holding the key: give "
         "--key-file (or NICMATRIX_KEY_FILE), or set \"apply_to\" to \"local\"\n"},
        {"sweep " + cfg + " --lab --precision 0" + journal,
         "nicmatrix: --precision 0: expected a half-width in percent of the median (0 < x <= 100)\n"},
        {"sweep " + cfg + " --lab --time-budget 10x" + journal,
         "nicmatrix: --time-budget 10x: expected a duration like 600 (seconds), 90s, 15m or 1h30m, above 0\n"},
        {"sweep " + cfg + " --lab --time-budget 30m1h" + journal,
         "nicmatrix: --time-budget 30m1h: expected a duration like 600 (seconds), 90s, 15m or 1h30m, above 0\n"},
        {"sweep " + cfg + " --lab --seed abc" + journal, "Could not convert: --seed = abc\nRun with --help for more information.\n"},
        {"compare " + cfg + " " + cfg + " --confidence 100",
         "--confidence: Value 100 not in range 50.000000 to 99.900000\nRun with --help for more information.\n"},
        {"serve --heartbeat-timeout 0", "--heartbeat-timeout: Value 0 not in range 0.100000 to 3600.000000\nRun with --help for more information.\n"},
        {"serve --port 0 --journal " + dir.file("aj.json") + " --allow-control nosuch0",
         "nicmatrix: --allow-control nosuch0: no such interface: nosuch0\n"},
        {"serve --port 0 --journal " + dir.file("aj.json") + " --allow-control nm-a --key-file " + dir.file("short"),
         "nicmatrix: key file " + dir.file("short") + ": 5 bytes; at least 32 (make one with: head -c 32 /dev/urandom > " + dir.file("short") +
             ")\n"},
        {"serve --port 0 --journal " + dir.file("aj.json") + " --allow-control nm-a --key-file " + open_key, open_key_error},
    };
    const nm::test::EndsAsItBegan unchanged(a);
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_in_netns(a.netns, "env -u NICMATRIX_KEY_FILE " + nicmatrix_binary() + " " + c.args, std::chrono::seconds(10));
        CHECK(r.exit_status == 2);
        CHECK(r.output == c.output);
    }
    unchanged.check();
    CHECK_FALSE(std::filesystem::exists(dir.file("j.json")));
    CHECK_FALSE(std::filesystem::exists(dir.file("aj.json")));
}
