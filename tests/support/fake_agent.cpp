#include "tests/support/fake_agent.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <future>

#include "agent/agent_protocol.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/control_protocol.hpp"
#include "core/control/message_auth.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm::test {

FakeAgent::FakeAgent(std::string netns, std::string ifname, SecretKey key, Mode mode)
    : netns_(std::move(netns)), ifname_(std::move(ifname)), key_(std::move(key)), mode_(mode) {
    std::promise<uint16_t> bound;
    auto port = bound.get_future();
    thread_ = std::jthread([this, &bound](std::stop_token stop) {
        UniqueFd listener;
        try {
            NetnsScope in(netns_);
            listener = listen_tcp("", 0);
            set_nonblocking(listener.get(), true);
            bound.set_value(local_address(listener.get()).port());
        } catch (...) {
            bound.set_exception(std::current_exception());
            return;
        }
        while (!stop.stop_requested()) {
            pollfd p{listener.get(), POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            UniqueFd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
            if (!fd) continue;
            try {
                ControlChannel ch(std::move(fd));
                // One connection at a time, until the client closes it or the test ends.
                const auto first = ch.receive(deadline_in(std::chrono::seconds(5)));
                if (!first || !is(*first, AgentMsg::ControlHello)) continue;
                const auto client_nonce = first->at("client_nonce").get<std::string>();
                const auto nonce = random_hex(kNonceBytes);
                const Json challenge{{"nonce", nonce},
                                     {"auth_required", mode_ != Mode::SkipsAuth},
                                     {"control", true},
                                     {"interfaces", {ifname_}},
                                     {"kinds", default_agent_kinds()},
                                     {"unavailable", Json::object()},
                                     {"why", ""},
                                     {"heartbeat_timeout_ms", 10000},
                                     {"protocol", kAgentProtocolVersion},
                                     {"version", kVersion},
                                     {"type", "challenge"}};
                const std::string line = encode_control_message(challenge);
                const std::string transcript = line.substr(0, line.size() - 1);
                ch.send_line(line, msg_name(Msg::Challenge), deadline_in(std::chrono::seconds(5)));
                std::string skey;
                if (mode_ == Mode::SkipsAuth) {
                    ch.send(msg_name(AgentMsg::Welcome), Json::object(), deadline_in(std::chrono::seconds(5)));
                } else {
                    ch.expect(deadline_in(std::chrono::seconds(5)), "auth");
                    const std::string proof = mode_ == Mode::WrongProof ? hmac_sha256_hex("not the key", nonce)
                                                                        : handshake_proof(key_.bytes(), nonce, client_nonce, "agent", transcript);
                    ch.send(msg_name(AgentMsg::Welcome), Json{{"mac", proof}}, deadline_in(std::chrono::seconds(5)));
                    skey = session_key(key_.bytes(), nonce, client_nonce);
                }
                NetlinkDeviceControl device(netns_);
                uint64_t aseq = 0;
                while (!stop.stop_requested()) {
                    // A sweep asks the peer's server about its tests while it holds the agent's session: a
                    // test's hello meanwhile is answered "busy", as a real server with a test running would.
                    if (pollfd q{listener.get(), POLLIN, 0}; ::poll(&q, 1, 0) > 0) {
                        if (UniqueFd other(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)); other) {
                            try {
                                ControlChannel och(std::move(other));
                                if (const auto hello = och.receive(deadline_in(std::chrono::seconds(2))); hello && is(*hello, Msg::Hello)) {
                                    send_error(och, WireError::Busy, "the fake agent's session is running");
                                }
                            } catch (const Error&) {}
                        }
                    }
                    const auto msg = ch.receive(deadline_in(std::chrono::milliseconds(100)));
                    if (!msg || !is(*msg, AgentMsg::Request)) continue;
                    const auto op = msg->value("op", std::string("?"));
                    {
                        std::lock_guard lock(mutex_);
                        requests_.push_back(op + (msg->contains("mac") ? "" : " unsigned"));
                    }
                    Json reply = Json::object();
                    if (op == "read") reply["state"] = device.read(ifname_);
                    if (op == "restore") reply["reports"] = Json::array();
                    if (op == "confirm") reply["change"] = msg->at("change");
                    if (op == "unsupported") reply["why"] = "";
                    if (op == "apply") {
                        // What a client would record: the settings as if applied. Nothing is.
                        ApplyReport fabricated;
                        fabricated.ifname = ifname_;
                        const auto s = msg->at("settings").get<LinkSettings>();
                        fabricated.mtu_after = s.mtu.value_or(1500);
                        for (const auto& [name, on] : s.features) fabricated.active_after[name] = on;
                        reply["report"] = fabricated;
                        reply["change"] = 1;
                        if (mode_ == Mode::MalformedApplyReply) reply["report"] = "garbage";
                    }
                    reply["type"] = "reply";
                    reply["seq"] = msg->at("seq");
                    if (skey.empty()) {
                        ch.send(msg_name(AgentMsg::Reply), reply, deadline_in(std::chrono::seconds(5)));
                        continue;
                    }
                    reply["aseq"] = ++aseq;
                    std::string signed_line = encode_signed_message(reply, skey, kAgentToClient);
                    if (op == "apply" && mode_ == Mode::TampersApplyReply) {
                        signed_line.replace(signed_line.find("\"change\":1"), 10, "\"change\":2");  // altered on the way
                    }
                    ch.send_line(signed_line, msg_name(AgentMsg::Reply), deadline_in(std::chrono::seconds(5)));
                }
            } catch (const Error&) {
                // The client went away (or refused us); take the next one.
            } catch (const nlohmann::json::exception&) {}
        }
    });
    port_ = port.get();
}

FakeAgent::~FakeAgent() {
    thread_.request_stop();
    thread_.join();
}

std::vector<std::string> FakeAgent::requests() {
    std::lock_guard lock(mutex_);
    return requests_;
}

}  // namespace nm::test
