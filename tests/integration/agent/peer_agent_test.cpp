// The peer agent in the lab: a TrafficServer with the PeerAgent on a thread inside the server's
// namespace, clients in the client's namespace, and every change checked with ip/ethtool in the agent's
// namespace (the independent oracle).
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "agent/agent_protocol.hpp"
#include "agent/key_file.hpp"
#include "agent/peer_agent.hpp"
#include "agent/peer_client.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/base/wait_until.hpp"
#include "core/control/message_auth.hpp"
#include "core/host/host_info.hpp"
#include "core/host/net.hpp"
#include "core/session/traffic_server.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/fake_agent.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

using nm::test::ethtool_channels;
using nm::test::ethtool_features;
using nm::test::link_mtu;
using nm::test::rps_masks;
using namespace std::chrono_literals;

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

nm::Deadline soon() { return std::chrono::steady_clock::now() + 5s; }

/// A lab whose server namespace runs the agent (in-process, on a thread that sits in that namespace); skips
/// the test without CAP_NET_ADMIN before the lab is made.
struct AgentWorld : nm::test::NeedsNetAdmin {
    explicit AgentWorld(std::optional<std::string> key, std::chrono::milliseconds heartbeat = 10000ms,
                        std::vector<std::string> kinds = nm::default_agent_kinds()) {
        nm::PeerAgentOptions opts;
        opts.allowed = {lab.server().ifname};
        opts.kinds = std::move(kinds);
        if (key) opts.key.emplace(*key);
        opts.heartbeat_timeout = heartbeat;
        opts.log = [this](const std::string& line) { add_log(line); };
        agent.emplace(device, journal, clock, opts);
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

    nm::PeerClientOptions client_options(std::optional<std::string> key) const {
        nm::PeerClientOptions o;
        o.host = host();
        o.port = port_;
        if (key) o.key.emplace(*key);
        return o;
    }

    /// A client connected from the lab's client namespace.
    std::unique_ptr<nm::PeerControlClient> connect(std::optional<std::string> key) {
        nm::NetnsScope in(lab.client().netns);
        return std::make_unique<nm::PeerControlClient>(client_options(std::move(key)));
    }

    /// A raw control connection from the client namespace, for messages no well-behaved client sends.
    nm::ControlChannel raw() {
        nm::NetnsScope in(lab.client().netns);
        return nm::ControlChannel(nm::connect_tcp(nm::resolve_address(host(), port_), "", 0, soon()));
    }

    nm::test::ScopedLab lab;
    nm::test::TempDir dir;
    nm::NetlinkDeviceControl device{lab.server().netns};
    nm::FileSettingsJournal journal{dir.file("agent-journal.json")};
    nm::SteadyClock clock;
    std::optional<nm::PeerAgent> agent;
    std::mutex mutex;
    std::string log;
    uint16_t port_ = 0;
    std::jthread server;
};

/// The protocol by hand: an authenticated session whose messages the test writes itself.
struct RawSession {
    explicit RawSession(AgentWorld& w) : ch(w.raw()) {
        const std::string cnonce = nm::random_hex(32);
        ch.send(nm::msg_name(nm::AgentMsg::ControlHello), nm::Json{{"client_nonce", cnonce}}, soon());
        const auto challenge = ch.receive_text(soon());
        REQUIRE(challenge);
        const auto nonce = challenge->message.at("nonce").get<std::string>();
        const std::string& transcript = challenge->text;
        ch.send(nm::Msg::Auth, nm::Json{{"mac", nm::handshake_proof(kKey, nonce, cnonce, "client", transcript)}}, soon());
        const auto welcome = ch.expect(soon(), "welcome");
        REQUIRE(welcome.at("type") == "welcome");
        REQUIRE(welcome.at("mac") == nm::handshake_proof(kKey, nonce, cnonce, "agent", transcript));
        key = nm::session_key(kKey, nonce, cnonce);
    }
    void send(nm::Json body, nm::AgentMsg type = nm::AgentMsg::Request) {
        body["seq"] = ++seq;
        ch.send_signed(nm::msg_name(type), body, key, nm::kClientToAgent, soon());
    }
    /// Writes `line` (with its newline) onto the connection as it is.
    void send_raw(const std::string& line) { nm::send_all(ch.fd(), line.data(), line.size(), soon(), "raw"); }
    /// The agent's next message, its MAC (on the bytes received) and sequence checked.
    nm::Json next() {
        auto m = ch.receive_text(soon());
        REQUIRE(m);
        REQUIRE(nm::verify_text(m->text, key, nm::kAgentToClient));
        REQUIRE(m->message.at("aseq") == ++aseq);
        return m->message;
    }
    nm::Json request(nm::Json body) {
        send(std::move(body));
        return next();
    }
    nm::Json apply(const std::string& ifname, uint32_t mtu, int confirm_ms) {
        return request(nm::Json{{"op", "apply"}, {"ifname", ifname}, {"settings", nm::LinkSettings{mtu, {}, {}}}, {"confirm_ms", confirm_ms}});
    }

    nm::ControlChannel ch;
    std::string key;
    uint64_t seq = 0;
    uint64_t aseq = 0;
};

}  // namespace

TEST_CASE("An agent without a key refuses every settings change, says why at connect, and the interface is unchanged", "[integration]") {
    AgentWorld w(std::nullopt);
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);

    auto client = w.connect(std::nullopt);
    CHECK_FALSE(client->capabilities().control);
    CHECK(client->capabilities().why == "the agent has no key (start it with --key-file), so it changes no settings");
    CHECK(client->ping(2000ms));  // the connection itself is served
    try {
        client->apply(b.ifname, nm::LinkSettings{4000, {{"tso", false}}, {}});
        FAIL("the change was not refused");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK(std::string(e.what()).find("settings control refused: the agent has no key") != std::string::npos);
    }
    CHECK_THROWS_AS(client->read(b.ifname), nm::Error);
    unchanged.check();
    CHECK(w.log_text().find("settings control refused: the agent has no key") != std::string::npos);

    // A client holding a key refuses this agent outright: it cannot prove it holds the key.
    try {
        w.connect(kKey);
        FAIL("a client with a key accepted an agent that does not authenticate");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK_THAT(e.what(), Catch::Contains("does not authenticate (it was started without --key-file"));
    }
}

TEST_CASE("A wrong key is refused and logged, the right key changes the agent's interface, and disconnecting restores it", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    REQUIRE(ethtool_features(b.netns, b.ifname).at("tcp-segmentation-offload"));

    try {
        w.connect(std::string("a wrong key, long enough to pass the length rule"));
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
        // An interface the agent does not allow is refused by name, and so is a feature that is no offload.
        CHECK_THROWS_WITH(client->apply("lo", nm::LinkSettings{1400, {}, {}}), Catch::Contains("interface lo is not allowed"));
        CHECK_THROWS_WITH(client->apply(b.ifname, nm::LinkSettings{std::nullopt, {{"loopback", true}}, {}}),
                          Catch::Contains("feature \"loopback\" is not an offload the agent lets a client change"));
        unchanged.check();

        const auto report = client->apply(b.ifname, nm::LinkSettings{4000, {{"tso", false}}, {}});
        CHECK(client->confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
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
    // (It puts the settings back first and then clears its journal entry: both are waited for.)
    nm::wait_until([&] { return link_mtu(b.netns, b.ifname) == mtu_before && w.journal.entries().empty(); }, 5s,
                   "the agent to restore the MTU and clear its journal");
    unchanged.check();
}

TEST_CASE("An unconfirmed change is rolled back by the agent within its window, and a confirm after that is refused", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);
    {
        nm::NetnsScope in(w.lab.client().netns);
        auto o = w.client_options(kKey);
        o.confirm_window = 500ms;
        nm::PeerControlClient client(o);
        client.apply(b.ifname, nm::LinkSettings{6000, {}, {}});
        CHECK(link_mtu(b.netns, b.ifname) == "6000\n");
        nm::wait_until([&] { return w.log_text().find("rolled back " + b.ifname) != std::string::npos; }, 5s, "the agent to roll back");
        unchanged.check();
        // The late confirm: the agent refuses it, and the client says so.
        CHECK(client.confirm() == nm::ConfirmedEnd::Confirmation::RolledBack);
        unchanged.check();
    }
    // The client is gone; its session ends before the next one can take control.
    nm::wait_until([&] { return w.log_text().find("restored") != std::string::npos || w.journal.entries().empty(); }, 5s, "the first session to end");

    // The same by hand, without waiting for the notice first: the agent answers "expired".
    RawSession s(w);
    const auto applied = s.apply(b.ifname, 5000, 200);
    REQUIRE(applied.at("type") == "reply");
    const auto id = applied.at("change").get<uint64_t>();
    const auto notice = s.next();  // the window passes with no confirm
    CHECK(notice.at("type") == "rolled_back");
    CHECK(notice.at("changes") == nm::Json::array({id}));
    unchanged.check();
    const auto late = s.request(nm::Json{{"op", "confirm"}, {"change", id}});
    CHECK(late.at("type") == "error");
    CHECK(late.at("kind") == "expired");
    CHECK(late.at("message") == "change " + std::to_string(id) + " was already rolled back: its confirmation came after its window");
    unchanged.check();
}

TEST_CASE("Stacked changes: a window closing rolls back every unconfirmed change, so the peer ends at its last confirmed state", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    RawSession s(w);
    const auto a = s.apply(b.ifname, 4000, 60000).at("change").get<uint64_t>();
    CHECK(s.request(nm::Json{{"op", "confirm"}, {"change", a}}).at("type") == "reply");
    const auto short_window = s.apply(b.ifname, 5000, 300).at("change").get<uint64_t>();
    const auto long_window = s.apply(b.ifname, 6000, 60000).at("change").get<uint64_t>();
    CHECK(link_mtu(b.netns, b.ifname) == "6000\n");
    const auto notice = s.next();
    CHECK(notice.at("type") == "rolled_back");
    CHECK(notice.at("changes") == nm::Json::array({long_window, short_window}));
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");  // the confirmed one, not 5000
    CHECK(s.request(nm::Json{{"op", "confirm"}, {"change", long_window}}).at("kind") == "expired");
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
}

TEST_CASE("Silence: the agent waits out a change's window before it ends a silent session, and refused messages are not heard", "[integration]") {
    nm::test::require_net_admin();
    // A heartbeat timeout shorter than the confirm window.
    AgentWorld w(kKey, 800ms);
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);
    const auto mtu_before = link_mtu(b.netns, b.ifname);
    {
        RawSession s(w);
        const auto id = s.apply(b.ifname, 5000, 2500).at("change").get<uint64_t>();
        // No heartbeat: the session outlives its silence limit until the window closes, rolls the change
        // back and tells the client, then ends.
        const auto notice = s.next();
        CHECK(notice.at("type") == "rolled_back");
        CHECK(notice.at("changes") == nm::Json::array({id}));
        nm::wait_until([&] { return w.log_text().find("no heartbeat from") != std::string::npos; }, 5s, "the silent session to end");
        const auto log = w.log_text();
        CHECK(log.find("rolled back " + b.ifname) < log.find("no heartbeat from"));
        unchanged.check();
    }
    {
        // A confirmed change, then only messages that fail their checks: they do not keep the session alive.
        RawSession s(w);
        const auto id = s.apply(b.ifname, 5000, 60000).at("change").get<uint64_t>();
        REQUIRE(s.request(nm::Json{{"op", "confirm"}, {"change", id}}).at("type") == "reply");
        CHECK(link_mtu(b.netns, b.ifname) == "5000\n");
        // One forged heartbeat every 150 ms (fewer than the agent's limit of refusals in a row within its
        // 800 ms silence limit): if refused messages counted as heard, the session would live on.
        nm::Json forged{{"type", "heartbeat"}, {"seq", 1}, {"mac", std::string(64, '0')}};
        auto last = std::chrono::steady_clock::now() - 1s;
        nm::wait_until(
            [&] {
                if (std::chrono::steady_clock::now() - last >= 150ms) {
                    last = std::chrono::steady_clock::now();
                    try {
                        s.ch.send(nm::msg_name(nm::AgentMsg::Heartbeat), forged, soon());
                    } catch (const nm::Error&) {
                        // the agent ended the session
                    }
                }
                return link_mtu(b.netns, b.ifname) == mtu_before;
            },
            5s, "the agent to restore while it gets only refused messages");
        CHECK(w.log_text().find("refused messages in a row") == std::string::npos);
        CHECK(w.log_text().rfind("no heartbeat from") > w.log_text().find("message with a bad MAC"));
    }
}

TEST_CASE(
    "The client's heartbeats go on while it waits for a rollback: a heartbeat timeout shorter than the confirm window ends "
    "nothing",
    "[integration]") {
    AgentWorld w(kKey, 800ms);
    const auto& b = w.lab.server();
    // Twice the agent's silence limit passes while the client holds a change and waits; its heartbeats
    // (sent from their own thread) keep the session, and the change is confirmed at the end.
    nm::NetnsScope in(w.lab.client().netns);
    auto o = w.client_options(kKey);
    o.confirm_window = 3000ms;
    nm::PeerControlClient client(o);
    client.apply(b.ifname, nm::LinkSettings{4000, {}, {}});
    CHECK_FALSE(client.await_rollback(1700ms));  // no rollback inside the window; the heartbeats go on meanwhile
    CHECK(client.connected());
    CHECK(client.confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
    CHECK(w.log_text().find("no heartbeat") == std::string::npos);
}

TEST_CASE("Replayed, altered, unsigned, malformed and oversized messages are refused and logged, the agent keeps serving", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    {
        const nm::test::EndsAsItBegan unchanged(b);  // until the good client at the end changes it
        RawSession s(w);
        const std::string ping = nm::encode_signed_message(nm::Json{{"type", "request"}, {"seq", 1}, {"op", "ping"}}, s.key, nm::kClientToAgent);
        s.send_raw(ping);
        CHECK(s.next().at("type") == "reply");
        s.seq = 1;

        s.send_raw(ping);  // the same message again
        const auto replay = s.next();
        CHECK(replay.at("kind") == "replay");
        CHECK(replay.at("message") == "message refused: replayed or out-of-order message (sequence 1, expected 2)");
        CHECK_FALSE(replay.contains("seq"));  // an unverified message's number proves nothing

        nm::Json change{{"type", "request"}, {"seq", 2}, {"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{1400, {}, {}}},
                        {"confirm_ms", 3000}};
        std::string altered_line = nm::encode_signed_message(change, s.key, nm::kClientToAgent);
        REQUIRE(altered_line.find("\"mtu\":1400") != std::string::npos);
        altered_line.replace(altered_line.find("\"mtu\":1400"), 10, "\"mtu\":9000");  // altered after signing
        s.send_raw(altered_line);
        const auto altered = s.next();
        CHECK(altered.at("kind") == "auth");
        CHECK(altered.at("message") == "message refused: message with a bad MAC (altered or not signed)");

        nm::Json unsigned_change{{"type", "request"}, {"seq", 2}, {"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{9000, {}, {}}},
                                 {"confirm_ms", 3000}};
        s.ch.send(nm::msg_name(nm::AgentMsg::Request), unsigned_change, soon());
        CHECK(s.next().at("kind") == "auth");
        // A message signed for the other direction (reflected back) does not pass either.
        nm::Json reflected{{"type", "request"}, {"seq", 2}, {"op", "restore"}};
        s.send_raw(nm::encode_signed_message(reflected, s.key, nm::kAgentToClient));
        CHECK(s.next().at("kind") == "auth");
        unchanged.check();

        // Well signed but malformed: refused before anything changes, with the field named.
        const auto bad_window =
            s.request(nm::Json{{"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{9000, {}, {}}}, {"confirm_ms", "3 s"}});
        CHECK(bad_window.at("kind") == "usage");
        CHECK(bad_window.at("message") == "bad request: \"confirm_ms\" must be an integer from 100 to 60000, got \"3 s\"");
        const auto forever =
            s.request(nm::Json{{"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{9000, {}, {}}}, {"confirm_ms", 3600000}});
        CHECK(forever.at("kind") == "usage");
        const auto no_window = s.request(nm::Json{{"op", "apply"}, {"ifname", b.ifname}, {"settings", nm::LinkSettings{9000, {}, {}}}});
        CHECK(no_window.at("message") == "bad request: apply needs \"confirm_ms\"");
        unchanged.check();
        CHECK(w.journal.entries().empty());

        // A forged log line in the op: escaped in the log.
        s.request(nm::Json{{"op", "x\nnicmatrix serve: restored nm-b after 10.9.9.9 left"}});

        // An oversized line ends this connection.
        const std::string big(nm::kMaxControlMessage + 100, 'x');
        CHECK_NOTHROW(nm::send_all(s.ch.fd(), big.data(), big.size(), soon(), "oversized"));
        nm::wait_until([&] { return w.log_text().find("longer than 65536 bytes") != std::string::npos; }, 5s, "the oversized message to be logged");
    }
    // An oversized first message from a stranger, then a good client: still served.
    {
        auto ch = w.raw();
        const std::string big(nm::kMaxControlMessage + 100, '{');
        nm::send_all(ch.fd(), big.data(), big.size(), soon(), "oversized");
    }
    const auto log = w.log_text();
    CHECK(log.find("replayed or out-of-order message (sequence 1, expected 2)") != std::string::npos);
    CHECK(log.find("message with a bad MAC") != std::string::npos);
    CHECK(log.find("unknown operation \"x\\nnicmatrix serve: restored nm-b after 10.9.9.9 left\"") != std::string::npos);
    CHECK(log.find("\nnicmatrix serve: restored") == std::string::npos);
    auto client = w.connect(kKey);
    client->apply(b.ifname, nm::LinkSettings{1400, {}, {}});
    CHECK(client->confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
    CHECK(link_mtu(b.netns, b.ifname) == "1400\n");
}

TEST_CASE("read and validate do not take control: another client may read while one controls", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    auto controller = w.connect(kKey);
    controller->apply(b.ifname, nm::LinkSettings{4000, {}, {}});
    REQUIRE(controller->confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
    auto observer = w.connect(kKey);
    CHECK(observer->read(b.ifname).mtu == 4000);
    CHECK_NOTHROW(observer->validate(b.ifname, nm::LinkSettings{9000, {}, {}}));
    CHECK_THROWS_WITH(observer->apply(b.ifname, nm::LinkSettings{5000, {}, {}}), Catch::Contains("another client controls this agent"));
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
}

TEST_CASE(
    "describe: the agent's host and its allowed interface's qdisc and RPS masks, as tc and sysfs show them on the peer, "
    "another interface is refused",
    "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    REQUIRE(nm::test::run_in_netns(b.netns, "tc qdisc replace dev " + b.ifname + " root handle 77: pfifo limit 500").exit_status == 0);
    REQUIRE(nm::test::run_in_netns(b.netns, "sh -c 'echo 3 > /sys/class/net/" + b.ifname + "/queues/rx-0/rps_cpus'").exit_status == 0);
    auto controller = w.connect(kKey);
    controller->apply(b.ifname, nm::LinkSettings{4000, {}, {}});
    REQUIRE(controller->confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
    auto observer = w.connect(kKey);  // open to a client without control, as read is
    const auto system = observer->describe(b.ifname);
    REQUIRE(system.has_value());
    CHECK(system->qdisc == "pfifo");
    CHECK(system->qdisc_handle == "77:");
    CHECK(nm::test::run_in_netns(b.netns, "tc qdisc show dev " + b.ifname + " root").output.rfind("qdisc pfifo 77: root", 0) == 0);
    REQUIRE_FALSE(system->rps.empty());
    auto cat = nm::test::run_in_netns(b.netns, "cat /sys/class/net/" + b.ifname + "/queues/rx-0/rps_cpus");
    while (!cat.output.empty() && cat.output.back() == '\n') cat.output.pop_back();
    CHECK(system->rps[0].mask == cat.output);
    CHECK(system->irqs.empty());  // veth
    const auto host = observer->host_info(b.ifname);
    CHECK(host.kernel == nm::read_host_info().kernel);
    CHECK(host.sysctls.count("net.ipv4.tcp_congestion_control") == 1);
    CHECK_FALSE(host.cpu_layout.cpus.empty());
    // The idle policy over the wire: the driver the kernel names, as `cpupower idle-info` does.
    const auto driver = nm::test::run_command("cat /sys/devices/system/cpu/cpuidle/current_driver");
    CHECK(host.cpu_idle.has_value() == (driver.exit_status == 0));
    if (host.cpu_idle && driver.exit_status == 0) CHECK(host.cpu_idle->driver + "\n" == driver.output);
    CHECK(host.tool.version == nm::kVersion);  // the agent's build, over the wire
    CHECK(host.tool.commit == nm::source_commit());
    CHECK_FALSE(host.interface.has_value());
    // Not an allowed interface: refused by the agent (and describe() says none rather than throwing).
    CHECK_THROWS_WITH(observer->host_info("lo"), Catch::Contains("interface lo is not allowed"));
    CHECK_FALSE(observer->describe("lo").has_value());
    CHECK(link_mtu(b.netns, b.ifname) == "4000\n");
}

TEST_CASE("The client refuses an impostor: no authentication, a wrong proof, a tampered or malformed reply", "[integration]") {
    nm::test::require_net_admin();
    nm::test::ScopedLab lab;
    const auto& b = lab.server();
    const std::string host = b.ipv4.substr(0, b.ipv4.find('/'));
    const nm::test::EndsAsItBegan unchanged(b);
    const auto connect = [&](const nm::test::FakeAgent& fake) {
        nm::NetnsScope in(lab.client().netns);
        nm::PeerClientOptions o;
        o.host = host;
        o.port = fake.port();
        o.key.emplace(kKey);
        return std::make_unique<nm::PeerControlClient>(o);
    };
    {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), nm::test::FakeAgent::Mode::SkipsAuth);
        CHECK_THROWS_WITH(connect(fake), Catch::Contains("does not authenticate"));
        CHECK(fake.requests().empty());  // it never got to be asked anything
    }
    {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), nm::test::FakeAgent::Mode::WrongProof);
        CHECK_THROWS_WITH(connect(fake), Catch::Contains("could not prove it holds the key"));
        CHECK(fake.requests().empty());
    }
    {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), nm::test::FakeAgent::Mode::TampersApplyReply);
        auto client = connect(fake);
        CHECK(client->read(b.ifname).name == b.ifname);
        CHECK_THROWS_WITH(client->apply(b.ifname, nm::LinkSettings{4000, {}, {}}), Catch::Contains("sent a message with a bad MAC"));
        CHECK_FALSE(client->connected());
        CHECK_THROWS_WITH(client->reconnect(2s), Catch::Contains("not reconnecting to peer agent"));
    }
    {
        nm::test::FakeAgent fake(b.netns, b.ifname, nm::SecretKey(kKey), nm::test::FakeAgent::Mode::MalformedApplyReply);
        auto client = connect(fake);
        CHECK_THROWS_AS(client->apply(b.ifname, nm::LinkSettings{4000, {}, {}}), nm::Error);  // an nm::Error, not a JSON exception
        CHECK_FALSE(client->connected());
    }
    unchanged.check();
}

TEST_CASE(
    "The agent changes only the kinds of setting its allow-list names: others are refused by kind with nothing changed, "
    "channels it changed are put back when the client leaves",
    "[integration]") {
    AgentWorld w(kKey, 10000ms, {"mtu", "offloads", "channels"});
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);
    const auto channels_before = ethtool_channels(b.netns, b.ifname);
    REQUIRE(channels_before == "RX: 2 TX: 2");
    {
        auto client = w.connect(kKey);
        REQUIRE(client->capabilities().control);
        CHECK(client->capabilities().kinds == std::vector<std::string>{"mtu", "offloads", "channels"});
        nm::LinkSettings rps;
        rps.tuning.rps.emplace("*", std::string("0"));
        const std::string refused =
            "settings control refused: rps is not a kind of setting this agent lets a client change (it allows mtu, "
            "offloads, channels; start it with --allow-kinds to change that)";
        CHECK_THROWS_WITH(client->apply(b.ifname, rps), Catch::Contains(refused));
        CHECK_THROWS_WITH(client->validate(b.ifname, rps), Catch::Contains(refused));
        nm::LinkSettings sysctl;
        sysctl.tuning.sysctl["net.ipv4.tcp_rmem"] = "4096 131072 8388608";
        CHECK_THROWS_WITH(client->apply(b.ifname, sysctl), Catch::Contains("sysctl is not a kind of setting this agent lets a client change"));
        // A change naming an allowed and a refused kind is refused whole.
        nm::LinkSettings both = rps;
        both.tuning.channels["rx"] = 1;
        CHECK_THROWS_WITH(client->apply(b.ifname, both), Catch::Contains("rps is not a kind"));
        unchanged.check();
        CHECK(w.log_text().find("refused") != std::string::npos);

        nm::LinkSettings one;
        one.tuning.channels = {{"rx", 1}, {"tx", 1}};
        const auto report = client->apply(b.ifname, one);
        CHECK(client->confirm() == nm::ConfirmedEnd::Confirmation::Confirmed);
        CHECK(report.all_requested_hold());
        CHECK(ethtool_channels(b.netns, b.ifname) == "RX: 1 TX: 1");
    }
    nm::wait_until([&] { return ethtool_channels(b.netns, b.ifname) == channels_before && w.journal.entries().empty(); }, 5s,
                   "the agent to put the channels back and clear its journal");
    unchanged.check();
}

TEST_CASE("An unconfirmed change of RPS is rolled back by the agent within its window", "[integration]") {
    AgentWorld w(kKey);
    const auto& b = w.lab.server();
    const nm::test::EndsAsItBegan unchanged(b);
    REQUIRE(rps_masks(b.netns, b.ifname) == "0 0");
    auto o = w.client_options(kKey);
    o.confirm_window = 500ms;
    std::unique_ptr<nm::PeerControlClient> client;
    {
        nm::NetnsScope in(w.lab.client().netns);
        client = std::make_unique<nm::PeerControlClient>(o);
    }
    nm::LinkSettings rps;
    rps.tuning.rps.emplace("*", std::string("0"));  // CPU 0 on every rx queue
    client->apply(b.ifname, rps);
    CHECK(rps_masks(b.netns, b.ifname) == "1 1");
    CHECK(client->await_rollback(5s));
    unchanged.check();
}
