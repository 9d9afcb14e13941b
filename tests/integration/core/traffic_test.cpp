// The engine in-process on a lab: the server on a thread inside the server's namespace, the client inside
// the client's, as the sweep runs them. Oracles: `ip -s link` (stats64) and the kernel's own behaviour.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "core/engine/worker_merge.hpp"
#include "core/session/traffic_client.hpp"
#include "core/session/traffic_server.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::LabServer;
using nm::test::run_command;
using nm::test::run_in;

namespace {

struct Stats64 {
    uint64_t rx_bytes = 0, rx_packets = 0, tx_bytes = 0, tx_packets = 0;
};

/// The oracle: `ip -s -j link` in the namespace.
Stats64 ip_link_stats(const nm::LabInterface& itf) {
    const auto r = run_command("ip -n " + itf.netns + " -s -j link show dev " + itf.ifname);
    REQUIRE(r.exit_status == 0);
    const auto j = nlohmann::json::parse(r.output).at(0).at("stats64");
    return {j.at("rx").at("bytes"), j.at("rx").at("packets"), j.at("tx").at("bytes"), j.at("tx").at("packets")};
}

nm::TestSpec spec_for(const nm::test::ScopedLab& lab, const LabServer& server) {
    nm::TestSpec s;
    s.host = nm::strip_prefix(lab.server().ipv4);
    s.port = server.port();
    s.duration_s = 1.5;
    s.interval_s = 0.5;
    return s;
}

/// A Catch2 fixture: a lab whose server end serves tests in-process, and `spec`, a test against it
/// (spec_for) for the test to adjust; skips the test without CAP_NET_ADMIN.
struct ServedEngine : nm::test::InProcessLab {
    nm::TestSpec spec = spec_for(lab, server);
};

void set_offloads(const nm::LabInterface& itf, const std::string& state) {
    const auto r = run_command("ip netns exec " + itf.netns + " ethtool -K " + itf.ifname + " tx " + state + " sg " + state + " tso " + state +
                               " gso " + state + " gro " + state);
    REQUIRE(r.exit_status == 0);
}

// TCP payload plus the headers of every packet the interface received (Ethernet 14 + IPv4 20 + TCP with
// timestamps 32) against the interface's rx_bytes.
void check_tcp_bytes_against_interface(const std::string& offloads) {
    nm::test::ScopedLab lab;
    if (offloads == "off") {
        set_offloads(lab.client(), "off");
        set_offloads(lab.server(), "off");
    }
    LabServer server(lab.server().netns);
    const auto before = ip_link_stats(lab.server());
    const auto res = run_in(lab.client(), spec_for(lab, server));
    const auto after = ip_link_stats(lab.server());
    INFO("offloads " << offloads << ": " << nlohmann::json(res).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    REQUIRE(res.bytes > 10'000'000);
    const double rx_bytes = static_cast<double>(after.rx_bytes - before.rx_bytes);
    const double packets = static_cast<double>(after.rx_packets - before.rx_packets);
    // Retransmitted bytes (TCP_INFO) crossed the interface twice; the softnet backlog dropped none (those
    // would be retransmitted without having been counted).
    CHECK(res.receiver.napi.dropped == 0);
    const double engine_on_wire = static_cast<double>(res.bytes + res.tcp_retrans_bytes) + packets * 66;
    CHECK(engine_on_wire == Approx(rx_bytes).epsilon(0.02));
    // The result carries the interface's own delta for the same window; it agrees with the oracle too.
    CHECK(static_cast<double>(res.receiver_rx_bytes) == Approx(rx_bytes).epsilon(0.02));
    CHECK(res.receiver.iface == lab.server().ifname);
    CHECK(res.sender.iface == lab.client().ifname);
    // 1.5 s in intervals of 0.5: three of them, each a real half-second (no sliver of the window's last
    // millisecond after them), and together they hold every byte of the window, as the interface saw it.
    REQUIRE(res.intervals.size() == 3);
    uint64_t interval_bytes = 0;
    for (const auto& iv : res.intervals) {
        CHECK(iv.end_s - iv.start_s >= 0.5 * nm::kIntervalSliver);
        interval_bytes += iv.bytes;
    }
    CHECK(interval_bytes == res.bytes);
    CHECK(res.intervals.back().end_s == Approx(res.duration_s));
    CHECK(res.receiver.cpu.user_s + res.receiver.cpu.sys_s > 0);
    CHECK(res.sender.system.busy_pct > 0);
}

}  // namespace

TEST_CASE("TCP: received payload plus headers matches the receiving veth's rx_bytes, offloads on", "[integration]") {
    nm::test::require_net_admin();
    check_tcp_bytes_against_interface("on");
}

TEST_CASE("TCP: received payload plus headers matches the receiving veth's rx_bytes, offloads off", "[integration]") {
    nm::test::require_net_admin();
    check_tcp_bytes_against_interface("off");
}

TEST_CASE_METHOD(ServedEngine, "UDP paced: lands within 5% of the rate with zero loss, datagrams match rx_packets", "[integration]") {
    spec.protocol = nm::Protocol::Udp;
    spec.rate_bps = 50e6;
    spec.write_size = 1472;
    const auto before = ip_link_stats(lab.server());
    const auto res = run_in(lab.client(), spec);
    const auto after = ip_link_stats(lab.server());
    INFO(nlohmann::json(res).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    CHECK(res.throughput_bps == Approx(50e6).epsilon(0.05));
    REQUIRE(res.loss);
    CHECK(res.loss->lost == 0);
    CHECK(res.loss->received == res.loss->sent);
    CHECK(res.loss->duplicates == 0);
    const double rx_packets = static_cast<double>(after.rx_packets - before.rx_packets);
    CHECK(static_cast<double>(res.packets) == Approx(rx_packets).epsilon(0.01));
    CHECK(static_cast<double>(res.receiver_rx_packets) == Approx(rx_packets).epsilon(0.01));
    CHECK(res.loss->jitter_ms < 5);
}

TEST_CASE_METHOD(ServedEngine, "UDP 18-byte payload unlimited: the default is one batched sender per core", "[integration]") {
    spec.protocol = nm::Protocol::Udp;
    spec.write_size = 18;
    spec.duration_s = 1;
    const auto res = run_in(lab.client(), spec);
    INFO(nlohmann::json(res).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    CHECK(res.streams.size() == std::max(1u, std::thread::hardware_concurrency()));
    CHECK(res.spec.streams == res.streams.size());
    REQUIRE(res.loss);
    CHECK(res.loss->received > 10000);
    CHECK(res.loss->received + res.loss->lost == res.loss->sent);
    CHECK(res.bytes == res.packets * 18);
    // Each datagram sent in the window is one the interface received (drops happen after it, at the socket).
    CHECK(static_cast<double>(res.receiver_rx_packets) >= static_cast<double>(res.loss->received) * 0.99);
}

TEST_CASE_METHOD(ServedEngine, "UDP GSO and GRO: datagrams are still counted one by one", "[integration]") {
    spec.protocol = nm::Protocol::Udp;
    spec.write_size = 1000;
    spec.rate_pps = 20000;
    spec.udp_gso = true;
    spec.udp_gro = true;
    spec.duration_s = 1;
    const auto res = run_in(lab.client(), spec);
    INFO(nlohmann::json(res).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    REQUIRE(res.loss);
    // Counted one by one on both ends: the sender's count is the rate's datagrams (not GSO buffers), every
    // datagram is either received or lost, and each one received is 1000 bytes. A loaded machine may drop
    // some at the receiving socket; that is loss, not a miscount. The pacer never sends ahead of the rate
    // (at most 5% over), but a loaded machine can hold the sender back, so the lower bound is loose: a
    // count of GSO buffers instead of datagrams would be a fraction of it (several datagrams per buffer).
    CHECK(static_cast<double>(res.loss->sent) <= 1.05 * 20000);
    CHECK(static_cast<double>(res.loss->sent) >= 0.7 * 20000);
    CHECK(res.loss->received + res.loss->lost == res.loss->sent);
    CHECK(static_cast<double>(res.loss->received) >= 0.5 * static_cast<double>(res.loss->sent));
    CHECK(res.bytes == res.loss->received * 1000);
}

TEST_CASE_METHOD(ServedEngine, "Ten streams (-P 10) sum to the total", "[integration]") {
    spec.streams = 10;
    spec.duration_s = 1;
    const auto res = run_in(lab.client(), spec);
    REQUIRE(res.status == nm::RunStatus::Ok);
    REQUIRE(res.streams.size() == 10);
    uint64_t sum = 0;
    double bps = 0;
    for (const auto& s : res.streams) {
        CHECK(s.bytes > 0);
        CHECK(s.pmtu == 1500);
        CHECK(s.direction == nm::Direction::Forward);
        sum += s.bytes;
        bps += s.throughput_bps;
    }
    CHECK(sum == res.bytes);
    CHECK(bps == Approx(res.throughput_bps).epsilon(0.01));
}

TEST_CASE_METHOD(ServedEngine, "Reverse (-R) moves data server to client and bidir both ways, as ip -s link sees it", "[integration]") {
    spec.duration_s = 1;
    spec.direction = nm::Direction::Reverse;
    auto a0 = ip_link_stats(lab.client());
    auto b0 = ip_link_stats(lab.server());
    const auto rev = run_in(lab.client(), spec);
    auto a1 = ip_link_stats(lab.client());
    auto b1 = ip_link_stats(lab.server());
    REQUIRE(rev.status == nm::RunStatus::Ok);
    CHECK(static_cast<double>(a1.rx_bytes - a0.rx_bytes) >= static_cast<double>(rev.bytes));
    CHECK(b1.rx_bytes - b0.rx_bytes < (a1.rx_bytes - a0.rx_bytes) / 20);  // only ACKs and control go that way
    CHECK(rev.receiver.iface == lab.client().ifname);
    CHECK(rev.streams.at(0).direction == nm::Direction::Reverse);

    spec.direction = nm::Direction::Bidir;
    spec.streams = 2;
    const auto bi = run_in(lab.client(), spec);
    auto a2 = ip_link_stats(lab.client());
    auto b2 = ip_link_stats(lab.server());
    REQUIRE(bi.status == nm::RunStatus::Ok);
    REQUIRE(bi.streams.size() == 4);
    uint64_t up = 0, down = 0;
    for (const auto& s : bi.streams) (s.direction == nm::Direction::Forward ? up : down) += s.bytes;
    CHECK(up > 1'000'000);
    CHECK(down > 1'000'000);
    CHECK(b2.rx_bytes - b1.rx_bytes >= up);
    CHECK(a2.rx_bytes - a1.rx_bytes >= down);
}

TEST_CASE_METHOD(ServedEngine, "A busy server refuses a second client and the running test is undisturbed", "[integration]") {
    spec.duration_s = 2;
    auto first = std::async(std::launch::async, [&] { return run_in(lab.client(), spec); });
    // The second client tries while the first one's data flows (the server has its session by then).
    std::this_thread::yield();
    nm::wait_until([&] { return ip_link_stats(lab.server()).rx_bytes > 100'000'000; }, std::chrono::seconds(5), "the first test's data");
    auto second = spec;
    second.duration_s = 1;
    try {
        run_in(lab.client(), second);
        FAIL("the second client was not refused");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK_THAT(std::string(e.what()), Catch::Contains("busy"));
    }
    const auto res = first.get();
    CHECK(res.status == nm::RunStatus::Ok);
    CHECK(res.duration_s == Approx(2).epsilon(0.05));
    // And the server takes the next test once the first has ended.
    CHECK(run_in(lab.client(), second).status == nm::RunStatus::Ok);
}

TEST_CASE_METHOD(ServedEngine, "A path that stops passing packets ends the run as Stalled, not a hang", "[integration]") {
    spec.duration_s = 20;
    spec.stall_timeout_s = 1;
    const auto t0 = std::chrono::steady_clock::now();
    auto run = std::async(std::launch::async, [&] { return run_in(lab.client(), spec); });
    nm::wait_until([&] { return ip_link_stats(lab.server()).rx_bytes > 50'000'000; }, std::chrono::seconds(5), "data to flow");
    // A blackhole on the path: veth drops every frame for a peer that is down.
    REQUIRE(run_command("ip -n " + lab.server().netns + " link set " + lab.server().ifname + " down").exit_status == 0);
    const auto res = run.get();
    const auto took = std::chrono::steady_clock::now() - t0;
    INFO(res.error);
    CHECK(res.status == nm::RunStatus::Stalled);
    CHECK_THAT(res.error, Catch::Contains("stalled"));
    CHECK(took < std::chrono::seconds(10));
}

TEST_CASE_METHOD(ServedEngine, "Stopping the client (Ctrl-C) ends the run as Interrupted within a moment", "[integration]") {
    spec.duration_s = 30;
    std::stop_source stop;
    auto run = std::async(std::launch::async, [&] { return run_in(lab.client(), spec, stop.get_token()); });
    nm::wait_until([&] { return ip_link_stats(lab.server()).rx_bytes > 50'000'000; }, std::chrono::seconds(5), "data to flow");
    const auto t0 = std::chrono::steady_clock::now();
    stop.request_stop();
    const auto res = run.get();
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
    CHECK(res.status == nm::RunStatus::Interrupted);
    CHECK(res.bytes > 0);
    // The server is free again.
    spec.duration_s = 0.5;
    CHECK(run_in(lab.client(), spec).status == nm::RunStatus::Ok);
}

TEST_CASE_METHOD(ServedEngine, "IPv6 works the same way", "[integration]") {
    spec.host = nm::strip_prefix(lab.server().ipv6);
    spec.duration_s = 0.5;
    const auto tcp = run_in(lab.client(), spec);
    CHECK(tcp.status == nm::RunStatus::Ok);
    CHECK(tcp.receiver.iface == lab.server().ifname);
    spec.protocol = nm::Protocol::Udp;
    spec.rate_pps = 10000;
    const auto udp = run_in(lab.client(), spec);
    CHECK(udp.status == nm::RunStatus::Ok);
    REQUIRE(udp.loss);
    CHECK(udp.loss->received == Approx(5000).epsilon(0.05));
}

TEST_CASE_METHOD(ServedEngine, "Many tests in a row against one server, each starting right after the last", "[integration]") {
    spec.duration_s = 0.2;
    spec.interval_s = 0;
    for (int i = 0; i < 6; ++i) {
        spec.protocol = i % 2 == 0 ? nm::Protocol::Tcp : nm::Protocol::Udp;
        spec.direction = i % 3 == 2 ? nm::Direction::Reverse : nm::Direction::Forward;
        const auto res = run_in(lab.client(), spec);
        INFO("test " << i << ": " << res.error);
        CHECK(res.status == nm::RunStatus::Ok);
        CHECK(res.bytes > 0);
    }
}

TEST_CASE("run --profile with the ends on two hosts: the server samples its own host and returns it, each profile knowing its end's threads",
          "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::ServerOptions serve;
    serve.allow_profile = true;  // serve --allow-profile: no key, and a profile for any client
    LabServer server(lab.server().netns, serve);
    nm::TestSpec spec = spec_for(lab, server);
    spec.profile = true;
    // The client says it is another host, as a peer machine's would: the server then profiles for itself.
    nm::TrafficClientOptions options;
    options.host_id = "another-host";
    const auto res = run_in(lab.client(), spec, {}, options);
    INFO(nlohmann::json(res).dump());
    REQUIRE(res.status == nm::RunStatus::Ok);
    REQUIRE(res.sender.profile);
    REQUIRE(res.receiver.profile);
    const nm::CpuProfile& client_host = *res.sender.profile;
    const nm::CpuProfile& server_host = *res.receiver.profile;
    // Two samplers, neither shared: each counted its own window's samples, none lost.
    CHECK(client_host.shared_with.empty());
    CHECK(server_host.shared_with.empty());
    CHECK(client_host.samples > 0);
    CHECK(server_host.samples > 0);
    CHECK(client_host.lost == 0);
    CHECK(server_host.lost == 0);
    // Each knows only its own end's engine threads: the client's the senders, the server's the receivers
    // (the other end's threads are "other" to it).
    const auto samples_of = [](const nm::CpuProfile& p, const std::string& cls) {
        const auto it = p.by_task.find(cls);
        return it == p.by_task.end() ? uint64_t{0} : it->second.samples;
    };
    CHECK(samples_of(client_host, "sender") > 0);
    CHECK(samples_of(client_host, "receiver") == 0);
    CHECK(samples_of(server_host, "receiver") > 0);
    CHECK(samples_of(server_host, "sender") == 0);
}

TEST_CASE(
    "A server without a key profiles its host for no other host's client unless started with --allow-profile, and "
    "for a client holding its key",
    "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    nm::TrafficClientOptions elsewhere;
    elsewhere.host_id = "another-host";
    {
        LabServer server(lab.server().netns);
        nm::TestSpec spec = spec_for(lab, server);
        spec.profile = true;
        // Refused before any data moves, saying why and what would allow it.
        const uint64_t rx_before = ip_link_stats(lab.server()).rx_bytes;
        CHECK_THROWS_WITH(run_in(lab.client(), spec, {}, elsewhere), Catch::Contains("--profile") && Catch::Contains("--allow-profile"));
        CHECK(ip_link_stats(lab.server()).rx_bytes - rx_before < 100000);  // the handshake, no test data
        // The same test without a profile is served; so is a profile asked from this host (the client samples).
        spec.profile = false;
        CHECK(run_in(lab.client(), spec, {}, elsewhere).status == nm::RunStatus::Ok);
        spec.profile = true;
        CHECK(run_in(lab.client(), spec).status == nm::RunStatus::Ok);
    }
    {
        const std::string key(32, 'k');
        nm::ServerOptions keyed;
        keyed.key = key;
        LabServer server(lab.server().netns, keyed);
        nm::TestSpec spec = spec_for(lab, server);
        spec.profile = true;
        nm::TrafficClientOptions holder = elsewhere;
        holder.key = key;
        const auto res = run_in(lab.client(), spec, {}, holder);
        INFO(res.error);
        REQUIRE(res.status == nm::RunStatus::Ok);
        CHECK(res.receiver.profile.has_value());
    }
}
