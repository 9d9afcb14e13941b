// How the TCP stream receiver reads, seen from outside: strace of the serving process. A thread with one
// stream blocks in recv(MSG_WAITALL) and never polls; threads with several streams wait in epoll_wait and
// read with MSG_DONTWAIT.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/watched_server.hpp"

namespace {

/// Per thread of the traced process (strace -f prints its id first): how many data reads it made with
/// MSG_WAITALL, with MSG_DONTWAIT, and how many epoll_wait calls.
struct ThreadCalls {
    size_t waitall = 0;
    size_t dontwait = 0;
    size_t epoll_waits = 0;
};

std::map<std::string, ThreadCalls> calls_by_thread(const std::string& trace) {
    const std::regex recv_call(R"(^(\d+) +recvfrom\(\d+, .*, (\d+), ([A-Z_|]+), NULL, NULL\))");
    const std::regex epoll_call(R"(^(\d+) +epoll_wait\()");
    std::map<std::string, ThreadCalls> out;
    std::istringstream in(trace);
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, recv_call) && std::stoull(m[2]) >= 65536) {  // data reads, not control messages
            if (m[3].str().find("MSG_WAITALL") != std::string::npos) ++out[m[1]].waitall;
            if (m[3].str().find("MSG_DONTWAIT") != std::string::npos) ++out[m[1]].dontwait;
        } else if (std::regex_search(line, m, epoll_call)) {
            ++out[m[1]].epoll_waits;
        }
    }
    return out;
}

}  // namespace

TEST_CASE("A TCP receiver thread with one stream blocks in recv(MSG_WAITALL) without epoll, and one with two streams uses epoll (strace)",
          "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("strace");
    nm::test::ScopedLab lab;
    const std::string trace = "strace -f -qq -e trace=recvfrom,epoll_wait";
    {
        INFO("one stream");
        const auto [client, traced] = nm::test::run_against_watched_server(lab, trace, "-t 1 -i 0 --json");
        INFO(client.output.substr(0, 2000));
        REQUIRE(client.exit_status == 0);
        REQUIRE(nlohmann::json::parse(client.output).at("status") == "ok");
        const auto threads = calls_by_thread(traced);
        std::set<std::string> readers;
        for (const auto& [tid, c] : threads) {
            if (c.waitall > 0) readers.insert(tid);
        }
        REQUIRE(readers.size() == 1);
        const ThreadCalls& reader = threads.at(*readers.begin());
        CHECK(reader.waitall > 100);
        CHECK(reader.dontwait == 0);
        CHECK(reader.epoll_waits == 0);
    }
    {
        INFO("four streams on two threads");
        const auto [client, traced] = nm::test::run_against_watched_server(lab, trace, "-t 1 -i 0 -P 4 --threads 2 --json");
        INFO(client.output.substr(0, 2000));
        REQUIRE(client.exit_status == 0);
        size_t readers = 0;
        for (const auto& [tid, c] : calls_by_thread(traced)) {
            CHECK(c.waitall == 0);
            if (c.dontwait > 0) {
                ++readers;
                CHECK(c.epoll_waits > 0);
            }
        }
        CHECK(readers == 2);
    }
}
