#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/command.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;

TEST_CASE("nicmatrix lab up --json / lab down round trip leaves none of its namespaces in ip netns list", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name();
    // Other test runs may add or remove their own namespaces meanwhile; ours must come and go exactly.
    const auto ours = [&] { return run_command("ip netns list | grep -c '^" + name + "-' || true").output; };
    REQUIRE(ours() == "0\n");

    const auto up = run_command(nicmatrix_binary() + " lab up --json --name " + name);
    REQUIRE(up.exit_status == 0);
    const auto lab = nlohmann::json::parse(up.output);
    CHECK(lab.at("name") == name);
    CHECK(lab.at("namespaces").size() == 2);
    CHECK(ours() == "2\n");
    const auto a = lab.at("interfaces").at(0);
    const auto b = lab.at("interfaces").at(1);
    CHECK(run_command("ip netns exec " + a.at("netns").get<std::string>() + " ping -c1 -W2 " + nm::strip_prefix(b.at("ipv4").get<std::string>()))
              .exit_status == 0);
    CHECK(run_command("ip netns exec " + a.at("netns").get<std::string>() + " ping -6 -c1 -W2 " + nm::strip_prefix(b.at("ipv6").get<std::string>()))
              .exit_status == 0);

    const auto again = run_command(nicmatrix_binary() + " lab up --name " + name);
    CHECK(again.exit_status == 2);
    CHECK_THAT(again.output, Catch::Contains("already exists"));

    const auto down = run_command(nicmatrix_binary() + " lab down --name " + name);
    CHECK(down.exit_status == 0);
    CHECK(ours() == "0\n");
    const auto down_again = run_command(nicmatrix_binary() + " lab down --name " + name);
    CHECK(down_again.exit_status == 0);
    CHECK_THAT(down_again.output, Catch::Contains("nothing to remove"));
}

namespace {

// Subcommand names listed in a CLI11 help text's "Subcommands:" section.
std::vector<std::string> subcommands_in(const std::string& help) {
    std::vector<std::string> names;
    const auto at = help.find("Subcommands:\n");
    if (at == std::string::npos) return names;
    size_t pos = at + 13;
    while (pos < help.size() && help.compare(pos, 2, "  ") == 0) {
        const size_t start = help.find_first_not_of(' ', pos);
        const size_t end = help.find_first_of(" \n", start);
        names.push_back(help.substr(start, end - start));
        pos = help.find('\n', pos);
        if (pos == std::string::npos) break;
        ++pos;
    }
    return names;
}

}  // namespace

TEST_CASE("The CLI answers --version, and --help on every subcommand found by walking the help", "[integration]") {
    const auto version = run_command(nicmatrix_binary() + " --version");
    CHECK(version.exit_status == 0);
    CHECK_THAT(version.output, Catch::StartsWith("nicmatrix "));

    std::vector<std::string> pending{""};
    std::vector<std::string> seen;
    while (!pending.empty()) {
        const std::string path = pending.back();
        pending.pop_back();
        const auto help = run_command(nicmatrix_binary() + path + " --help");
        INFO("nicmatrix" << path << " --help");
        CHECK(help.exit_status == 0);
        CHECK_THAT(help.output, Catch::Contains("Usage"));
        seen.push_back(path);
        for (const auto& sub : subcommands_in(help.output)) pending.push_back(path + " " + sub);
    }
    CHECK(std::find(seen.begin(), seen.end(), " lab up") != seen.end());
    CHECK(std::find(seen.begin(), seen.end(), " lab down") != seen.end());

    const auto bad = run_command(nicmatrix_binary() + " lab up --topology ring");
    CHECK(bad.exit_status == 2);
    CHECK_THAT(bad.output, Catch::Contains("--topology"));
}
