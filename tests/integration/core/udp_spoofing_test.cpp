// UDP datagrams from anyone but the test's peer, or without the test's cookie, are not counted (review M6),
// on real sockets in the lab: the engine's receiver in the server's namespace, datagrams sent from the
// client's namespace, from its own address and from a second one added with `ip addr`.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "core/base/wait_until.hpp"
#include "core/engine/engine.hpp"
#include "core/host/net.hpp"
#include "core/session/traffic_session.hpp"
#include "core/workers/udp_tracker.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

// Sends `count` datagrams of stream 0 (in the window) with sequence numbers from `first`, from `from`
// (bound, any port) in the client's namespace to `to`.
void send_from(const nm::LabInterface& client, const std::string& from, const nm::SocketAddress& to, uint32_t cookie, uint64_t first, int count) {
    nm::NetnsScope scope(client.netns);
    nm::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd);
    const auto local = nm::resolve_address(from, 0);
    REQUIRE(::bind(fd.get(), local.get(), local.len) == 0);
    unsigned char buf[64] = {};
    for (int i = 0; i < count; ++i) {
        nm::UdpHeader{first + static_cast<uint64_t>(i), 1000, 0, true, cookie}.write(buf);
        REQUIRE(::sendto(fd.get(), buf, sizeof buf, 0, to.get(), to.len) == static_cast<ssize_t>(sizeof buf));
        if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // no drops at the socket
    }
}

}  // namespace

TEST_CASE("The UDP receiver counts only datagrams from its peer's address that carry the test's cookie", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string client = nm::strip_prefix(lab.client().ipv4);
    const std::string other = "198.18.0.77";  // a second address on the client's interface: a spoofer next door
    REQUIRE(nm::test::run_command("ip -n " + lab.client().netns + " addr add " + other + "/24 dev " + lab.client().ifname).exit_status == 0);
    constexpr uint32_t kCookie = 0x5eed1234;

    nm::TestSpec spec;
    spec.host = nm::strip_prefix(lab.server().ipv4);
    spec.protocol = nm::Protocol::Udp;
    spec.write_size = 64;
    spec.streams = 1;
    spec.threads = 1;
    spec = nm::resolve_spec(spec, 1);
    nm::EnginePlan plan = nm::plan_for(spec, nm::Direction::Reverse, "");
    plan.udp_cookie = kCookie;
    plan.udp_peer = nm::resolve_address(client, 0);
    uint16_t port = 0;
    {
        nm::NetnsScope scope(lab.server().netns);
        plan.recv_groups = nm::make_udp_receivers(nm::resolve_address(spec.host, 0), 0, 1, 0, nm::WindowSource::Local, port);
    }
    nm::EndEngine engine(std::move(plan));
    engine.start(nm::make_timeline(spec, std::chrono::steady_clock::now()));
    const auto to = nm::resolve_address(spec.host, port);
    const uint64_t delivered_before = nm::test::snmp_counter(lab.server().netns, "Udp", "InDatagrams");
    send_from(lab.client(), other, to, kCookie, 0, 300);         // the right cookie, another address
    send_from(lab.client(), client, to, kCookie ^ 1, 300, 300);  // the right address, another cookie
    send_from(lab.client(), client, to, kCookie, 600, 200);      // the test's own
    // Every datagram delivered to the socket (the server namespace's Udp InDatagrams, a fresh namespace)
    // before the drain reads what is queued.
    nm::wait_until([&] { return nm::test::snmp_counter(lab.server().netns, "Udp", "InDatagrams") >= delivered_before + 800; },
                   std::chrono::seconds(10), "all 800 datagrams to reach the receiver's socket");
    engine.stop_receivers();
    const nm::EndReport report = engine.finish(nm::RunStatus::Ok, "");
    REQUIRE(report.received.size() == 1);
    CHECK(report.received[0].packets == 200);
    REQUIRE(report.received[0].loss);
    CHECK(report.received[0].loss->received == 200);
    CHECK(report.received[0].loss->duplicates == 0);
}

TEST_CASE("A UDP sender toward a closed port stops after repeated ECONNREFUSED instead of flooding it", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::TestSpec spec;
    spec.host = nm::strip_prefix(lab.client().ipv4);  // the server end sends toward the client
    spec.protocol = nm::Protocol::Udp;
    spec.write_size = 1000;
    spec.rate_pps = 2000;
    spec.streams = 1;
    spec.duration_s = 20;
    spec = nm::resolve_spec(spec, 1);
    nm::EnginePlan plan = nm::plan_for(spec, nm::Direction::Reverse, "");
    std::vector<nm::DataStream> senders;
    {
        nm::NetnsScope scope(lab.server().netns);
        // Port 9 on the client: nothing listens there, so each datagram earns an ICMP port unreachable.
        senders.push_back(nm::make_udp_sender(nm::resolve_address(spec.host, 9), nm::resolve_address(nm::strip_prefix(lab.server().ipv4), 0), 0, 0,
                                              nm::WindowSource::Remote));
    }
    plan.send_groups = nm::spread_streams(std::move(senders), 1);
    nm::EndEngine engine(std::move(plan));
    const auto t0 = std::chrono::steady_clock::now();
    engine.start(nm::make_timeline(spec, t0));
    while (!engine.senders_done() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("the sender ran " << took << " s of its 20");
    CHECK(engine.senders_done());
    CHECK(took < 15);  // the kernel rate-limits port unreachables (about one a second after a burst)
    const nm::EndReport report = engine.finish(nm::RunStatus::Ok, "");
    CHECK_THAT(report.error, Catch::Contains("the receiver's port is closed (ECONNREFUSED 3 times)"));
}
