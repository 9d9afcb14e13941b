// The peer agent in the lab: a TrafficServer with the PeerAgent on a thread inside the server's
// namespace, clients in the client's namespace, and every change checked with ip/ethtool in the agent's
// namespace (the independent oracle).
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "core/net.hpp"
#include "core/traffic_server.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/netns.hpp"
#include "matrix/peer_agent.hpp"
#include "matrix/peer_auth.hpp"
#include "matrix/peer_client.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::ethtool_features;
using nm::test::link_mtu;

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

/// A lab whose server namespace runs the agent (in-process, on a thread that sits in that namespace).
struct AgentWorld {
    explicit AgentWorld(std::optional<std::string> key, std::chrono::milliseconds heartbeat = std::chrono::milliseconds(10000)) {
        nm::PeerAgentOptions opts;
        opts.allowed = {lab.server().ifname};
        opts.key = std::move(key);
        opts.heartbeat_timeout = heartbeat;
        opts.log = [this](const std::string& line) { add_log(line); };
        agent.emplace(device, journal, opts);
        std::promise<uint16_t> port;
        auto ready = port.get_future();
        server = std::jthread([this, &port](std::stop_token stop) {
            nm::NetnsScope in(lab.server().netns);
            nm::ServerOptions so;
            so.port = 0;
            so.control = &*agent;
            so.on_refused = [this](const std::string& line) { add_log(line); };
            nm::TrafficServer s(so);
            port.set_value(s.port());
            s.serve(stop);
        });
        port_ = ready.get();
    }
    ~AgentWorld() {
        server.request_stop();
        server.join();
    }

    void add_log(const std::string& line) {
        std::lock_guard lock(mutex);
        log += line + "\n";
    }
    std::string log_text() {
        std::lock_guard lock(mutex);
        return log;
    }

    std::string host() const { return lab.server().ipv4.substr(0, lab.server().ipv4.find('/')); }

    /// A client connected from the lab's client namespace.
    std::unique_ptr<nm::PeerControlClient> connect(std::optional<std::string> key) {
        nm::NetnsScope in(lab.client().netns);
        nm::PeerClientOptions o;
        o.host = host();
        o.port = port_;
        o.key = std::move(key);
        return std::make_unique<nm::PeerControlClient>(o);
    }

    /// A raw control connection from the client namespace, for messages no well-behaved client sends.
    nm::ControlChannel raw() {
        nm::NetnsScope in(lab.client().netns);
        return nm::ControlChannel(nm::connect_tcp(nm::resolve_address(host(), port_), "", 0,
                                                  std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    }

    nm::test::ScopedLab lab;
    nm::test::TempDir dir;
    nm::NetlinkDeviceControl device{lab.server().netns};
    nm::FileSettingsJournal journal{dir.file("agent-journal.json")};
    std::optional<nm::PeerAgent> agent;
    std::mutex mutex;
    std::string log;
    uint16_t port_ = 0;
    std::jthread server;
};

nm::Deadline soon() { return std::chrono::steady_clock::now() + std::chrono::seconds(5); }

}  // namespace

TEST_CASE("An agent without a key refuses every settings change, says why at connect, and the interface is unchanged",
          "[integration]") {
    nm::test::require_net_admin();
    AgentWorld w(std::nullopt);
    const auto& b = w.lab.server();
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    const auto features_before = ethtool_features(b.netns, b.ifname);

    auto client = w.connect(std::nullopt);
    CHECK_FALSE(client->capabilities().control);
    CHECK(client->capabilities().why == "the agent has no key (start it with --key-file), so it changes no settings");
    CHECK(client->ping(std::chrono::milliseconds(2000)));   // the connection itself is served
    try {
        client->apply(b.ifname, nm::LinkSettings{4000, {{"tso", false}}});
        FAIL("the change was not refused");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK(std::string(e.what()).find("settings control refused: the agent has no key") != std::string::npos);
    }
    CHECK_THROWS_AS(client->read(b.ifname), nm::Error);
    CHECK(link_mtu(b.netns, b.ifname) == mtu_before);
    CHECK(ethtool_features(b.netns, b.ifname) == features_before);
    CHECK(w.log_text().find("settings control refused: the agent has no key") != std::string::npos);
}

TEST_CASE("A wrong key is refused and logged; the right key changes the agent's interface, and disconnecting restores it",
          "[integration]") {
    nm::test::require_net_admin();
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    const auto features_before = ethtool_features(b.netns, b.ifname);
    REQUIRE(features_before.at("tcp-segmentation-offload"));

    try {
        w.connect(std::string("a wrong key, long enough to pass"));
        FAIL("a wrong key was accepted");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK(std::string(e.what()).find("refused the key: authentication failed: wrong key") != std::string::npos);
    }
    CHECK(w.log_text().find("authentication failed (wrong key)") != std::string::npos);

    // No key at all against an agent that has one: no control, and nothing changes.
    {
        auto anonymous = w.connect(std::nullopt);
        CHECK_FALSE(anonymous->capabilities().control);
        CHECK(anonymous->capabilities().why.find("requires a key") != std::string::npos);
    }

    {
        auto client = w.connect(kKey);
        REQUIRE(client->authenticated());
        REQUIRE(client->capabilities().control);
        CHECK(client->capabilities().interfaces == std::vector<std::string>{b.ifname});
        // An interface the agent does not allow is refused by name.
        CHECK_THROWS_WITH(client->apply("lo", nm::LinkSettings{1400, {}}), Catch::Contains("interface lo is not allowed"));

        const auto report = client->apply(b.ifname, nm::LinkSettings{4000, {{"tso", false}}});
        client->confirm();
        CHECK(report.mtu_after == 4000);
        CHECK(report.all_requested_hold());
        CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
        CHECK_FALSE(ethtool_features(b.netns, b.ifname).at("tcp-segmentation-offload"));
        // The journal holds the original before the change is made.
        const auto entries = w.journal.entries();
        REQUIRE(entries.size() == 1);
        CHECK(entries.front().original.mtu == std::stoul(mtu_before));
    }
    // The client went away: the agent restores on its own.
    nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == mtu_before; }, std::chrono::seconds(5), "the agent to restore the MTU");
    CHECK(ethtool_features(b.netns, b.ifname) == features_before);
    CHECK(w.journal.entries().empty());
}

TEST_CASE("An unconfirmed change is rolled back by the agent within its window", "[integration]") {
    nm::test::require_net_admin();
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    nm::NetnsScope in(w.lab.client().netns);
    nm::PeerClientOptions o;
    o.host = w.host();
    o.port = w.port_;
    o.key = kKey;
    o.confirm_window = std::chrono::milliseconds(500);
    nm::PeerControlClient client(o);
    client.apply(b.ifname, nm::LinkSettings{6000, {}});
    CHECK(link_mtu(b.netns, b.ifname) == "6000\n");
    CHECK(client.await_rollback(std::chrono::seconds(5)));
    CHECK(link_mtu(b.netns, b.ifname) == mtu_before);
    CHECK(w.log_text().find("rolled back " + b.ifname) != std::string::npos);
}

TEST_CASE("The agent restores when the controlling client stops sending heartbeats", "[integration]") {
    nm::test::require_net_admin();
    AgentWorld w(kKey, std::chrono::milliseconds(800));
    const auto& b = w.lab.server();
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    // A raw client that authenticates, changes the MTU, confirms, then goes silent (no heartbeats).
    auto ch = w.raw();
    const std::string cnonce = nm::random_hex(32);
    ch.send(nm::Msg::ControlHello, nm::Json{{"client_nonce", cnonce}}, soon());
    const auto challenge = ch.expect(soon(), "challenge");
    const auto nonce = challenge.at("nonce").get<std::string>();
    ch.send(nm::Msg::Auth, nm::Json{{"mac", nm::handshake_proof(kKey, nonce, cnonce, "client")}}, soon());
    REQUIRE(ch.expect(soon(), "welcome").at("type") == "welcome");
    const auto skey = nm::session_key(kKey, nonce, cnonce);
    uint64_t seq = 0;
    const auto request = [&](nm::Json body) {
        body["type"] = "request";
        body["seq"] = ++seq;
        nm::sign_message(body, skey);
        ch.send(nm::Msg::Request, body, soon());
        return ch.expect(soon(), "reply");
    };
    REQUIRE(request(nm::Json{{"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{5000, {}}}}).at("type") == "reply");
    REQUIRE(request(nm::Json{{"op", "confirm"}}).at("type") == "reply");
    CHECK(link_mtu(b.netns, b.ifname) == "5000\n");
    nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == mtu_before; }, std::chrono::seconds(5),
                   "the agent to restore after the heartbeat timeout");
    CHECK(w.log_text().find("no heartbeat from") != std::string::npos);
}

TEST_CASE("Replayed, altered, unsigned and oversized messages are refused and logged; the agent keeps serving", "[integration]") {
    nm::test::require_net_admin();
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    {
        auto ch = w.raw();
        const std::string cnonce = nm::random_hex(32);
        ch.send(nm::Msg::ControlHello, nm::Json{{"client_nonce", cnonce}}, soon());
        const auto nonce = ch.expect(soon(), "challenge").at("nonce").get<std::string>();
        ch.send(nm::Msg::Auth, nm::Json{{"mac", nm::handshake_proof(kKey, nonce, cnonce, "client")}}, soon());
        REQUIRE(ch.expect(soon(), "welcome").at("type") == "welcome");
        const auto skey = nm::session_key(kKey, nonce, cnonce);

        nm::Json ping{{"type", "request"}, {"seq", 1}, {"op", "ping"}};
        nm::sign_message(ping, skey);
        ch.send(nm::Msg::Request, ping, soon());
        CHECK(ch.expect(soon(), "reply").at("type") == "reply");

        ch.send(nm::Msg::Request, ping, soon());   // the same message again
        const auto replay = ch.expect(soon(), "replay refusal");
        CHECK(replay.at("kind") == "replay");
        CHECK(replay.at("message") == "message refused: sequence 1, expected 2");

        nm::Json change{{"type", "request"}, {"seq", 2}, {"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{1400, {}}}};
        nm::sign_message(change, skey);
        change["settings"]["mtu"] = 9000;   // altered after signing
        ch.send(nm::Msg::Request, change, soon());
        const auto altered = ch.expect(soon(), "MAC refusal");
        CHECK(altered.at("kind") == "auth");
        CHECK(altered.at("message") == "message refused: bad MAC");

        nm::Json unsigned_change{{"type", "request"}, {"seq", 2}, {"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{9000, {}}}};
        ch.send(nm::Msg::Request, unsigned_change, soon());
        CHECK(ch.expect(soon(), "MAC refusal").at("kind") == "auth");
        CHECK(link_mtu(b.netns, b.ifname) == mtu_before);

        // An oversized line ends this connection.
        const std::string big(nm::kMaxControlMessage + 100, 'x');
        CHECK_NOTHROW(nm::send_all(ch.fd(), big.data(), big.size(), soon(), "oversized"));
        nm::wait_until([&] { return w.log_text().find("longer than 65536 bytes") != std::string::npos; }, std::chrono::seconds(5),
                       "the oversized message to be logged");
    }
    // An oversized first message from a stranger, then a good client: still served.
    {
        auto ch = w.raw();
        const std::string big(nm::kMaxControlMessage + 100, '{');
        nm::send_all(ch.fd(), big.data(), big.size(), soon(), "oversized");
    }
    const auto log = w.log_text();
    CHECK(log.find("replayed or out-of-order message (seq 1, expected 2)") != std::string::npos);
    CHECK(log.find("message with a bad MAC") != std::string::npos);
    auto client = w.connect(kKey);
    client->apply(b.ifname, nm::LinkSettings{1400, {}});
    client->confirm();
    CHECK(link_mtu(b.netns, b.ifname) == "1400\n");
}
