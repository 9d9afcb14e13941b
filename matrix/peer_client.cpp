#include "matrix/peer_client.hpp"

#include <condition_variable>

#include "core/base/error.hpp"
#include "core/net.hpp"
#include "matrix/peer_auth.hpp"

namespace nm {
namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(10);

}  // namespace

PeerControlClient::PeerControlClient(PeerClientOptions options) : options_(std::move(options)) {
    const SocketAddress agent = resolve_address(options_.host, options_.port);
    ch_.emplace(connect_tcp(agent, options_.bind, 0, deadline_in(kHandshakeTimeout)));
    const std::string client_nonce = random_hex(32);
    ch_->send(Msg::ControlHello, Json{{"client_nonce", client_nonce}}, deadline_in(kHandshakeTimeout));
    const Json challenge = ch_->expect(deadline_in(kHandshakeTimeout), "the peer agent's challenge from " + where());
    if (is(challenge, Msg::Error)) {
        throw Error(ErrorKind::Failed, "peer agent " + where() + ": " + challenge.value("message", std::string("error")));
    }
    if (!is(challenge, Msg::Challenge)) {
        throw Error(ErrorKind::Failed, "peer agent " + where() + ": no settings control (is it an older nicmatrix serve?)");
    }
    caps_.control = challenge.at("control").get<bool>();
    caps_.interfaces = challenge.at("interfaces").get<std::vector<std::string>>();
    caps_.why = challenge.value("why", std::string());
    heartbeat_timeout_ = std::chrono::milliseconds(challenge.at("heartbeat_timeout_ms").get<int64_t>());
    const auto nonce = challenge.at("nonce").get<std::string>();
    if (challenge.at("auth_required").get<bool>()) {
        if (!options_.key) {
            caps_.control = false;
            caps_.why = "the agent requires a key and none was given (--key-file or NICMATRIX_KEY_FILE)";
            return;
        }
        ch_->send(Msg::Auth, Json{{"mac", handshake_proof(*options_.key, nonce, client_nonce, "client")}}, deadline_in(kHandshakeTimeout));
        const Json welcome = ch_->expect(deadline_in(kHandshakeTimeout), "the peer agent's answer to the key");
        if (!is(welcome, Msg::Welcome)) {
            throw Error(ErrorKind::Refused, "peer agent " + where() + " refused the key: " + welcome.value("message", std::string("?")));
        }
        if (!welcome.contains("mac") || !macs_equal(welcome.at("mac").get<std::string>(), handshake_proof(*options_.key, nonce, client_nonce, "agent"))) {
            throw Error(ErrorKind::Failed, "peer agent " + where() + " could not prove it holds the key");
        }
        session_key_ = session_key(*options_.key, nonce, client_nonce);
    } else {
        const Json welcome = ch_->expect(deadline_in(kHandshakeTimeout), "the peer agent's welcome");
        if (!is(welcome, Msg::Welcome)) throw Error(ErrorKind::Failed, "peer agent " + where() + ": unexpected reply");
    }
    heartbeat_ = std::jthread([this](std::stop_token stop) { heartbeats(stop); });
}

PeerControlClient::~PeerControlClient() {
    heartbeat_.request_stop();
    if (heartbeat_.joinable()) heartbeat_.join();
}

std::string PeerControlClient::where() const { return options_.host + ":" + std::to_string(options_.port); }

void PeerControlClient::require_control(const std::string& ifname) const {
    if (!caps_.control) throw usage_error("peer agent " + where() + " changes no settings: " + caps_.why);
    if (std::find(caps_.interfaces.begin(), caps_.interfaces.end(), ifname) == caps_.interfaces.end()) {
        std::string list;
        for (const auto& i : caps_.interfaces) list += (list.empty() ? "" : ", ") + i;
        throw usage_error("peer agent " + where() + " does not allow changes on " + ifname + " (it allows " + list + ")");
    }
}

void PeerControlClient::heartbeats(std::stop_token stop) {
    const auto period = std::max(std::chrono::milliseconds(50), heartbeat_timeout_ / 4);
    std::mutex m;
    std::condition_variable_any cv;
    for (;;) {
        {
            std::unique_lock lock(m);
            if (cv.wait_for(lock, stop, period, [] { return false; })) return;
            if (stop.stop_requested()) return;
        }
        std::lock_guard lock(mutex_);
        try {
            Json hb{{"type", msg_name(Msg::Heartbeat)}, {"seq", ++seq_}};
            if (!session_key_.empty()) sign_message(hb, session_key_);
            ch_->send(Msg::Heartbeat, std::move(hb), deadline_in(kNoticeTimeout));
        } catch (const Error&) {
            return;   // the connection is gone; the next request reports it
        }
    }
}

Json PeerControlClient::request(Json body, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    body["type"] = msg_name(Msg::Request);
    body["seq"] = ++seq_;
    const auto seq = body["seq"].get<uint64_t>();
    if (!session_key_.empty()) sign_message(body, session_key_);
    const auto op = body.value("op", std::string());
    const auto deadline = deadline_in(timeout);
    ch_->send(Msg::Request, std::move(body), deadline);
    for (;;) {
        Json reply = ch_->expect(deadline, "the peer agent's reply to " + op);
        if (is(reply, Msg::RolledBack)) {
            rolled_back_ = std::move(reply);
            continue;
        }
        if (reply.value("seq", uint64_t{0}) != seq) continue;
        if (is(reply, Msg::Reply)) return reply;
        throw error_from_message(reply, "peer agent " + where());
    }
}

LinkState PeerControlClient::read(std::string_view ifname) {
    return request(Json{{"op", "read"}, {"ifname", ifname}}, kRequestTimeout).at("state").get<LinkState>();
}

void PeerControlClient::validate(std::string_view ifname, const LinkSettings& wanted) {
    request(Json{{"op", "validate"}, {"ifname", ifname}, {"settings", wanted}}, kRequestTimeout);
}

ApplyReport PeerControlClient::apply(std::string_view ifname, const LinkSettings& wanted) {
    {
        std::lock_guard lock(mutex_);
        rolled_back_.reset();
    }
    return request(Json{{"op", "apply"}, {"ifname", ifname}, {"settings", wanted}, {"confirm_ms", options_.confirm_window.count()}},
                   kRequestTimeout)
        .at("report")
        .get<ApplyReport>();
}

bool PeerControlClient::ping(std::chrono::milliseconds timeout) {
    try {
        request(Json{{"op", "ping"}}, timeout);
        return true;
    } catch (const Error&) {
        return false;
    }
}

void PeerControlClient::confirm() { request(Json{{"op", "confirm"}}, kRequestTimeout); }

bool PeerControlClient::await_rollback(std::chrono::milliseconds timeout) {
    const auto deadline = deadline_in(timeout);
    // Short waits, the lock released in between, so the heartbeats go on while the agent's window runs.
    while (std::chrono::steady_clock::now() < deadline) {
        std::lock_guard lock(mutex_);
        if (rolled_back_) {
            rolled_back_.reset();
            return true;
        }
        try {
            auto msg = ch_->receive(std::min(deadline, deadline_in(std::chrono::milliseconds(100))));
            if (msg && is(*msg, Msg::RolledBack)) rolled_back_ = std::move(*msg);
        } catch (const Error&) {
            return false;
        }
    }
    return false;
}

std::vector<ApplyReport> PeerControlClient::restore() {
    return request(Json{{"op", "restore"}}, kRequestTimeout).at("reports").get<std::vector<ApplyReport>>();
}

}  // namespace nm
