#include "matrix/peer_agent.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/net.hpp"
#include "matrix/peer_auth.hpp"

namespace nm {
namespace {


// What puts `now` back to `before`: its MTU and the wanted state of every changeable feature that differs.
LinkSettings settings_back_to(const LinkState& before, const LinkState& now) {
    LinkSettings s;
    if (now.mtu != before.mtu) s.mtu = before.mtu;
    for (const auto& [name, f] : now.features) {
        const auto it = before.features.find(name);
        if (it != before.features.end() && !it->second.fixed && f.wanted != it->second.wanted) s.features[name] = it->second.wanted;
    }
    return s;
}

// A request the agent turns down: the kind goes back to the client, the text to the client and the log.
struct Refusal {
    WireError kind;
    std::string message;
};

}  // namespace

struct PeerAgent::Session {
    ControlChannel& ch;
    std::string client;
    std::string key;            // the session key; empty when the agent has no key
    uint64_t last_seq = 0;
    bool controls = false;      // this session holds the agent's control
    struct Pending {
        std::string ifname;
        LinkState before;
        Deadline deadline;
    };
    std::optional<Pending> pending;   // the last change, until confirmed
};

PeerAgent::PeerAgent(DeviceControl& device, SettingsJournal& journal, PeerAgentOptions options)
    : device_(device), journal_(journal), options_(std::move(options)) {}

PeerCapabilities PeerAgent::capabilities() const {
    PeerCapabilities c;
    c.interfaces.assign(options_.allowed.begin(), options_.allowed.end());
    if (!options_.key) {
        c.why = "the agent has no key (start it with --key-file), so it changes no settings";
    } else if (options_.allowed.empty()) {
        c.why = "the agent allows no interface (start it with --allow-control IFACE)";
    } else {
        c.control = true;
    }
    return c;
}

void PeerAgent::log(const std::string& line) {
    if (!options_.log) return;
    std::lock_guard lock(log_mutex_);
    options_.log(line);
}

std::vector<ApplyReport> PeerAgent::restore_leftover() {
    std::lock_guard lock(device_mutex_);
    return journal_.restore();
}

std::vector<ApplyReport> PeerAgent::restore_all() {
    std::lock_guard lock(device_mutex_);
    return journal_.restore();
}

void PeerAgent::rollback(Session& session) {
    const auto pending = std::move(*session.pending);
    session.pending.reset();
    ApplyReport report;
    {
        std::lock_guard lock(device_mutex_);
        const LinkSettings back = settings_back_to(pending.before, device_.read(pending.ifname));
        report = back.empty() ? ApplyReport{} : device_.apply(pending.ifname, back);
        report.ifname = pending.ifname;
    }
    log("rolled back " + pending.ifname + " for " + session.client + ": the change was not confirmed in time");
    session.ch.send(Msg::RolledBack, Json{{"ifname", pending.ifname}, {"report", report}}, deadline_in(kNoticeTimeout));
}

Json PeerAgent::handle_request(Session& session, const Json& request) {
    const auto op = request.at("op").get<std::string>();
    if (op == "ping") return Json::object();
    const auto caps = capabilities();
    if (!caps.control) throw Refusal{WireError::Refused, "settings control refused: " + caps.why};
    if (op == "confirm") {
        session.pending.reset();
        return Json::object();
    }
    {
        std::lock_guard lock(device_mutex_);
        if (!session.controls) {
            if (controller_) throw Refusal{WireError::Busy, "settings control refused: another client controls this agent"};
            controller_ = true;
            session.controls = true;
        }
    }
    if (op == "restore") {
        session.pending.reset();
        std::lock_guard lock(device_mutex_);
        return Json{{"reports", journal_.restore()}};
    }
    const auto ifname = request.at("ifname").get<std::string>();
    if (!options_.allowed.count(ifname)) {
        throw Refusal{WireError::Refused, "settings control refused: interface " + ifname + " is not allowed (the agent allows " +
                                     [&] {
                                         std::string list;
                                         for (const auto& i : caps.interfaces) list += (list.empty() ? "" : ", ") + i;
                                         return list;
                                     }() +
                                     ")"};
    }
    std::lock_guard lock(device_mutex_);
    if (op == "read") return Json{{"state", device_.read(ifname)}};
    const auto settings = request.at("settings").get<LinkSettings>();
    // The tuning kinds (channels, RPS, sysctls, qdisc, ...) need the agent's allow-list of kinds, which this
    // agent does not have yet: it changes only MTU and offloads, and says so.
    if (!settings.tuning.empty()) {
        throw Refusal{WireError::Refused, "settings control refused: the agent changes only the MTU and offloads; channels, rings, coalescing, "
                                          "RPS/XPS, IRQ affinity, NAPI, sysctls and the qdisc are not allowed here (set \"apply_to\" for those "
                                          "axes to \"local\")"};
    }
    if (op == "validate") {
        device_.validate(ifname, settings);
        return Json::object();
    }
    if (op == "apply") {
        // A new change while the last is unconfirmed: the client is evidently there; keep the last.
        session.pending.reset();
        const LinkState before = device_.read(ifname);
        journal_.remember(before);
        const ApplyReport report = device_.apply(ifname, settings);
        const auto confirm_ms = request.value("confirm_ms", uint64_t{0});
        if (confirm_ms > 0) session.pending = Session::Pending{ifname, before, deadline_in(std::chrono::milliseconds(confirm_ms))};
        return Json{{"report", report}};
    }
    throw Refusal{WireError::Usage, "unknown operation \"" + op + "\""};
}

void PeerAgent::serve_control(ControlChannel ch, Json first, std::stop_token stop) {
    Session session{ch, {}, {}, 0, false, {}};
    try {
        session.client = peer_address(ch.fd()).host();
        if (!is(first, Msg::ControlHello) || !first.contains("client_nonce") || !first.at("client_nonce").is_string() ||
            !is_hex(first.at("client_nonce").get<std::string>(), 2 * kNonceBytes)) {
            log("refused " + session.client + ": unexpected first message " + first.value("type", std::string("?")));
            send_error(ch, WireError::Protocol, "expected hello or control_hello {client_nonce: 64 hex digits}");
            return;
        }
        const std::string client_nonce = first.at("client_nonce").get<std::string>();
        const std::string nonce = random_hex(kNonceBytes);
        const auto caps = capabilities();
        ch.send(Msg::Challenge,
                Json{{"nonce", nonce},
                     {"auth_required", options_.key.has_value()},
                     {"control", caps.control},
                     {"interfaces", caps.interfaces},
                     {"why", caps.why},
                     {"heartbeat_timeout_ms", options_.heartbeat_timeout.count()}},
                deadline_in(kHandshakeTimeout));
        if (options_.key) {
            const Json auth = ch.expect(deadline_in(kHandshakeTimeout), "auth");
            const bool good = is(auth, Msg::Auth) && auth.contains("mac") && auth.at("mac").is_string() &&
                              macs_equal(auth.at("mac").get<std::string>(), handshake_proof(*options_.key, nonce, client_nonce, "client"));
            if (!good) {
                log("refused " + session.client + ": authentication failed (wrong key)");
                send_error(ch, WireError::Auth, "authentication failed: wrong key");
                return;
            }
            session.key = session_key(*options_.key, nonce, client_nonce);
            ch.send(Msg::Welcome, Json{{"mac", handshake_proof(*options_.key, nonce, client_nonce, "agent")}}, deadline_in(kHandshakeTimeout));
        } else {
            ch.send(Msg::Welcome, Json::object(), deadline_in(kHandshakeTimeout));
        }

        auto last_heard = std::chrono::steady_clock::now();
        while (!stop.stop_requested()) {
            const auto silence_limit = last_heard + options_.heartbeat_timeout;
            auto wake = std::min(silence_limit, deadline_in(std::chrono::milliseconds(200)));
            if (session.pending) wake = std::min(wake, session.pending->deadline);
            std::optional<Json> msg;
            try {
                msg = ch.receive(wake);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Closed) log("refused " + session.client + ": " + e.what());
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (!msg) {
                if (session.pending && now >= session.pending->deadline) rollback(session);
                if (now >= silence_limit && session.controls) {
                    log("no heartbeat from " + session.client + " for " + std::to_string(options_.heartbeat_timeout.count()) + " ms");
                    break;
                }
                if (now >= silence_limit && !session.controls) last_heard = now;   // a quiet observer may stay
                continue;
            }
            last_heard = now;
            const auto type = msg_type(*msg);
            const auto type_name = msg->at("type").get<std::string>();
            const auto seq = msg->contains("seq") && msg->at("seq").is_number_unsigned() ? std::optional(msg->at("seq").get<uint64_t>()) : std::nullopt;
            if (type != Msg::Request && type != Msg::Heartbeat) {
                log("refused " + session.client + ": unexpected message " + Json(type_name).dump());
                send_error(ch, WireError::Protocol, "unexpected message " + Json(type_name).dump(), seq);
                continue;
            }
            if (!session.key.empty()) {
                if (!verify_message(*msg, session.key)) {
                    log("refused " + session.client + ": message with a bad MAC (altered or not signed)");
                    send_error(ch, WireError::Auth, "message refused: bad MAC", seq);
                    continue;
                }
                if (!seq || *seq != session.last_seq + 1) {
                    log("refused " + session.client + ": replayed or out-of-order message (seq " + (seq ? std::to_string(*seq) : "none") +
                        ", expected " + std::to_string(session.last_seq + 1) + ")");
                    send_error(ch, WireError::Replay, "message refused: sequence " + (seq ? std::to_string(*seq) : "none") + ", expected " +
                                                  std::to_string(session.last_seq + 1), seq);
                    continue;
                }
                session.last_seq = *seq;
            }
            if (type == Msg::Heartbeat) continue;
            try {
                Json reply = handle_request(session, *msg);
                reply["seq"] = seq.value_or(0);
                ch.send(Msg::Reply, std::move(reply), deadline_in(kResultTimeout));
            } catch (const Refusal& r) {
                log("refused " + session.client + ": " + r.message);
                send_error(ch, r.kind, r.message, seq);
            } catch (const Error& e) {
                send_error(ch, e, seq);
            } catch (const nlohmann::json::exception& e) {
                send_error(ch, WireError::Protocol, std::string("bad request: ") + e.what(), seq);
            }
        }
    } catch (const Error& e) {
        log("control connection from " + session.client + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
        log("refused " + session.client + ": bad message: " + e.what());
    }
    if (session.controls) {
        try {
            const auto reports = restore_all();
            for (const auto& r : reports) log("restored " + r.ifname + " after " + session.client + " left");
        } catch (const Error& e) {
            log(std::string("restore failed: ") + e.what());
        }
        std::lock_guard lock(device_mutex_);
        controller_ = false;
    }
}

}  // namespace nm
