// Request/response tests (TCP_RR, UDP_RR, TCP_CRR) on a lab, engine in-process. Oracles: the kernel's own
// counts in each namespace (/proc/net/snmp: TCP active opens for CRR, UDP datagrams in; `ip -s link`
// packets), and the two ends' independent counts of the same transactions.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/wait_until.hpp"
#include "core/host/net.hpp"
#include "core/session/traffic_client.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/nft_counter.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::LabServer;
using nm::test::run_in;
using nm::test::run_in_netns;

namespace {

/// One counter of /proc/net/snmp6 in `netns` ("Udp6InDatagrams"): a name and a value per line.
uint64_t snmp6(const std::string& netns, const std::string& field) {
    const auto r = run_in_netns(netns, "cat /proc/net/snmp6");
    REQUIRE(r.exit_status == 0);
    std::istringstream in(r.output);
    std::string name;
    uint64_t value = 0;
    while (in >> name >> value) {
        if (name == field) return value;
    }
    FAIL("no " << field << " in /proc/net/snmp6");
    return 0;
}

/// What `ip -s link` says the interface received: "packets" or "bytes".
uint64_t rx_count(const nm::LabInterface& itf, const char* what) {
    const auto r = nm::test::run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    REQUIRE(r.exit_status == 0);
    return nlohmann::json::parse(r.output).at(0).at("stats64").at("rx").at(what);
}

uint64_t rx_packets(const nm::LabInterface& itf) { return rx_count(itf, "packets"); }

nm::TestSpec rr_spec(const std::string& host, uint16_t port, nm::Protocol protocol, nm::TrafficPattern pattern) {
    nm::TestSpec s;
    s.host = host;
    s.port = port;
    s.protocol = protocol;
    s.pattern = pattern;
    s.duration_s = 1.5;
    s.interval_s = 0.5;
    return s;
}

// What every RR result must hold: transactions counted by both ends agree, percentiles in order and
// within [min, max] of the histogram, the intervals add up to the total, the rate is over the window.
void check_rr(const nm::RunResult& res, uint64_t at_least) {
    INFO(nlohmann::json(res).dump().substr(0, 3000));
    REQUIRE(res.status == nm::RunStatus::Ok);
    REQUIRE(res.rr.has_value());
    const auto& rr = *res.rr;
    CHECK(rr.transactions >= at_least);
    CHECK(rr.responder_transactions == rr.transactions + rr.lost);
    CHECK(rr.histogram.count() == rr.transactions);
    const auto& l = rr.latency_us;
    CHECK(l.p50 > 0);
    CHECK(l.p50 <= l.p90);
    CHECK(l.p90 <= l.p99);
    CHECK(l.p99 <= l.p999);
    CHECK(l.p999 <= l.max);
    CHECK(l.mean <= l.max);
    CHECK(static_cast<double>(rr.histogram.min_ns()) / 1000 <= l.p50);
    uint64_t sum = 0;
    for (const auto& iv : rr.intervals) sum += iv.transactions;
    CHECK(rr.intervals.size() == 3);
    CHECK(sum == rr.transactions);
    CHECK(rr.transactions_per_s == Approx(static_cast<double>(rr.transactions) / res.spec.duration_s));
    CHECK(rr.cpu_us_per_transaction_sender > 0);
    CHECK(rr.cpu_us_per_transaction_receiver > 0);
}

/// nftables in `netns` dropping every `every`-th UDP datagram from `from` as it arrives (numgen: the
/// `every`-th, the 2 x `every`-th, ...), and counting what it dropped.
nm::test::NftInputCounter drop_every(const std::string& netns, const std::string& from, unsigned every) {
    return nm::test::NftInputCounter(
        netns, "nmdrop", "ip saddr " + from + " meta l4proto udp numgen inc mod " + std::to_string(every) + " " + std::to_string(every - 1), "drop");
}

}  // namespace

TEST_CASE_METHOD(nm::test::InProcessLab,
                 "TCP_RR over IPv4 and IPv6: both ends count the same transactions, and the server's interface saw a packet for each",
                 "[integration]") {
    for (const auto& host : {nm::strip_prefix(lab.server().ipv4), nm::strip_prefix(lab.server().ipv6)}) {
        INFO(host);
        const auto before = rx_packets(lab.server());
        const auto res = run_in(lab.client(), rr_spec(host, server.port(), nm::Protocol::Tcp, nm::TrafficPattern::Rr));
        const auto after = rx_packets(lab.server());
        check_rr(res, 1000);
        // Every request is at least one segment into the server's veth.
        CHECK(after - before >= res.rr->transactions);
        CHECK(!res.socket.congestion.empty());
    }
}

TEST_CASE_METHOD(nm::test::InProcessLab, "UDP_RR over IPv4 and IPv6: one datagram each way per transaction, as the kernel's UDP counters see it",
                 "[integration]") {
    for (const auto& host : {nm::strip_prefix(lab.server().ipv4), nm::strip_prefix(lab.server().ipv6)}) {
        INFO(host);
        const bool v6 = host.find(':') != std::string::npos;
        const auto datagrams_in = [&] {
            return v6 ? snmp6(lab.server().netns, "Udp6InDatagrams") : nm::test::snmp_counter(lab.server().netns, "Udp", "InDatagrams");
        };
        const auto in_before = datagrams_in();
        const auto res = run_in(lab.client(), rr_spec(host, server.port(), nm::Protocol::Udp, nm::TrafficPattern::Rr));
        check_rr(res, 1000);
        CHECK(res.rr->lost == 0);  // a veth between two namespaces loses nothing at one request in flight
        CHECK(datagrams_in() - in_before >= res.rr->responder_transactions);
    }
}

TEST_CASE_METHOD(nm::test::InProcessLab, "UDP_RR counts what the path drops as lost: every 40th answer dropped by nftables, one and two in flight",
                 "[integration]") {
    const std::string host = nm::strip_prefix(lab.server().ipv4);
    for (const uint32_t burst : {1u, 2u}) {  // the ping-pong loop, and the epoll skeleton's flow
        INFO("--rr-burst " << burst);
        const auto drop = drop_every(lab.client().netns, host, 40);
        auto spec = rr_spec(host, server.port(), nm::Protocol::Udp, nm::TrafficPattern::Rr);
        spec.rr_burst = burst;
        const auto res = run_in(lab.client(), spec);
        check_rr(res, 100);  // each loss holds its slot for the loss timeout (at least 200 ms)
        const uint64_t dropped = drop.packets();
        INFO("dropped " << dropped << ", lost " << res.rr->lost << ", late " << res.rr->late);
        CHECK(dropped >= 3);
        // Every dropped answer is a lost request. An answer slower than the timeout (a loaded machine)
        // is lost too, and then comes late, unless the run ended first.
        CHECK(res.rr->lost >= dropped);
        CHECK(res.rr->lost <= dropped + res.rr->late + 1);
    }
}

// Sends `count` 14-byte requests from `from` (any port) in `netns` to `to`; returns how many answers came
// back within `window` after the last one.
int answers_to(const std::string& netns, const std::string& from, const nm::SocketAddress& to, int count, std::chrono::milliseconds window) {
    nm::NetnsScope scope(netns);
    nm::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd);
    const auto local = nm::resolve_address(from, 0);
    REQUIRE(::bind(fd.get(), local.get(), local.len) == 0);
    char buf[14] = {};
    for (int i = 0; i < count; ++i) {
        buf[0] = static_cast<char>(i);
        REQUIRE(::sendto(fd.get(), buf, sizeof buf, 0, to.get(), to.len) == static_cast<ssize_t>(sizeof buf));
    }
    int answers = 0;
    const auto deadline = std::chrono::steady_clock::now() + window;
    for (;;) {  // an observation window: what comes back in it (nothing, for a stranger)
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        pollfd p{fd.get(), POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return answers;
        answers += ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT) > 0;
    }
}

TEST_CASE("UDP_RR's responder answers the test's client only: requests from another address get nothing back", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const std::string client = nm::strip_prefix(lab.client().ipv4);
    const std::string stranger = "198.18.0.77";  // a second address on the client's interface
    REQUIRE(nm::test::run_command("ip -n " + lab.client().netns + " addr add " + stranger + "/24 dev " + lab.client().ifname).exit_status == 0);
    LabServer server(lab.server().netns);
    const std::string host = nm::strip_prefix(lab.server().ipv4);
    auto spec = rr_spec(host, server.port(), nm::Protocol::Udp, nm::TrafficPattern::Rr);
    spec.duration_s = 4;  // long enough that everything below happens while it runs, however loaded the machine
    std::atomic<bool> done{false};
    nm::RunResult res;
    std::string failed;
    std::jthread run([&] {  // joined on every way out of the test
        try {
            res = run_in(lab.client(), spec);
        } catch (const std::exception& e) {
            failed = e.what();
        }
        done = true;
    });
    // The responder's UDP port, as `ss` in the server's namespace lists it while the test runs.
    uint16_t port = 0;
    nm::wait_until(
        [&] {
            const auto r = run_in_netns(lab.server().netns, "ss -Hnlu src " + host);
            // "198.18.0.2:PORT", or "[::ffff:198.18.0.2]:PORT" for the dual-stack socket it is.
            auto at = r.output.find(host);
            if (at == std::string::npos) return false;
            at += host.size();
            if (at < r.output.size() && r.output[at] == ']') ++at;
            if (at >= r.output.size() || r.output[at] != ':') return false;
            port = static_cast<uint16_t>(std::stoul(r.output.substr(at + 1)));
            return port != 0;
        },
        std::chrono::seconds(10), "the responder's UDP socket");
    const auto to = nm::resolve_address(host, port);
    const int to_stranger = answers_to(lab.client().netns, stranger, to, 50, std::chrono::milliseconds(300));
    const int to_client = answers_to(lab.client().netns, client, to, 5, std::chrono::milliseconds(300));  // the control
    CHECK_FALSE(done.load());                                                                             // the responder was serving all along
    run.join();
    INFO("answers to the stranger " << to_stranger << ", to the client's address " << to_client << "; " << failed);
    CHECK(to_stranger == 0);
    CHECK(to_client == 5);
    REQUIRE(res.status == nm::RunStatus::Ok);
    CHECK(res.rr->transactions > 1000);
}

TEST_CASE_METHOD(nm::test::InProcessLab, "TCP_CRR over IPv4 and IPv6: a connection per transaction, as the client's TCP ActiveOpens counts",
                 "[integration]") {
    for (const auto& host : {nm::strip_prefix(lab.server().ipv4), nm::strip_prefix(lab.server().ipv6)}) {
        INFO(host);
        const auto opens_before = nm::test::snmp_counter(lab.client().netns, "Tcp", "ActiveOpens");
        const auto res = run_in(lab.client(), rr_spec(host, server.port(), nm::Protocol::Tcp, nm::TrafficPattern::Crr));
        const auto opens = nm::test::snmp_counter(lab.client().netns, "Tcp", "ActiveOpens") - opens_before;
        check_rr(res, 200);
        // Each transaction opened a connection (plus the control connection; a flow's connection opened
        // as the window ended is not counted as a transaction, so a few more).
        CHECK(opens >= res.rr->transactions);
        CHECK(opens <= res.rr->transactions + 10);
    }
}

TEST_CASE_METHOD(nm::test::InProcessLab, "RR with -P 3 and --rr-burst 4, 64-byte requests and 1000-byte answers: flows over threads, counts agree",
                 "[integration]") {
    for (auto protocol : {nm::Protocol::Tcp, nm::Protocol::Udp}) {
        auto spec = rr_spec(nm::strip_prefix(lab.server().ipv4), server.port(), protocol, nm::TrafficPattern::Rr);
        spec.streams = 3;
        spec.rr_burst = 4;
        spec.request_size = 64;
        spec.response_size = 1000;
        const auto res = run_in(lab.client(), spec);
        check_rr(res, 1000);
        REQUIRE(res.streams.size() == 3);
        // Each flow moved its requests' bytes and got its answers' bytes.
        uint64_t bytes = 0;
        for (const auto& s : res.streams) bytes += s.bytes;
        CHECK(bytes >= res.rr->transactions * (64 + 1000));
    }
}

TEST_CASE_METHOD(nm::test::InProcessLab,
                 "TCP_RR ping-pong with messages larger than a socket call (100 kB requests, 300 kB answers): every byte of every transaction, as "
                 "the server's interface counts",
                 "[integration]") {
    auto spec = rr_spec(nm::strip_prefix(lab.server().ipv4), server.port(), nm::Protocol::Tcp, nm::TrafficPattern::Rr);
    spec.request_size = 100'000;
    spec.response_size = 300'000;
    const auto before = rx_count(lab.server(), "bytes");
    const auto res = run_in(lab.client(), spec);
    const auto received = rx_count(lab.server(), "bytes") - before;
    check_rr(res, 100);
    REQUIRE(res.streams.size() == 1);
    // The one flow's bytes are its requests and their answers, whole: no transaction was cut short or
    // counted twice, however many calls each message took.
    CHECK(res.streams.front().bytes == res.rr->transactions * (100'000 + 300'000));
    // The server's interface took every request's bytes (with headers, and the control connection).
    CHECK(received >= res.rr->transactions * 100'000);
}
