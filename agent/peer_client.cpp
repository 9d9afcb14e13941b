#include "agent/peer_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <set>
#include <stop_token>
#include <thread>

#include "agent/agent_protocol.hpp"
#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/base/thread_entry.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/message_auth.hpp"

namespace nm {
namespace {

// How long a request may wait for its reply.
constexpr auto kRequestTimeout = std::chrono::seconds(10);
// How often the reader looks at its stop token while nothing arrives.
constexpr auto kReaderPoll = std::chrono::milliseconds(200);
// Pause between two attempts to reach an agent that is coming back.
constexpr auto kReconnectPause = std::chrono::milliseconds(250);

Deadline earlier(Deadline a, Deadline b) { return std::min(a, b); }

// A field of a message from the agent, decoded; a missing or malformed field is an nm::Error, never a
// JSON exception escaping to the caller.
template <class T>
T field(const Json& message, const char* name, const std::string& what) {
    try {
        return codec::read<T>(message.at(name), name);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Failed, what + ": malformed \"" + name + "\" (" + e.what() + ")");
    } catch (const Error& e) {
        throw Error(ErrorKind::Failed, what + ": malformed \"" + name + "\" (" + e.what() + ")");
    }
}

}  // namespace

// One control connection: the handshake (in the constructor, on the caller's thread), then the reader and
// heartbeat threads until it is closed or destroyed.
class PeerControlClient::Connection {
public:
    Connection(const PeerClientOptions& options, std::string where, Deadline limit);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    const PeerCapabilities& capabilities() const { return caps_; }
    bool authenticated() const { return !session_key_.empty(); }
    bool alive() const {
        std::lock_guard lock(state_mutex_);
        return !failure_ && started_;
    }
    bool violated() const {
        std::lock_guard lock(state_mutex_);
        return violation_;
    }
    std::optional<Error> failure() const {
        std::lock_guard lock(state_mutex_);
        return failure_;
    }

    /// The agent's answer (a verified "reply" or "error") to `body`. Throws nm::Error when none comes:
    /// Closed when the connection is lost, Failed on a timeout (which closes the connection when
    /// `close_on_timeout`: the state of a change whose answer never came is unknown, and closing makes
    /// the agent restore).
    Json exchange(Json body, std::chrono::milliseconds timeout, bool close_on_timeout);

    /// True when the agent has reported every id in `ids` rolled back; waits until `deadline` for it.
    bool rolled_back(const std::vector<uint64_t>& ids, Deadline deadline);

    /// Ends the connection with `why` (the first reason wins); `violation`: the agent broke the protocol.
    void close(const Error& why, bool violation);

private:
    uint64_t send_numbered(AgentMsg type, Json body, Deadline deadline);
    void read_loop(std::stop_token stop);
    void heartbeat_loop(std::stop_token stop);
    void take(ReceivedMessage received);

    std::string where_;
    ControlChannel ch_;
    std::string session_key_;
    PeerCapabilities caps_;
    std::chrono::milliseconds heartbeat_timeout_{10000};

    std::mutex write_mutex_;  // held for one write: the sequence number and the bytes go out together
    uint64_t seq_ = 0;

    mutable std::mutex state_mutex_;
    std::condition_variable cv_;
    std::map<uint64_t, std::optional<Json>> waiting_;  // a request's seq -> its answer once it came
    std::set<uint64_t> rolled_back_;                   // change ids the agent reported reverted
    std::optional<Error> failure_;
    bool violation_ = false;
    bool started_ = false;

    uint64_t agent_seq_ = 0;  // the reader's: the agent's last message
    std::jthread reader_;
    std::jthread heartbeat_;
};

PeerControlClient::Connection::Connection(const PeerClientOptions& options, std::string where, Deadline limit)
    : where_(std::move(where)),
      ch_(connect_tcp(resolve_address(options.host, options.port), options.bind, 0, earlier(limit, deadline_in(kHandshakeTimeout)))) {
    const auto step = [&] { return earlier(limit, deadline_in(kHandshakeTimeout)); };
    const std::string who = "peer agent " + where_;
    try {
        const std::string client_nonce = random_hex(kNonceBytes);
        ch_.send(msg_name(AgentMsg::ControlHello), Json{{"client_nonce", client_nonce}}, step());
        const auto received = ch_.receive_text(step());
        if (!received) throw Error(ErrorKind::Failed, "timed out waiting for the peer agent's challenge from " + where_);
        const Json& challenge = received->message;
        if (is(challenge, Msg::Error)) throw error_from_message(challenge, who);
        if (!is(challenge, Msg::Challenge)) throw Error(ErrorKind::Failed, who + ": no settings control (is it an older nicmatrix serve?)");
        const auto protocol = challenge.contains("protocol") ? field<int>(challenge, "protocol", who + ": malformed challenge") : 0;
        if (protocol != kAgentProtocolVersion) {
            throw Error(ErrorKind::Failed, who + " speaks agent protocol " + std::to_string(protocol) + ", this nicmatrix speaks " +
                                               std::to_string(kAgentProtocolVersion) + " (run the same nicmatrix version on both machines)");
        }
        const auto nonce = challenge.at("nonce").get<std::string>();
        if (!is_hex(nonce, 2 * kNonceBytes)) throw Error(ErrorKind::Failed, who + ": malformed challenge (the nonce is not 64 hex digits)");
        caps_.control = challenge.at("control").get<bool>();
        caps_.interfaces = challenge.at("interfaces").get<std::vector<std::string>>();
        caps_.kinds = challenge.at("kinds").get<std::vector<std::string>>();
        caps_.unavailable = challenge.at("unavailable").get<std::map<std::string, std::string>>();
        caps_.why = challenge.at("why").get<std::string>();
        const auto hb = field<int64_t>(challenge, "heartbeat_timeout_ms", who + ": malformed challenge");
        if (hb < 100 || hb > int64_t{3600} * 1000)
            throw Error(ErrorKind::Failed, who + ": malformed challenge (heartbeat_timeout_ms " + std::to_string(hb) + ")");
        heartbeat_timeout_ = std::chrono::milliseconds(hb);
        const bool auth_required = challenge.at("auth_required").get<bool>();
        // The proofs cover the challenge's line as the agent sent it: this end checks the bytes it received.
        const std::string& transcript = received->text;
        if (options.key) {
            // No downgrade: a client holding a key talks only to an agent that proves it holds it too.
            if (!auth_required) {
                throw Error(ErrorKind::Refused, who +
                                                    " does not authenticate (it was started without --key-file, or it is not a nicmatrix "
                                                    "agent); a client holding a key uses only an agent that proves it holds the same key");
            }
            const std::string_view key = options.key->bytes();
            ch_.send(Msg::Auth, Json{{agent_field::kMac, handshake_proof(key, nonce, client_nonce, "client", transcript)}}, step());
            const Json welcome = ch_.expect(step(), "the peer agent's answer to the key");
            if (!is(welcome, AgentMsg::Welcome)) {
                throw Error(ErrorKind::Refused, who + " refused the key: " + welcome.value("message", std::string("?")));
            }
            const auto mac = welcome.find(agent_field::kMac);
            if (mac == welcome.end() || !mac->is_string() ||
                !macs_equal(mac->get_ref<const std::string&>(), handshake_proof(key, nonce, client_nonce, "agent", transcript))) {
                throw Error(ErrorKind::Refused, who + " could not prove it holds the key (or its challenge was changed on the way)");
            }
            session_key_ = session_key(key, nonce, client_nonce);
        } else if (auth_required) {
            caps_.control = false;
            caps_.why = "the agent requires a key and none was given (--key-file or NICMATRIX_KEY_FILE)";
            return;  // no session: the agent waits for a key that will not come
        } else {
            const Json welcome = ch_.expect(step(), "the peer agent's welcome");
            if (!is(welcome, AgentMsg::Welcome)) throw Error(ErrorKind::Failed, who + ": unexpected reply to control_hello");
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Failed, who + ": malformed challenge or welcome (" + e.what() + ")");
    }
    started_ = true;
    // Whatever a thread body throws ends this connection (the agent then restores its side), never the
    // process without its restore.
    const auto lost = [this](const char* thread) {
        return [this, thread](const std::string& what) {
            close(Error(ErrorKind::Failed, "peer agent " + where_ + ": the client's " + thread + " thread failed (" + what + ")"), false);
        };
    };
    reader_ = std::jthread([this, on_error = lost("reader")](std::stop_token stop) { guarded([&] { read_loop(stop); }, on_error); });
    heartbeat_ = std::jthread([this, on_error = lost("heartbeat")](std::stop_token stop) { guarded([&] { heartbeat_loop(stop); }, on_error); });
}

PeerControlClient::Connection::~Connection() {
    heartbeat_.request_stop();
    reader_.request_stop();
    ::shutdown(ch_.fd(), SHUT_RDWR);  // the agent sees the end at once and restores
    if (heartbeat_.joinable()) heartbeat_.join();
    if (reader_.joinable()) reader_.join();
    wipe(session_key_);
}

void PeerControlClient::Connection::close(const Error& why, bool violation) {
    {
        std::lock_guard lock(state_mutex_);
        if (failure_) return;
        failure_ = why;
        violation_ = violation;
    }
    cv_.notify_all();
    ::shutdown(ch_.fd(), SHUT_RDWR);
}

uint64_t PeerControlClient::Connection::send_numbered(AgentMsg type, Json body, Deadline deadline) {
    std::lock_guard lock(write_mutex_);
    const uint64_t seq = ++seq_;
    body[agent_field::kSeq] = seq;
    if (type == AgentMsg::Request) {
        std::lock_guard state(state_mutex_);
        waiting_[seq];
    }
    try {
        if (session_key_.empty()) ch_.send(msg_name(type), std::move(body), deadline);
        else ch_.send_signed(msg_name(type), std::move(body), session_key_, kClientToAgent, deadline);
    } catch (const Error& e) {
        const Error lost(ErrorKind::Closed, "peer agent " + where_ + ": control connection lost (" + e.what() + ")");
        close(lost, false);
        std::lock_guard state(state_mutex_);
        waiting_.erase(seq);
        throw lost;
    }
    return seq;
}

Json PeerControlClient::Connection::exchange(Json body, std::chrono::milliseconds timeout, bool close_on_timeout) {
    if (const auto f = failure()) throw *f;
    if (!started_) throw Error(ErrorKind::Refused, "peer agent " + where_ + ": no session (" + caps_.why + ")");
    const auto op = body.value(agent_field::kOp, std::string("?"));
    const auto deadline = deadline_in(timeout);
    const uint64_t seq = send_numbered(AgentMsg::Request, std::move(body), deadline);
    std::unique_lock lock(state_mutex_);
    cv_.wait_until(lock, deadline, [&] { return waiting_[seq].has_value() || failure_.has_value(); });
    std::optional<Json> answer = std::move(waiting_[seq]);
    waiting_.erase(seq);
    if (answer) return std::move(*answer);
    if (failure_) throw *failure_;
    lock.unlock();
    const Error late(ErrorKind::Failed, "peer agent " + where_ + ": no answer to " + op + " within " + std::to_string(timeout.count()) + " ms");
    if (close_on_timeout) close(late, false);
    throw late;
}

bool PeerControlClient::Connection::rolled_back(const std::vector<uint64_t>& ids, Deadline deadline) {
    std::unique_lock lock(state_mutex_);
    const auto all = [&] { return std::all_of(ids.begin(), ids.end(), [&](uint64_t id) { return rolled_back_.count(id) > 0; }); };
    cv_.wait_until(lock, deadline, [&] { return all() || failure_.has_value(); });
    return !ids.empty() && all();
}

void PeerControlClient::Connection::read_loop(std::stop_token stop) {
    while (!stop.stop_requested()) {
        std::optional<ReceivedMessage> message;
        try {
            message = ch_.receive_text(deadline_in(kReaderPoll));
        } catch (const Error& e) {
            close(Error(ErrorKind::Closed, "peer agent " + where_ + ": control connection lost (" + e.what() + ")"), false);
            return;
        }
        if (!message) continue;
        try {
            take(std::move(*message));
        } catch (const Error& e) {
            close(e, true);
            return;
        } catch (const nlohmann::json::exception& e) {
            close(Error(ErrorKind::Failed, "peer agent " + where_ + ": malformed message (" + e.what() + ")"), true);
            return;
        }
    }
}

// One message from the agent, checked and handed to whoever waits for it. Throws nm::Error for a message
// that breaks the protocol.
void PeerControlClient::Connection::take(ReceivedMessage received) {
    const std::string who = "peer agent " + where_;
    Json message = std::move(received.message);
    if (!session_key_.empty()) {
        if (!verify_text(received.text, session_key_, kAgentToClient)) {
            throw Error(ErrorKind::Failed, who + " sent a message with a bad MAC (altered on the way, or not from the agent)");
        }
        const auto aseq = message.find(agent_field::kAgentSeq);
        if (aseq == message.end() || !aseq->is_number_unsigned() || aseq->get<uint64_t>() != agent_seq_ + 1) {
            throw Error(ErrorKind::Failed, who + " sent a message out of sequence (a message was dropped, replayed or reordered on the way)");
        }
        agent_seq_ = aseq->get<uint64_t>();
    }
    if (is(message, AgentMsg::RolledBack)) {
        const auto ids = field<std::vector<uint64_t>>(message, agent_field::kChanges, who + ": rolled_back");
        {
            std::lock_guard lock(state_mutex_);
            rolled_back_.insert(ids.begin(), ids.end());
        }
        cv_.notify_all();
        return;
    }
    const bool error = is(message, Msg::Error);
    if (!error && !is(message, AgentMsg::Reply))
        throw Error(ErrorKind::Failed, who + " sent an unexpected " + message.value("type", std::string("?")));
    const auto seq = message.find(agent_field::kSeq);
    if (seq == message.end()) {
        // The agent refused something it could not attribute to a request: the session is out of step.
        if (error) {
            close(error_from_message(message, who), false);
            return;
        }
        throw Error(ErrorKind::Failed, who + " sent a reply without a sequence number");
    }
    if (!seq->is_number_unsigned()) throw Error(ErrorKind::Failed, who + " sent a reply with a malformed sequence number");
    {
        std::lock_guard lock(state_mutex_);
        const auto it = waiting_.find(seq->get<uint64_t>());
        if (it == waiting_.end() || it->second) return;  // the answer to a request that gave up waiting
        it->second = std::move(message);
    }
    cv_.notify_all();
}

void PeerControlClient::Connection::heartbeat_loop(std::stop_token stop) {
    const auto period = std::max(std::chrono::milliseconds(50), heartbeat_timeout_ / 4);
    std::mutex m;
    std::condition_variable_any cv;
    for (;;) {
        {
            std::unique_lock lock(m);
            if (cv.wait_for(lock, stop, period, [] { return false; }) || stop.stop_requested()) return;
        }
        if (failure()) return;
        try {
            send_numbered(AgentMsg::Heartbeat, Json::object(), deadline_in(kNoticeTimeout));
        } catch (const Error&) {
            return;  // send_numbered closed the connection; the next request reports it
        }
    }
}

PeerControlClient::PeerControlClient(PeerClientOptions options) : options_(std::move(options)) {
    conn_ = std::make_shared<Connection>(options_, where(), deadline_in(kHandshakeTimeout));
    caps_ = conn_->capabilities();
}

PeerControlClient::~PeerControlClient() = default;

std::string PeerControlClient::where() const { return options_.host + ":" + std::to_string(options_.port); }

std::shared_ptr<PeerControlClient::Connection> PeerControlClient::connection() const {
    std::lock_guard lock(mutex_);
    if (!conn_) throw Error(ErrorKind::Closed, "peer agent " + where() + ": not connected");
    return conn_;
}

bool PeerControlClient::authenticated() const { return connection()->authenticated(); }

void PeerControlClient::require_control(const std::string& ifname) const {
    if (!caps_.control) throw usage_error("peer agent " + where() + " changes no settings: " + caps_.why);
    if (std::find(caps_.interfaces.begin(), caps_.interfaces.end(), ifname) == caps_.interfaces.end()) {
        std::string list;
        for (const auto& i : caps_.interfaces) list += (list.empty() ? "" : ", ") + i;
        throw usage_error("peer agent " + where() + " does not allow changes on " + ifname + " (it allows " + list + ")");
    }
}

Json PeerControlClient::request(Json body, std::chrono::milliseconds timeout) {
    const auto op = op_from_name(body.value(agent_field::kOp, std::string()));
    // Only a change whose answer never came leaves the peer in an unknown state.
    const bool changes = op && takes_control(*op);
    Json answer = connection()->exchange(std::move(body), timeout, changes);
    if (is(answer, Msg::Error)) throw error_from_message(answer, "peer agent " + where());
    return answer;
}

LinkState PeerControlClient::read(std::string_view ifname) {
    const Json reply = request(Json{{agent_field::kOp, op_name(AgentOp::Read)}, {agent_field::kIfname, ifname}}, kRequestTimeout);
    return field<LinkState>(reply, agent_field::kState, "peer agent " + where() + ": reply to read");
}

std::optional<InterfaceSystem> PeerControlClient::describe(std::string_view ifname) {
    try {
        const Json reply = request(Json{{agent_field::kOp, op_name(AgentOp::Describe)}, {agent_field::kIfname, ifname}}, kRequestTimeout);
        const auto it = reply.find(agent_field::kSystem);
        if (it == reply.end() || it->is_null()) return std::nullopt;
        return it->get<InterfaceSystem>();
    } catch (const Error&) {
        return std::nullopt;
    } catch (const Json::exception&) {
        return std::nullopt;
    }
}

HostInfo PeerControlClient::host_info(std::string_view ifname) {
    const Json reply = request(Json{{agent_field::kOp, op_name(AgentOp::Describe)}, {agent_field::kIfname, ifname}}, kRequestTimeout);
    return field<HostInfo>(reply, agent_field::kHost, "peer agent " + where() + ": reply to describe");
}

std::string PeerControlClient::unsupported(std::string_view ifname, const LinkSettings& wanted) {
    if (wanted.tuning.empty()) return {};
    const Json reply = request(
        Json{{agent_field::kOp, op_name(AgentOp::Unsupported)}, {agent_field::kIfname, ifname}, {agent_field::kSettings, wanted}}, kRequestTimeout);
    const auto why = field<std::string>(reply, agent_field::kWhy, "peer agent " + where() + ": reply to unsupported");
    return why.empty() ? why : "peer " + where() + ": " + why;
}

void PeerControlClient::validate(std::string_view ifname, const LinkSettings& wanted) {
    request(Json{{agent_field::kOp, op_name(AgentOp::Validate)}, {agent_field::kIfname, ifname}, {agent_field::kSettings, wanted}}, kRequestTimeout);
}

ApplyReport PeerControlClient::apply(std::string_view ifname, const LinkSettings& wanted) {
    const auto conn = connection();
    const Json reply = request(Json{{agent_field::kOp, op_name(AgentOp::Apply)},
                                    {agent_field::kIfname, ifname},
                                    {agent_field::kSettings, wanted},
                                    {agent_field::kConfirmMs, options_.confirm_window.count()},
                                    {agent_field::kLinkWaitMs, options_.link_wait.count()}},
                               // The agent waits for its link (and, when it does not come back, once more after
                               // taking the change back) before it answers.
                               kRequestTimeout + 2 * options_.link_wait);
    try {
        const auto id = field<uint64_t>(reply, agent_field::kChange, "peer agent " + where() + ": reply to apply");
        ApplyReport report = field<ApplyReport>(reply, agent_field::kReport, "peer agent " + where() + ": reply to apply");
        if (id == 0 && !(report.link && !report.link->back)) {
            throw Error(ErrorKind::Failed, "peer agent " + where() + ": reply to apply: change id 0");
        }
        // Change 0: the agent took it back already (its link did not come back); nothing to confirm.
        if (id != 0) unconfirmed_.push_back(id);
        return report;
    } catch (const Error& e) {
        // A signed reply that does not decode: the agent is not one this client understands.
        conn->close(e, true);
        throw;
    }
}

bool PeerControlClient::ping(std::chrono::milliseconds timeout) {
    try {
        request(Json{{agent_field::kOp, op_name(AgentOp::Ping)}}, timeout);
        return true;
    } catch (const Error&) {
        return false;
    }
}

ConfirmedEnd::Confirmation PeerControlClient::confirm() {
    if (unconfirmed_.empty()) return Confirmation::Confirmed;
    const auto conn = connection();
    // A rollback notice that came first settles it without asking.
    if (conn->rolled_back(unconfirmed_, std::chrono::steady_clock::now())) {
        unconfirmed_.clear();
        return Confirmation::RolledBack;
    }
    const uint64_t id = unconfirmed_.back();
    const Json answer = conn->exchange(Json{{agent_field::kOp, op_name(AgentOp::Confirm)}, {agent_field::kChange, id}}, kRequestTimeout, true);
    if (is(answer, Msg::Error)) {
        if (wire_error_of(answer) == WireError::Expired) {
            unconfirmed_.clear();
            return Confirmation::RolledBack;
        }
        throw error_from_message(answer, "peer agent " + where());
    }
    unconfirmed_.clear();
    return Confirmation::Confirmed;
}

bool PeerControlClient::await_rollback(std::chrono::milliseconds timeout) {
    const bool reverted = connection()->rolled_back(unconfirmed_, deadline_in(timeout));
    unconfirmed_.clear();
    return reverted;
}

std::vector<ApplyReport> PeerControlClient::restore() {
    const Json reply = request(Json{{agent_field::kOp, op_name(AgentOp::Restore)}}, kRequestTimeout);
    unconfirmed_.clear();
    return field<std::vector<ApplyReport>>(reply, agent_field::kReports, "peer agent " + where() + ": reply to restore");
}

bool PeerControlClient::connected() const {
    std::lock_guard lock(mutex_);
    return conn_ && conn_->alive();
}

void PeerControlClient::reconnect(std::chrono::milliseconds within) {
    std::shared_ptr<Connection> old;
    {
        std::lock_guard lock(mutex_);
        old = std::move(conn_);
    }
    if (old && old->violated()) {
        throw Error(ErrorKind::Failed, "not reconnecting to peer agent " + where() + ": " + std::string(old->failure()->what()));
    }
    old.reset();  // closes it: the agent restores everything when its controller goes away
    unconfirmed_.clear();
    const auto deadline = deadline_in(within);
    std::string last = "no attempt";
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            auto conn = std::make_shared<Connection>(options_, where(), deadline);
            if (!conn->capabilities().control)
                throw Error(ErrorKind::Refused, "peer agent " + where() + " came back without settings control: " + conn->capabilities().why);
            // Take control and put the peer at its originals. The old session may hold control until the
            // agent notices it is gone (at once after a reset, after its heartbeat timeout otherwise).
            for (;;) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
                const Json answer = conn->exchange(Json{{agent_field::kOp, op_name(AgentOp::Restore)}},
                                                   std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(kRequestTimeout)), true);
                if (!is(answer, Msg::Error)) break;
                if (wire_error_of(answer) != WireError::Busy || std::chrono::steady_clock::now() + kReconnectPause >= deadline) {
                    throw error_from_message(answer, "peer agent " + where());
                }
                std::this_thread::sleep_for(kReconnectPause);
            }
            caps_ = conn->capabilities();
            std::lock_guard lock(mutex_);
            conn_ = std::move(conn);
            return;
        } catch (const Error& e) {
            last = e.what();
            if (e.kind() == ErrorKind::Refused || e.kind() == ErrorKind::Usage) break;  // a key or a setup problem: retrying will not help
        }
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::milliseconds(0)) break;
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kReconnectPause));
    }
    throw Error(ErrorKind::Failed, "peer agent " + where() + " did not come back within " +
                                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(within).count()) + " s (" + last + ")");
}

}  // namespace nm
