#include "core/session/traffic_server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "core/base/error.hpp"
#include "core/base/json_integer.hpp"
#include "core/base/thread_entry.hpp"
#include "core/control/message_auth.hpp"
#include "core/control/test_auth.hpp"
#include "core/engine/end_profiler.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/host/proc_stats.hpp"
#include "core/host/socket_options.hpp"
#include "core/profile/categories.hpp"
#include "core/rr/rr_setup.hpp"
#include "core/session/stream_setup.hpp"
#include "core/session/traffic_session.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {

using SteadyTime = std::chrono::steady_clock;

namespace {

constexpr int kLogLinesPerSecond = 20;
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
constexpr int kAcceptsPerTurn = 64;
constexpr auto kTurn = std::chrono::milliseconds(50);  // how often the loop looks at its stop token

UniqueFd open_reserve() { return UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)); }

// Waits for a message by `deadline`, giving up early when `stop` is requested (nullopt either way).
std::optional<Json> receive_or_stop(ControlChannel& ch, Deadline deadline, std::stop_token stop) {
    for (;;) {
        const auto now = SteadyTime::now();
        if (stop.stop_requested() || now >= deadline) return std::nullopt;
        if (auto msg = ch.receive(std::min(deadline, now + kTurn))) return msg;
    }
}

// True when the client's hello says it runs on this host (the same boot id): its own sampler then covers both
// ends and this server samples nothing.
bool client_on_this_host(const Json& hello) {
    const std::string host_id = host_boot_id();
    const auto client_host = hello.find("host_id");
    return !host_id.empty() && client_host != hello.end() && client_host->is_string() && client_host->get<std::string>() == host_id;
}

// Profiling: this host is sampled unless it is the client's (`same_host`), whose sampler then covers both
// ends; with the client's category table when it sent one. Throws nm::Error when the host or the table
// does not allow it.
void arm_profiler(std::optional<EndProfiler>& profiler, const TestSpec& spec, const Json& hello, bool same_host) {
    if (!spec.profile || same_host) return;
    CategoryTable table = profile::builtin_category_table();
    if (const auto it = hello.find("profile_table"); it != hello.end() && it->is_object()) {
        table = parse_category_table(it->at("table"));
        const auto source = it->find("source");
        table.source = source != it->end() && source->is_string() ? source->get<std::string>() : std::string("the client's table");
    }
    profiler.emplace(spec.profile_hz, std::move(table));
}

}  // namespace

/// A connection that has not yet shown what it is: nothing read, a data header under way, or a control
/// channel waiting for its first message (or, with a key, for the test's authentication).
struct TrafficServer::Pending {
    enum class Stage { Unknown, Data, First, Auth };

    uint64_t id = 0;  ///< arrival order: the oldest is closed first at a cap
    SocketAddress peer;
    std::string source;  ///< the peer's address, for log lines and the data connections' check
    std::string group;   ///< what the per-source caps count (source_group(): an IPv6 source's /64)
    SteadyTime::time_point deadline;
    Stage stage = Stage::Unknown;
    UniqueFd fd;  ///< until it is known to be a control connection
    std::array<unsigned char, DataHeader::kSize> header{};
    size_t header_bytes = 0;
    std::optional<ControlChannel> channel;
};

TrafficServer::TrafficServer(ServerOptions options) : options_(std::move(options)), cores_(engine_cores()) {
    listener_ = listen_tcp(options_.bind, options_.port);
    port_ = local_address(listener_.get()).port();
    set_nonblocking(listener_.get(), true);
    reserve_fd_ = open_reserve();
    ready_promise_.set_value(port_);
    ready_ = ready_promise_.get_future().share();
}

TrafficServer::~TrafficServer() { stop_all(); }

void TrafficServer::stop_all() {
    for (auto* list : {&controls_, &sessions_}) {
        for (auto& w : *list) w.thread.request_stop();
        list->clear();  // jthread: joins
    }
    pending_.clear();
}

void TrafficServer::refuse(const std::string& line) {
    if (!options_.on_refused) return;
    const auto now = SteadyTime::now();
    if (now - log_second_ >= std::chrono::seconds(1)) {
        if (suppressed_logs_ > 0) {
            options_.on_refused("... and " + std::to_string(suppressed_logs_) + " more refused or closed connections not logged");
        }
        log_second_ = now;
        logged_this_second_ = 0;
        suppressed_logs_ = 0;
    }
    if (logged_this_second_ < kLogLinesPerSecond) {
        ++logged_this_second_;
        options_.on_refused(line);
    } else {
        ++suppressed_logs_;
    }
}

void TrafficServer::reap() {
    for (auto* list : {&controls_, &sessions_}) {
        // A finished thread has returned from its work; joining it only waits for its exit.
        std::erase_if(*list, [](const Worker& w) { return w.done->load(); });
    }
}

void TrafficServer::serve(std::stop_token stop) {
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (options_.once && sessions_done_ > 0 && !session_active_) break;
        }
        if (stop.stop_requested()) break;
        reap();
        auto now = SteadyTime::now();
        const bool accepting = now >= accept_paused_until_;
        std::vector<pollfd> fds;
        fds.push_back(pollfd{accepting ? listener_.get() : -1, POLLIN, 0});
        auto wake = now + kTurn;
        if (!accepting) wake = std::min(wake, accept_paused_until_);
        for (const auto& p : pending_) {
            fds.push_back(pollfd{p->channel ? p->channel->fd() : p->fd.get(), POLLIN, 0});
            wake = std::min(wake, p->deadline);
        }
        const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
        const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(wait_ms + 1, 0, 1000)));
        if (rc < 0 && errno != EINTR) throw system_error("poll on listener", errno);
        now = SteadyTime::now();
        // Connections first (those that were readable), then expiries, then new arrivals.
        std::vector<uint64_t> finished;
        for (size_t i = 1; i < fds.size(); ++i) {
            if (rc <= 0 || fds[i].revents == 0) continue;
            Pending& p = *pending_[i - 1];
            if (step(p, stop)) finished.push_back(p.id);
        }
        for (const auto& p : pending_) {
            if (now >= p->deadline && std::find(finished.begin(), finished.end(), p->id) == finished.end()) {
                refuse("closed " + p->source + ": no complete first message within " + std::to_string(options_.limits.handshake_timeout.count()) +
                       " ms");
                finished.push_back(p->id);
            }
        }
        std::erase_if(pending_, [&](const auto& p) { return std::find(finished.begin(), finished.end(), p->id) != finished.end(); });
        if (rc > 0 && accepting && (fds[0].revents & POLLIN) != 0) accept_ready(now, stop);
    }
    stop_all();
}

bool TrafficServer::step(Pending& p, std::stop_token stop) {
    try {
        return advance(p, stop);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Closed) {  // one that just went away is not worth a line
            refuse("refused " + p.source + ": " + e.what());
            if (p.channel) send_error(*p.channel, wire_error(e.kind()), e.what());
        }
    } catch (const std::exception& e) {
        refuse("refused " + p.source + ": " + e.what());
    }
    return true;
}

void TrafficServer::accept_ready(SteadyTime::time_point now, std::stop_token stop) {
    for (int n = 0; n < kAcceptsPerTurn; ++n) {
        SocketAddress peer;
        peer.len = sizeof peer.storage;
        UniqueFd fd(::accept4(listener_.get(), peer.get(), &peer.len, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (fd) {
            admit(std::move(fd), peer, now, stop);
            continue;
        }
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
        if ((err == EMFILE || err == ENFILE) && make_room_for_descriptor()) continue;
        // Out of descriptors with nothing to close, or out of memory: the listener stays readable, so
        // polling it again at once would spin. Pause accepting for a moment instead.
        accept_paused_until_ = now + kAcceptBackoff;
        refuse(std::string("accept: ") + std::strerror(err) + "; not accepting for " + std::to_string(kAcceptBackoff.count()) + " ms");
        return;
    }
}

bool TrafficServer::make_room_for_descriptor() {
    if (!pending_.empty()) {
        // The oldest unclassified connection has had the longest to say what it is.
        refuse("closed " + pending_.front()->source + ": out of file descriptors, the oldest unfinished connection goes");
        pending_.erase(pending_.begin());
        return true;
    }
    if (reserve_fd_) {
        // Nothing of ours to close: free the reserve, take the waiting connection off the queue and close
        // it, so the kernel's backlog does not keep the listener readable for ever.
        reserve_fd_.reset();
        UniqueFd drop(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        reserve_fd_ = open_reserve();
        refuse("closed a new connection: out of file descriptors");
    }
    return false;
}

void TrafficServer::admit(UniqueFd fd, const SocketAddress& peer, SteadyTime::time_point now, std::stop_token stop) {
    const std::string source = peer.host();
    if (!allowed_by(options_.limits.allow_from, peer)) {
        refuse("refused " + source + ": not in --allow-from");
        return;
    }
    const auto& limits = options_.limits;
    auto p = std::make_unique<Pending>();
    p->id = next_pending_id_++;
    p->peer = peer;
    p->source = source;
    p->group = source_group(peer, limits.ipv6_source_prefix);
    p->deadline = now + limits.handshake_timeout;
    p->fd = std::move(fd);
    // A real client's first bytes are usually here already (a data connection's header follows its
    // connect at once): classify it now, and only what is left unfinished counts against the caps.
    if (step(*p, stop)) return;
    const auto from_group = [&](const std::string& g) {
        return static_cast<uint32_t>(std::count_if(pending_.begin(), pending_.end(), [&](const auto& q) { return q->group == g; }));
    };
    // At a cap the oldest unclassified connection goes, not the new one: a real client sends its first
    // message within a round trip, so the oldest is the one most likely to be idle. Those that have
    // spoken meanwhile are classified first, so only silent ones are closed.
    const auto make_room = [&](const std::string& g) {
        std::vector<uint64_t> done;
        for (const auto& q : pending_) {
            if (q->group == g && step(*q, stop)) done.push_back(q->id);
        }
        std::erase_if(pending_, [&](const auto& q) { return std::find(done.begin(), done.end(), q->id) != done.end(); });
        if (!done.empty()) return;
        const auto oldest = std::find_if(pending_.begin(), pending_.end(), [&](const auto& q) { return q->group == g; });
        if (oldest == pending_.end()) return;
        refuse("closed " + (*oldest)->source + ": too many unfinished connections (at most " + std::to_string(limits.max_handshakes_per_source) +
               " per source, " + std::to_string(limits.max_handshakes) + " in all); the oldest goes");
        pending_.erase(oldest);
    };
    if (from_group(p->group) >= std::max(1u, limits.max_handshakes_per_source)) {
        make_room(p->group);
    } else if (pending_.size() >= std::max(1u, limits.max_handshakes)) {
        // The source holding the most goes first; between sources holding as many, the one whose
        // connection is oldest (pending_ is in arrival order), so no address wins a tie by how it sorts.
        std::map<std::string, uint32_t> counts;
        uint32_t most = 0;
        for (const auto& q : pending_) most = std::max(most, ++counts[q->group]);
        const auto first = std::find_if(pending_.begin(), pending_.end(), [&](const auto& q) { return counts[q->group] == most; });
        make_room((*first)->group);
    }
    pending_.push_back(std::move(p));
}

bool TrafficServer::advance(Pending& p, std::stop_token stop) {
    if (p.stage == Pending::Stage::Unknown) {
        // The first byte tells a data connection ("NMD1...") from a control connection ("{...").
        char first = 0;
        const ssize_t n = ::recv(p.fd.get(), &first, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0) return true;
        if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        if (first == DataHeader::kMagic[0]) {
            p.stage = Pending::Stage::Data;
        } else {
            p.stage = Pending::Stage::First;
            p.channel.emplace(std::move(p.fd));
        }
    }
    if (p.stage == Pending::Stage::Data) {
        // Exactly the header: the test's data follows only after "start".
        const ssize_t n = ::recv(p.fd.get(), p.header.data() + p.header_bytes, p.header.size() - p.header_bytes, MSG_DONTWAIT);
        if (n == 0) return true;
        if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        p.header_bytes += static_cast<size_t>(n);
        if (p.header_bytes < p.header.size()) return false;
        const auto header = DataHeader::decode(p.header);
        if (!header || !offer_data(header->cookie, header->id, p.source, std::move(p.fd))) {
            refuse("closed " + p.source + ": a data connection no running test expects");
        }
        return true;
    }
    // A control channel: take a whole message if one is there (never waits: the deadline is now).
    std::optional<Json> msg;
    try {
        msg = p.channel->receive(SteadyTime::now());
    } catch (const Error& e) {
        if (p.stage != Pending::Stage::Auth || e.kind() == ErrorKind::Closed) throw;
        send_error(*p.channel, WireError::Auth, "authentication failed: the client does not hold this server's key");
        refuse("refused " + p.source + ": a test with the wrong key (" + e.what() + ")");
        return true;
    }
    if (!msg) return false;
    if (p.stage == Pending::Stage::First) return on_first_message(p, std::move(*msg), stop);
    // Stage Auth: the channel has already checked the MAC and sequence number.
    if (!is(*msg, Msg::Auth) || !msg->contains("spec")) {
        send_error(*p.channel, WireError::Protocol, "expected auth {spec}");
        refuse("refused " + p.source + ": expected auth after the challenge");
        return true;
    }
    start_test(p, *msg, stop);
    return true;
}

bool TrafficServer::on_first_message(Pending& p, Json message, std::stop_token stop) {
    if (!is(message, Msg::Hello)) {
        start_control(p, std::move(message), stop);
        return true;
    }
    if (options_.key.empty()) {
        if (!message.contains("spec")) throw usage_error("hello: no \"spec\"");
        start_test(p, message, stop);
        return true;
    }
    const auto cn = message.find("client_nonce");
    if (cn == message.end() || !cn->is_string() || !is_hex(cn->get_ref<const std::string&>(), 2 * kNonceBytes)) {
        send_error(*p.channel, WireError::Auth,
                   "this server requires the key for tests (it runs with --key-file): run with --key-file (or NICMATRIX_KEY_FILE)");
        refuse("refused " + p.source + ": a test without the key");
        return true;
    }
    const std::string nonce = random_hex(kNonceBytes);
    p.channel->send(Msg::Challenge, Json{{"nonce", nonce}}, deadline_in(kNoticeTimeout));
    p.channel->sign_with(test_channel_keys(options_.key, nonce, cn->get<std::string>(), TestRole::Server));
    p.stage = Pending::Stage::Auth;
    return false;
}

void TrafficServer::start_test(Pending& p, const Json& opening, std::stop_token stop) {
    ControlChannel& ch = *p.channel;
    TestSpec spec;
    try {
        spec = resolve_spec(opening.at("spec").get<TestSpec>(), cores_, udp_path_of(ch.fd()));
        check_cpus(spec.server_cpus, online_cpus(), "server");
    } catch (const Error& e) {
        send_error(ch, WireError::Usage, e.what());
        refuse("refused " + p.source + ": " + e.what());
        return;
    } catch (const Json::exception& e) {
        send_error(ch, WireError::Usage, std::string("bad spec: ") + e.what());
        refuse("refused " + p.source + ": bad spec");
        return;
    }
    if (const auto over = over_server_limits(spec, options_.limits, cores_)) {
        send_error(ch, WireError::Limit, *over);
        refuse("refused " + p.source + ": " + *over);
        return;
    }
    // A profile of this host tells what runs on it: only for a client that proved it holds the key, or any
    // client when the operator said so.
    if (spec.profile && options_.key.empty() && !options_.allow_profile && !client_on_this_host(opening)) {
        send_error(ch, WireError::Refused,
                   "--profile: this server profiles its host only for a client holding its key (serve --key-file) or when started "
                   "with --allow-profile");
        refuse("refused " + p.source + ": --profile without the key (serve --allow-profile allows it)");
        return;
    }
    {
        std::lock_guard lock(mutex_);
        if (session_active_) {
            send_error(ch, WireError::Busy, "server busy: a test is running; try again when it has ended");
            return;
        }
        session_active_ = true;
        cookie_ = 0;
        expected_streams_ = 0;
        session_client_ = p.source;
        pending_data_.clear();
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    // The session frees the server before it sends its result, so a client that starts its next test right
    // after reading the result is never told "busy"; the thread's tail must not free it twice (a new session
    // may own the flag by then).
    auto release = [this, released = std::make_shared<bool>(false)](bool ran) {
        if (*released) return;
        std::lock_guard lock(mutex_);
        session_active_ = false;
        pending_data_.clear();
        if (ran) ++sessions_done_;  // a test that never started (a client's probe, an error) does not end --once
        *released = true;
    };
    // Held by a pointer, so the channel is still here to say why when the thread cannot be started.
    auto channel = std::make_shared<ControlChannel>(std::move(ch));
    try {
        sessions_.push_back(
            Worker{done, p.group, std::jthread([this, done, release, channel, spec, opening, client = p.peer, outer = stop](std::stop_token own) {
                       // Either the server stopping or the session being cancelled ends the test.
                       std::stop_source both;
                       std::stop_callback a(outer, [&] { both.request_stop(); });
                       std::stop_callback b(own, [&] { both.request_stop(); });
                       // A catch-all at the thread's entry: an exception leaving it would terminate
                       // the server (and the agent's restores with it).
                       guarded([&] { run_session(std::move(*channel), spec, opening, client, both.get_token(), release); },
                               [&](const std::string& what) {
                                   if (options_.on_refused) options_.on_refused("test session of " + client.host() + " failed: " + what);
                               });
                       release(false);
                       done->store(true);
                   })});
    } catch (const std::system_error& e) {
        {
            std::lock_guard lock(mutex_);
            session_active_ = false;  // no test ran
        }
        refuse("refused " + p.source + ": cannot start a session thread: " + e.what());
        send_error(*channel, WireError::Failed, "the server cannot start a thread for the test");
    }
}

void TrafficServer::start_control(Pending& p, Json first, std::stop_token stop) {
    if (options_.control == nullptr) {
        send_error(*p.channel, WireError::Protocol, "expected hello");
        const auto type = first.find("type");
        // JSON-escaped (dump), so a client's text cannot forge log lines.
        refuse("refused " + p.source + ": unexpected first message " + (type != first.end() ? type->dump() : std::string("?")));
        return;
    }
    const auto& limits = options_.limits;
    const auto from_source =
        static_cast<uint32_t>(std::count_if(controls_.begin(), controls_.end(), [&](const Worker& w) { return w.group == p.group; }));
    if (controls_.size() >= limits.max_control || from_source >= limits.max_control_per_source) {
        const std::string why = "too many settings-control connections (at most " + std::to_string(limits.max_control_per_source) + " per source, " +
                                std::to_string(limits.max_control) + " in all; serve --max-control-per-source, --max-control)";
        send_error(*p.channel, WireError::Limit, why);
        refuse("refused " + p.source + ": " + why);
        return;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto channel = std::make_shared<ControlChannel>(std::move(*p.channel));
    auto message = std::make_shared<Json>(std::move(first));
    try {
        controls_.push_back(Worker{done, p.group, std::jthread([this, done, channel, message, outer = stop](std::stop_token own) {
                                       std::stop_source both;
                                       std::stop_callback a(outer, [&] { both.request_stop(); });
                                       std::stop_callback b(own, [&] { both.request_stop(); });
                                       guarded([&] { options_.control->serve_control(std::move(*channel), std::move(*message), both.get_token()); },
                                               [&](const std::string& what) {
                                                   if (options_.on_refused) options_.on_refused("settings-control connection failed: " + what);
                                               });
                                       done->store(true);
                                   })});
    } catch (const std::system_error& e) {
        refuse("refused " + p.source + ": cannot start a control thread: " + e.what());
        send_error(*channel, WireError::Failed, "the server cannot start a thread for this connection");
    }
}

bool TrafficServer::offer_data(uint32_t cookie, uint32_t id, const std::string& source, UniqueFd fd) {
    std::lock_guard lock(mutex_);
    if (!session_active_ || cookie != cookie_ || id >= expected_streams_ || source != session_client_) return false;
    if (std::any_of(pending_data_.begin(), pending_data_.end(), [id](const DataStream& s) { return s.id == id; })) return false;
    pending_data_.push_back(DataStream{std::move(fd), id});
    data_arrived_.notify_all();
    return true;
}

std::optional<std::vector<DataStream>> TrafficServer::take_data_connections(ControlChannel& ch, std::stop_token stop) {
    std::unique_lock lock(mutex_);
    const bool all = data_arrived_.wait_for(lock, stop, kHandshakeTimeout, [&] { return pending_data_.size() == expected_streams_; });
    if (!all) {
        const auto got = pending_data_.size();
        lock.unlock();
        if (!stop.stop_requested()) {
            send_error(ch, WireError::Failed,
                       std::to_string(got) + " of " + std::to_string(expected_streams_) + " data connections arrived within " +
                           std::to_string(kHandshakeTimeout.count()) + " s");
        }
        return std::nullopt;
    }
    std::vector<DataStream> streams = std::move(pending_data_);
    pending_data_.clear();
    cookie_ = 0;
    return streams;
}

void TrafficServer::run_session(ControlChannel ch, TestSpec spec, const Json& hello, SocketAddress client_address, std::stop_token stop,
                                const std::function<void(bool)>& release) {
    const std::string client = client_address.host();
    try {
        const bool udp = spec.protocol == Protocol::Udp;
        const bool rr = spec.pattern != TrafficPattern::Stream;
        const SocketAddress local = local_address(ch.fd());
        // The server's data flows to the client; its streams are set up as the client sets up its own
        // (core/session/stream_setup.hpp).
        EndStreams streams(spec, End::Server, local, client_address);
        const bool same_host = client_on_this_host(hello);
        std::optional<EndProfiler> profiler;
        try {
            if (!udp && (rr || streams.layout().sends(End::Server))) check_congestion(spec.socket.congestion);
            arm_profiler(profiler, spec, hello, same_host);
        } catch (const Error& e) {
            send_error(ch, e);
            return;
        }

        const uint32_t cookie = std::random_device{}();
        EnginePlan plan = streams.plan(iface_for_address(local.host()), cookie);
        const uint16_t udp_port = streams.open_udp_receivers(plan, port_);
        uint16_t rr_port = 0;
        if (spec.pattern == TrafficPattern::Crr) plan.recv_groups = make_crr_listeners(local, spec.threads, rr_port);
        {
            std::lock_guard lock(mutex_);
            cookie_ = cookie;
            expected_streams_ = streams.layout().data_connections();
        }
        ch.send(Msg::Ready, Json{{"cookie", cookie}, {"udp_port", udp_port}, {"rr_port", rr_port}, {"spec", spec}, {"host_id", host_boot_id()}},
                deadline_in(kHandshakeTimeout));
        const auto start = receive_or_stop(ch, deadline_in(kHandshakeTimeout), stop);
        if (!start || !is(*start, Msg::Start)) return;  // the client gave up (abort, a closed connection) or we stop

        if (!udp) {
            auto tcp_streams = take_data_connections(ch, stop);
            if (!tcp_streams) return;
            for (auto& s : *tcp_streams) {
                streams.prepare_tcp(s.fd.get(), s.id);
                streams.add_tcp(std::move(s));
            }
        }
        if (udp && streams.layout().sends(End::Server)) streams.open_udp_senders(checked_integer_field<uint16_t>(*start, "udp_port"));
        streams.place(plan);

        EndEngine engine(std::move(plan), profiler ? &*profiler : nullptr);
        const Timeline tl = make_timeline(spec, SteadyTime::now());
        // A byte count has no end of its own: it ends at the server's limit.
        LoopLimit limit;
        if (spec.bytes > 0) {
            limit.at = tl.start + options_.limits.max_duration;
            limit.why = "the server ended the test at its limit of " + std::to_string(options_.limits.max_duration.count()) +
                        " s per test (raise with serve --max-duration)";
        }
        engine.start(tl);
        ch.send(Msg::Started, Json::object(), deadline_in(kHandshakeTimeout));
        const LoopOutcome outcome = run_end_loop(ch, engine, spec, tl, streams.receives(), stop, limit);
        EndReport report = engine.finish(outcome.status, outcome.error);
        report.profile_shared = spec.profile && same_host;
        if (profiler) report.measurement.profile = profiler->finish(report.send_tids, report.recv_tids);
        cap_intervals(report);
        release(true);
        if (!outcome.channel_lost) {
            try {
                send_report(ch, report, deadline_in(kResultTimeout));
            } catch (const Error&) {  // NOLINT(bugprone-empty-catch): the client went away after the data; its run reports that
            }
        }
        if (options_.on_test) options_.on_test(ServerTestRecord{client, spec, report});
    } catch (const Error& e) {
        send_error(ch, e.kind() == ErrorKind::Usage ? WireError::Usage : WireError::Failed, e.what());
    } catch (const Json::exception& e) {
        send_error(ch, WireError::Protocol, std::string("bad message: ") + e.what());
    } catch (const std::exception& e) {
        // Thread creation (std::system_error), allocation: the test fails, the server goes on.
        send_error(ch, WireError::Failed, std::string("the server could not run the test: ") + e.what());
    }
}

}  // namespace nm
