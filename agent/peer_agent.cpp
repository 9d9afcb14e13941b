#include "agent/peer_agent.hpp"

#include <algorithm>

#include "agent/change_ledger.hpp"
#include "agent/log_line.hpp"
#include "core/base/error.hpp"
#include "core/base/thread_entry.hpp"
#include "core/base/version.hpp"
#include "core/control/message_auth.hpp"
#include "core/host/host_info.hpp"
#include "core/host/net.hpp"
#include "ethtool_ctl/setting_writes.hpp"

namespace nm {
namespace {

// How often the session loop looks at its stop token while nothing arrives.
constexpr auto kPollInterval = std::chrono::milliseconds(200);

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

std::optional<uint64_t> seq_of(const Json& message) {
    const auto it = message.find(agent_field::kSeq);
    if (it == message.end()) return std::nullopt;
    return as_unsigned(*it);
}

}  // namespace

struct PeerAgent::Session {
    Session(ControlChannel& channel, ChangeLedger changes) : ch(channel), ledger(std::move(changes)) {}
    ~Session() { wipe(key); }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    ControlChannel& ch;
    std::string client;      // the client's address, for the log
    std::string key;         // the session key; empty when the agent has no key
    uint64_t last_seq = 0;   // the client's last verified message
    uint64_t agent_seq = 0;  // the agent's last signed message
    unsigned refusals_in_a_row = 0;
    bool controls = false;  // this session holds the agent's control
    ChangeLedger ledger;
};

PeerAgent::PeerAgent(DeviceControl& device, SettingsJournal& journal, Clock& clock, PeerAgentOptions options)
    : device_(device), journal_(journal), clock_(clock), options_(std::move(options)) {}

PeerCapabilities PeerAgent::capabilities() const {
    PeerCapabilities c;
    c.interfaces.assign(options_.allowed.begin(), options_.allowed.end());
    for (const auto& k : options_.kinds) {
        if (!options_.unavailable.count(k)) c.kinds.push_back(k);
    }
    c.unavailable = options_.unavailable;
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
    options_.log(safe_log_line(line));
}

void PeerAgent::journal_before_change(const LinkState& before) { journal_.remember(before); }

std::vector<ApplyReport> PeerAgent::restore_journal() { return journal_.restore(); }

std::vector<JournalReport> PeerAgent::restore_leftover() {
    std::lock_guard lock(device_mutex_);
    return journal_.restore(RestoreOptions{});
}

std::vector<ApplyReport> PeerAgent::restore_all() {
    std::lock_guard lock(device_mutex_);
    return restore_journal();
}

void PeerAgent::send_signed(Session& session, std::string_view type, Json body) {
    if (session.key.empty()) {
        session.ch.send(type, std::move(body), deadline_in(kResultTimeout));
        return;
    }
    body[agent_field::kAgentSeq] = ++session.agent_seq;
    session.ch.send_signed(type, std::move(body), session.key, kAgentToClient, deadline_in(kResultTimeout));
}

void PeerAgent::refuse(Session& session, WireError kind, const std::string& message, std::optional<uint64_t> seq) {
    log("refused " + session.client + ": " + message);
    Json body{{"kind", wire_error_name(kind)}, {"message", message}};
    if (seq) body[agent_field::kSeq] = *seq;
    try {
        send_signed(session, msg_name(Msg::Error), std::move(body));
    } catch (const Error&) {
        // The client is gone; the session loop finds out at its next receive.
    }
}

// control_hello -> challenge -> auth -> welcome. False when the connection is refused (and told why).
bool PeerAgent::handshake(Session& session, const Json& first) {
    const auto cn = first.find("client_nonce");
    if (!is(first, AgentMsg::ControlHello) || cn == first.end() || !cn->is_string() || !is_hex(cn->get_ref<const std::string&>(), 2 * kNonceBytes)) {
        log("refused " + session.client + ": unexpected first message " + quoted_value(first.value("type", Json("?"))));
        send_error(session.ch, WireError::Protocol, "expected hello or control_hello {client_nonce: 64 hex digits}");
        return false;
    }
    const std::string client_nonce = cn->get<std::string>();
    const std::string nonce = random_hex(kNonceBytes);
    const auto caps = capabilities();
    const Json challenge{{"nonce", nonce},
                         {"auth_required", options_.key.has_value()},
                         {"control", caps.control},
                         {"interfaces", caps.interfaces},
                         {"kinds", caps.kinds},
                         {"unavailable", caps.unavailable},
                         {"why", caps.why},
                         {"heartbeat_timeout_ms", options_.heartbeat_timeout.count()},
                         {"protocol", kAgentProtocolVersion},
                         {"version", kVersion},
                         {"type", msg_name(Msg::Challenge)}};
    // The proofs cover the challenge's line as sent (without its newline), which the client has as received.
    const std::string line = encode_control_message(challenge);
    const std::string transcript = line.substr(0, line.size() - 1);
    session.ch.send_line(line, msg_name(Msg::Challenge), deadline_in(kHandshakeTimeout));
    if (!options_.key) {
        session.ch.send(msg_name(AgentMsg::Welcome), Json::object(), deadline_in(kHandshakeTimeout));
        return true;
    }
    const std::string_view key = options_.key->bytes();
    const Json auth = session.ch.expect(deadline_in(kHandshakeTimeout), "auth");
    const auto mac = auth.find(agent_field::kMac);
    const bool good = is(auth, Msg::Auth) && mac != auth.end() && mac->is_string() &&
                      macs_equal(mac->get_ref<const std::string&>(), handshake_proof(key, nonce, client_nonce, "client", transcript));
    if (!good) {
        log("refused " + session.client + ": authentication failed (wrong key)");
        send_error(session.ch, WireError::Auth, "authentication failed: wrong key");
        return false;
    }
    session.key = session_key(key, nonce, client_nonce);
    session.ch.send(msg_name(AgentMsg::Welcome), Json{{agent_field::kMac, handshake_proof(key, nonce, client_nonce, "agent", transcript)}},
                    deadline_in(kHandshakeTimeout));
    return true;
}

// The checks every message after the handshake passes before it is handled or counts as heard.
bool PeerAgent::verify(Session& session, const ReceivedMessage& received) {
    const Json& message = received.message;
    const auto type = agent_msg_type(message);
    std::string why;
    WireError kind = WireError::Protocol;
    if (type != AgentMsg::Request && type != AgentMsg::Heartbeat) {
        why = "unexpected message " + quoted_value(message.value("type", Json("?")));
    } else if (!session.key.empty()) {
        const auto seq = seq_of(message);
        if (!verify_text(received.text, session.key, kClientToAgent)) {
            kind = WireError::Auth;
            why = "message with a bad MAC (altered or not signed)";
        } else if (!seq || *seq != session.last_seq + 1) {
            kind = WireError::Replay;
            why = "replayed or out-of-order message (sequence " + (seq ? std::to_string(*seq) : "none") + ", expected " +
                  std::to_string(session.last_seq + 1) + ")";
        } else {
            session.last_seq = *seq;
        }
    }
    if (why.empty()) {
        session.refusals_in_a_row = 0;
        return true;
    }
    ++session.refusals_in_a_row;
    // No "seq" in the answer: the sequence number of a message that failed its checks proves nothing, and
    // an answer carrying it could pass for the answer to the client's real request.
    refuse(session, kind, "message refused: " + why, std::nullopt);
    return false;
}

void PeerAgent::check_allowed(const std::string& ifname) const {
    if (options_.allowed.count(ifname) == 0) {
        throw AgentRefusal{WireError::Refused, "settings control refused: interface " + ifname + " is not allowed (the agent allows " +
                                                   joined(capabilities().interfaces) + ")"};
    }
}

void PeerAgent::check_kinds(const LinkSettings& settings, bool unavailable_ok) const {
    for (const auto& kind : setting_kinds(settings)) {
        if (const auto u = options_.unavailable.find(kind); u != options_.unavailable.end()) {
            if (unavailable_ok) continue;
            throw AgentRefusal{WireError::Refused,
                               "settings control refused: this agent cannot change " + kind + " where it runs (" + u->second + ")"};
        }
        if (std::find(options_.kinds.begin(), options_.kinds.end(), kind) == options_.kinds.end()) {
            throw AgentRefusal{WireError::Refused, "settings control refused: " + kind +
                                                       " is not a kind of setting this agent lets a client change (it allows " +
                                                       (options_.kinds.empty() ? std::string("none") : joined(options_.kinds)) +
                                                       "; start it with --allow-kinds to change that)"};
        }
    }
}

std::string PeerAgent::unavailable_why(const LinkSettings& settings) const {
    std::string why;
    for (const auto& kind : setting_kinds(settings)) {
        if (const auto u = options_.unavailable.find(kind); u != options_.unavailable.end()) {
            why += (why.empty() ? "" : "; ") + kind + ": the agent cannot change it where it runs (" + u->second + ")";
        }
    }
    return why;
}

Json PeerAgent::dispatch(Session& session, const AgentRequest& request) {
    if (request.op == AgentOp::Ping) return Json::object();
    const auto caps = capabilities();
    if (!caps.control) throw AgentRefusal{WireError::Refused, "settings control refused: " + caps.why};
    if (!request.ifname.empty()) check_allowed(request.ifname);
    // Validating or asking about a kind the agent cannot reach is no change: the sweep checks its config
    // (validate), then learns which cells are infeasible (unsupported); only apply refuses it.
    if (request.op == AgentOp::Apply) check_kinds(request.settings);
    if (request.op == AgentOp::Validate || request.op == AgentOp::Unsupported) check_kinds(request.settings, true);
    if (takes_control(request.op)) {
        std::lock_guard lock(device_mutex_);
        if (!session.controls) {
            if (controller_) throw AgentRefusal{WireError::Busy, "settings control refused: another client controls this agent"};
            controller_ = true;
            session.controls = true;
        }
    }
    switch (request.op) {
        case AgentOp::Ping: break;
        case AgentOp::Read: {
            std::lock_guard lock(device_mutex_);
            return Json{{agent_field::kState, device_.read(request.ifname)}};
        }
        case AgentOp::Validate: {
            std::lock_guard lock(device_mutex_);
            device_.validate(request.ifname, request.settings);
            return Json::object();
        }
        case AgentOp::Describe: {
            // The host as this agent sees it (its own namespace's sysctls) and the allowed interface.
            Json host = read_host_info();
            std::lock_guard lock(device_mutex_);
            const auto system = device_.describe(request.ifname);
            return Json{{agent_field::kHost, std::move(host)}, {agent_field::kSystem, system ? Json(*system) : Json(nullptr)}};
        }
        case AgentOp::Unsupported: {
            // What the agent cannot reach first, then what the device does not have: both before any change.
            std::string why = unavailable_why(request.settings);
            std::lock_guard lock(device_mutex_);
            const std::string device_why = device_.unsupported(request.ifname, request.settings);
            if (!device_why.empty()) why += (why.empty() ? "" : "; ") + device_why;
            return Json{{agent_field::kWhy, why}};
        }
        case AgentOp::Apply: return apply(session, request);
        case AgentOp::Confirm:
            switch (session.ledger.confirm(request.change)) {
                case ChangeLedger::Confirmation::Confirmed:
                case ChangeLedger::Confirmation::AlreadyConfirmed: return Json{{agent_field::kChange, request.change}};
                case ChangeLedger::Confirmation::RolledBack:
                    throw AgentRefusal{WireError::Expired, "change " + std::to_string(request.change) +
                                                               " was already rolled back: its confirmation came after its window"};
                case ChangeLedger::Confirmation::Unknown:
                    throw AgentRefusal{WireError::Usage, "no change " + std::to_string(request.change) + " in this session"};
            }
            break;
        case AgentOp::Restore: {
            session.ledger.take_for_rollback();  // whatever was pending is undone with the rest
            std::lock_guard lock(device_mutex_);
            return Json{{agent_field::kReports, restore_journal()}};
        }
    }
    return Json::object();
}

Json PeerAgent::apply(Session& session, const AgentRequest& request) {
    if (session.ledger.pending().size() >= kMaxPendingChanges) {
        throw AgentRefusal{WireError::Limit, "settings control refused: " + std::to_string(kMaxPendingChanges) +
                                                 " changes are waiting for a confirm; confirm one first"};
    }
    std::lock_guard lock(device_mutex_);
    const LinkState before = device_.read(request.ifname);
    journal_before_change(before);
    RecordedApply done;
    SettingWrites partial;
    try {
        LinkWait link;
        link.bound = request.link_wait;
        done = apply_recorded(device_, journal_, request.ifname, request.settings, &partial, link);
    } catch (const Error&) {
        // Put back whatever part was made: the client gets the error and no change stays behind. Only
        // what this change wrote is taken back.
        try {
            const UndoResult undo = undo_writes(device_, request.ifname, partial, &journal_);
            if (!undo.foreign.empty()) log(request.ifname + ": left as it is, changed by someone else: " + undo.foreign);
        } catch (const Error& e) {
            log("could not put " + request.ifname + " back after a failed change: " + e.what());
        }
        throw;
    }
    ApplyReport& report = done.report;
    if (report.link && !report.link->back) {
        // A link that did not come back is not left so until a confirm window runs out: the change is
        // taken back now (and the link waited for again), and the reply's change 0 says so.
        const std::string why = request.ifname + ": the link was not back " + std::to_string(request.link_wait.count()) + " ms after the change (" +
                                report.link->state + ")";
        try {
            const UndoResult undo = undo_writes(device_, request.ifname, done.writes, &journal_);
            if (!undo.foreign.empty()) log(request.ifname + ": left as it is, changed by someone else: " + undo.foreign);
            const auto carrier = device_.carrier(request.ifname);
            if (carrier && !carrier->carrier) {
                wait_for_carrier(device_, request.ifname, request.link_wait);
            }
            report.note = why + "; rolled back";
        } catch (const Error& e) {
            report.note = why + "; rolling back failed: " + e.what();
        }
        log(report.note + " for " + session.client);
        return Json{{agent_field::kReport, report}, {agent_field::kChange, 0}};
    }
    const uint64_t id = ++next_change_;
    // The window starts when the change is made: a slow device change does not eat into it.
    session.ledger.record({id, request.ifname, before, clock_.now() + request.confirm_window, std::move(done.writes)});
    return Json{{agent_field::kReport, report}, {agent_field::kChange, id}};
}

void PeerAgent::rollback(Session& session, const std::string& reason) {
    const auto changes = session.ledger.take_for_rollback();
    std::vector<uint64_t> ids;
    std::vector<std::string> ifnames;
    std::vector<ApplyReport> reports;
    {
        std::lock_guard lock(device_mutex_);
        for (const auto& c : changes) {  // newest first: the last one leaves the last confirmed state
            ids.push_back(c.id);
            if (std::find(ifnames.begin(), ifnames.end(), c.ifname) == ifnames.end()) ifnames.push_back(c.ifname);
            try {
                UndoResult undo = undo_writes(device_, c.ifname, c.writes, &journal_);
                if (!undo.foreign.empty())
                    log("rolling back change " + std::to_string(c.id) + " on " + c.ifname +
                        ": left as it is, changed by someone else: " + undo.foreign);
                undo.report.ifname = c.ifname;
                reports.push_back(std::move(undo.report));
            } catch (const Error& e) {
                log("rolling back change " + std::to_string(c.id) + " on " + c.ifname + " failed: " + e.what());
            }
        }
    }
    std::string id_list;
    for (const auto id : ids) id_list += (id_list.empty() ? "" : ", ") + std::to_string(id);
    log("rolled back " + joined(ifnames) + " for " + session.client + ": " + reason + " (change " + id_list + ")");
    try {
        send_signed(session, msg_name(AgentMsg::RolledBack),
                    Json{{agent_field::kChanges, ids}, {agent_field::kReports, reports}, {agent_field::kReason, reason}});
    } catch (const Error&) {
        // The client is gone; the session ends at its next receive and restores the rest.
    }
}

void PeerAgent::end_session(Session& session) {
    if (!session.controls) return;
    std::lock_guard lock(device_mutex_);
    try {
        for (const auto& r : restore_journal()) {
            // A plain restore has no note; one kept or dropped says why.
            log((r.note.empty() ? "restored " + r.ifname : r.ifname + ": " + r.note) + " after " + session.client + " left");
        }
    } catch (const Error& e) {
        log(std::string("restore failed: ") + e.what());
    }
    controller_ = false;
    session.controls = false;
}

void PeerAgent::serve_control(ControlChannel ch, Json first, std::stop_token stop) {
    Session session(ch, ChangeLedger(options_.heartbeat_timeout, clock_.now()));
    try {
        session.client = peer_address(ch.fd()).host();
        if (!handshake(session, first)) return;
        session.ledger.heard(clock_.now());
        while (!stop.stop_requested()) {
            const auto now = clock_.now();
            if (session.ledger.rollback_due(now)) rollback(session, "the change was not confirmed in time");
            if (session.controls && session.ledger.silent(now)) {
                log("no heartbeat from " + session.client + " for " + std::to_string(options_.heartbeat_timeout.count()) + " ms");
                break;
            }
            auto wait = kPollInterval;
            if (session.controls) {
                wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(session.ledger.next_due() - now),
                                  std::chrono::milliseconds(0), kPollInterval);
            }
            std::optional<ReceivedMessage> received;
            try {
                received = ch.receive_text(deadline_in(wait));
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Closed) log("refused " + session.client + ": " + e.what());
                break;
            }
            if (!received) continue;
            if (!verify(session, *received)) {
                if (session.refusals_in_a_row >= kMaxRefusalsInARow) {
                    log("ending the session of " + session.client + ": " + std::to_string(kMaxRefusalsInARow) + " refused messages in a row");
                    break;
                }
                continue;
            }
            const Json& message = received->message;
            if (is(message, AgentMsg::Request)) {
                const auto seq = seq_of(message);
                std::optional<Json> reply;
                try {
                    reply = dispatch(session, parse_agent_request(message));
                } catch (const AgentRefusal& r) {
                    refuse(session, r.kind, r.message, seq.value_or(0));
                } catch (const Error& e) {
                    refuse(session, wire_error(e.kind()), e.what(), seq.value_or(0));
                }
                if (reply) {
                    (*reply)[agent_field::kSeq] = seq.value_or(0);
                    send_signed(session, msg_name(AgentMsg::Reply), std::move(*reply));
                }
            }
            // Silence counts from the end of the last message handled: a slow device change is not silence.
            session.ledger.heard(clock_.now());
        }
    } catch (const Error& e) {
        log("control connection from " + session.client + ": " + e.what());
    } catch (const std::exception& e) {
        log("control connection from " + session.client + ": " + e.what());
    } catch (...) {
        log("control connection from " + session.client + ": unknown exception");
    }
    // This runs on the server's control thread: whatever the end of the session throws stays here.
    guarded([&] { end_session(session); }, [&](const std::string& what) { log("ending the session of " + session.client + ": " + what); });
}

}  // namespace nm
