// Fuzzes the peer agent's whole session: a PeerAgent serving one end of a socket pair, with a fake device
// and an in-memory journal, and this harness as the client on the other end, driving a sequence of
// messages (signed with the right session key, or raw) and moving the agent's clock. Whatever the
// sequence, once the client hangs up the agent must have restored everything: the fake interface is back
// at its original MTU and features, or the harness aborts (a finding).
//
// Input: lines. The first line picks the start: "A" authenticates with the key, "W" with a wrong one,
// anything else is sent as the first message as it is. Each later line:
//   S<json>   the object, given "type" (request unless set), the next "seq" and a MAC, then sent
//   U<bytes>  sent as it is (unsigned, malformed, anything)
//   H         a signed heartbeat
//   T<ms>     the agent's clock moves on (at most 120 s)
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "agent/agent_protocol.hpp"
#include "agent/peer_agent.hpp"
#include "core/base/error.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/message_auth.hpp"
#include "tests/support/matrix_fakes.hpp"

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

// The fake clock of tests/support, but safe to move from another thread.
class SharedClock final : public nm::Clock {
public:
    time_point now() const override { return time_point(std::chrono::nanoseconds(ns_.load())); }
    void sleep_until(time_point) override {}
    void advance(std::chrono::milliseconds d) { ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

private:
    std::atomic<int64_t> ns_{int64_t{1000} * 1000 * 1000 * 1000};
};

nm::Deadline soon() { return nm::deadline_in(std::chrono::milliseconds(200)); }

// What the agent sent so far, read and dropped (so its sends never block).
void drain(nm::ControlChannel& ch) {
    try {
        while (ch.receive(std::chrono::steady_clock::now())) {}
    } catch (const nm::Error&) {}
}

void send_raw(int fd, std::string_view bytes) {
    std::string line(bytes);
    line += '\n';
    try {
        nm::send_all(fd, line.data(), line.size(), soon(), "fuzz line");
    } catch (const nm::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    nm::test::FakeDeviceControl device;
    device.add_interface("nm-b");
    const nm::LinkState original = device.state("nm-b");
    nm::test::FakeJournal journal({&device});
    SharedClock clock;
    nm::PeerAgentOptions options;
    options.allowed = {"nm-b"};
    options.key.emplace(kKey);
    options.heartbeat_timeout = std::chrono::milliseconds(2000);
    nm::PeerAgent agent(device, journal, clock, options);

    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    nm::ControlChannel client{nm::UniqueFd(fds[0])};
    std::thread server([&agent, fd = fds[1]] {
        nm::ControlChannel ch{nm::UniqueFd(fd)};
        try {
            const auto first = ch.receive(nm::deadline_in(std::chrono::seconds(2)));
            if (first) agent.serve_control(std::move(ch), *first, {});
        } catch (const nm::Error&) {
            // the first line was not a control message: the server would drop it
        }
    });

    std::string key;
    uint64_t seq = 0;
    size_t pos = 0;
    const auto next_line = [&]() -> std::optional<std::string_view> {
        if (pos >= input.size()) return std::nullopt;
        const size_t nl = input.find('\n', pos);
        const auto line = input.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? input.size() : nl + 1;
        return line;
    };
    try {
        const auto start = next_line().value_or("");
        if (start == "A" || start == "W") {
            const std::string cnonce = nm::random_hex(32);
            client.send(nm::msg_name(nm::AgentMsg::ControlHello), nm::Json{{"client_nonce", cnonce}}, soon());
            const auto challenge = client.receive_text(nm::deadline_in(std::chrono::seconds(2)));
            if (!challenge) throw nm::Error(nm::ErrorKind::Failed, "no challenge");
            const auto nonce = challenge->message.at("nonce").get<std::string>();
            const auto proof = nm::handshake_proof(start == "A" ? kKey : "a wrong key", nonce, cnonce, "client", challenge->text);
            client.send(nm::Msg::Auth, nm::Json{{"mac", proof}}, soon());
            if (start == "A") key = nm::session_key(kKey, nonce, cnonce);
        } else {
            send_raw(client.fd(), start);
        }
        while (const auto line = next_line()) {
            if (line->empty()) continue;
            const char op = line->front();
            const auto rest = line->substr(1);
            if (op == 'T') {
                const long ms = std::strtol(std::string(rest).c_str(), nullptr, 10);
                clock.advance(std::chrono::milliseconds(std::clamp(ms, 0L, 120000L)));
            } else if (op == 'U') {
                send_raw(client.fd(), rest);
            } else if (op == 'S' || op == 'H') {
                nm::Json m = op == 'H' ? nm::Json::object() : nm::Json::parse(rest.begin(), rest.end(), nullptr, false);
                if (!m.is_object()) continue;
                if (!m.contains("type")) m["type"] = op == 'H' ? "heartbeat" : "request";
                m["seq"] = ++seq;
                const std::string encoded = key.empty() ? nm::encode_control_message(m) : nm::encode_signed_message(m, key, nm::kClientToAgent);
                send_raw(client.fd(), encoded.substr(0, encoded.size() - 1));
            }
            drain(client);
        }
    } catch (const nm::Error&) {
    } catch (const nlohmann::json::exception&) {}
    // The client hangs up; the agent must end the session and put everything back.
    ::shutdown(client.fd(), SHUT_RDWR);
    server.join();
    const auto& now = device.state("nm-b");
    if (now.mtu != original.mtu) std::abort();
    for (const auto& [name, f] : original.features) {
        if (now.features.at(name).wanted != f.wanted) std::abort();
    }
    return 0;
}
