// The TCP sender's default write size (core/tcp_write_size.hpp) on a lab, read from outside the engine:
// strace sees the client's send() sizes, the MSS comes from the MTU and the namespace's timestamps
// sysctl, and nftables on the receiving side counts the data segments shorter than a full one.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/nft_counter.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::LabServer;
using nm::test::run_in_netns;

namespace {

/// nftables in `netns` counting the TCP data segments to `port` that are shorter than a full segment of
/// `mtu` (IP length above the 52 bytes of an ACK, below the MTU; SYN, FIN and RST left out).
nm::test::NftInputCounter runt_counter(const std::string& netns, uint16_t port, uint32_t mtu) {
    return nm::test::NftInputCounter(netns, "nmrunts",
                                     "tcp dport " + std::to_string(port) + " 'tcp flags & (syn | fin | rst) == 0' meta length 53-" + std::to_string(mtu - 1));
}

nlohmann::json run_json(const nm::test::ScopedLab& lab, const LabServer& server, const std::string& args, const std::string& prefix = "") {
    const auto r = run_in_netns(lab.client().netns, prefix + nm::test::nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) +
                                                        " -p " + std::to_string(server.port()) + " -i 0 --json " + args,
                                std::chrono::seconds(30));
    INFO(r.output.substr(0, 2000));
    REQUIRE(r.exit_status == 0);
    return nlohmann::json::parse(r.output);
}

/// The full segment's payload on the lab's 1500-byte link: IPv4 and TCP headers off, and the timestamp
/// option when the client's namespace uses it (the sysctl, read from outside the engine).
uint32_t expected_mss(const nm::test::ScopedLab& lab) {
    const auto ts = run_in_netns(lab.client().netns, "sysctl -n net.ipv4.tcp_timestamps");
    REQUIRE(ts.exit_status == 0);
    return 1500 - 20 - 20 - (std::stoi(ts.output) != 0 ? 12 : 0);
}

}  // namespace

TEST_CASE("Without -l a TCP sender writes whole send units: strace sees sends of 90 full segments, the result says so", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("strace");
    nm::test::ScopedLab lab;
    LabServer server(lab.server().netns);
    const uint32_t mss = expected_mss(lab);
    const uint32_t write = 90 * mss;   // two send units of 45 segments each (a 64 KiB GSO packet holds 45)
    const std::string trace = "/tmp/" + nm::test::unique_name("nmsend") + ".txt";
    const auto j = run_json(lab, server, "-t 1", "strace -f -qq -e trace=sendto -e signal=none -o " + trace + " ");
    const auto traced = nm::test::run_command("cat " + trace).output;
    nm::test::run_command("rm -f " + trace);
    CHECK(j.at("spec").at("write_size") == 0);
    CHECK(j.at("socket").at("mss") == mss);
    CHECK(j.at("socket").at("write_size") == write);
    CHECK(j.at("ends").at("sender").at("socket").at("write_size") == write);
    CHECK(j.at("ends").at("receiver").at("socket").at("write_size") == 0);
    // Every data send asks for a whole write, or for the rest of one a short send left: the writes end on
    // whole units of the stream.
    const std::regex send_call(R"(sendto\((\d+), .*, (\d+), MSG_DONTWAIT\|MSG_NOSIGNAL, NULL, 0\) = (-?\d+))");
    std::istringstream in(traced);
    size_t whole = 0, rest = 0;
    std::map<std::string, uint64_t> due;   // per socket: what the last short send left
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, send_call) || std::stoull(m[2]) < 4096) continue;
        INFO(line);
        const uint64_t asked = std::stoull(m[2]);
        const long long sent = std::stoll(m[3]);
        uint64_t& left = due[m[1]];
        if (left > 0) {
            CHECK(asked == left);
            ++rest;
        } else {
            CHECK(asked == write);
            ++whole;
        }
        if (sent > 0) left = asked - static_cast<uint64_t>(sent);
    }
    CHECK(whole > 100);
    INFO("sends finishing a short one: " << rest);
}

TEST_CASE("Whole-unit writes put no runt segment on the wire, and -l 1000 with -N puts thousands (nftables)", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("nft");
    nm::test::ScopedLab lab;
    // The sender's segments one by one on the wire: no TSO or GSO to carry a short one inside a big packet.
    const auto off = run_in_netns(lab.client().netns, "ethtool -K " + lab.client().ifname + " tso off gso off");
    INFO(off.output);
    REQUIRE(off.exit_status == 0);
    LabServer server(lab.server().netns);
    const auto runts = runt_counter(lab.server().netns, server.port(), 1500);
    const auto j = run_json(lab, server, "-t 1");
    const uint64_t whole_units = runts.packets();
    INFO("bytes " << j.at("bytes") << ", runts " << whole_units);
    CHECK(j.at("bytes").get<uint64_t>() > 10'000'000);
    // The control connection shares the port: its few messages are the only short segments.
    CHECK(whole_units < 50);
    // The oracle sees runts when there are some: 1000-byte writes pushed at once are nothing but runts.
    run_json(lab, server, "-t 1 -l 1000 -N");
    CHECK(runts.packets() - whole_units > 1000);
}
