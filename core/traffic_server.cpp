#include "core/traffic_server.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <random>

#include "core/base/error.hpp"
#include "core/proc_stats.hpp"
#include "core/rr_setup.hpp"
#include "core/socket_options.hpp"
#include "core/stream_layout.hpp"
#include "core/traffic_session.hpp"

namespace nm {

TrafficServer::TrafficServer(ServerOptions options) : options_(std::move(options)) {
    listener_ = listen_tcp(options_.bind, options_.port);
    port_ = local_address(listener_.get()).port();
    set_nonblocking(listener_.get(), true);
    ready_promise_.set_value(port_);
    ready_ = ready_promise_.get_future().share();
}

TrafficServer::~TrafficServer() {
    control_threads_.clear();   // jthread: requests stop and joins
    if (session_.joinable()) {
        session_.request_stop();
        session_.join();
    }
}

void TrafficServer::serve(std::stop_token stop) {
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (options_.once && sessions_done_ > 0 && !session_active_) break;
        }
        if (stop.stop_requested()) break;
        pollfd p{listener_.get(), POLLIN, 0};
        const int rc = ::poll(&p, 1, 50);
        if (rc < 0 && errno != EINTR) throw system_error("poll on listener", errno);
        std::erase_if(control_threads_, [](const ControlThread& t) { return t.done->load(); });
        if (rc <= 0) continue;
        UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd) continue;
        std::string who;
        try {
            who = peer_address(fd.get()).host();
        } catch (const Error&) {
            continue;
        }
        try {
            handle_connection(std::move(fd), stop);
        } catch (const Error& e) {
            // A connection that does not speak the protocol (or went away while classifying) is dropped.
            if (options_.on_refused) options_.on_refused("refused " + who + ": " + e.what());
        } catch (const nlohmann::json::exception& e) {
            if (options_.on_refused) options_.on_refused("refused " + who + ": bad message: " + e.what());
        }
    }
    control_threads_.clear();
    if (session_.joinable()) {
        session_.request_stop();
        session_.join();
    }
}

bool TrafficServer::offer_data(uint32_t cookie, uint32_t id, UniqueFd fd) {
    std::lock_guard lock(mutex_);
    if (!session_active_ || cookie != cookie_ || id >= expected_streams_) return false;
    if (std::any_of(pending_.begin(), pending_.end(), [id](const DataStream& s) { return s.id == id; })) return false;
    pending_.push_back(DataStream{std::move(fd), id});
    data_arrived_.notify_all();
    return true;
}

void TrafficServer::handle_connection(UniqueFd fd, std::stop_token stop) {
    const auto deadline = deadline_in(std::chrono::seconds(2));
    if (!wait_fd(fd.get(), POLLIN, deadline)) return;
    char first = 0;
    if (::recv(fd.get(), &first, 1, MSG_PEEK) != 1) return;
    if (first == DataHeader::kMagic[0]) {
        std::array<unsigned char, DataHeader::kSize> bytes{};
        recv_exact(fd.get(), bytes.data(), bytes.size(), deadline, "data connection header");
        const auto header = DataHeader::decode(bytes);
        if (!header) return;
        offer_data(header->cookie, header->id, std::move(fd));
        return;
    }
    ControlChannel ch(std::move(fd));
    Json hello = ch.expect(deadline, "hello");
    if (!is(hello, Msg::Hello)) {
        if (options_.control == nullptr) {
            send_error(ch, WireError::Protocol, "expected hello");
            throw Error(ErrorKind::Failed, "unexpected first message " + hello.at("type").dump());
        }
        auto done = std::make_shared<std::atomic<bool>>(false);
        control_threads_.push_back(ControlThread{
            done, std::jthread([this, done, ch = std::move(ch), first = std::move(hello), outer = stop](std::stop_token own) mutable {
                std::stop_source both;
                std::stop_callback a(outer, [&] { both.request_stop(); });
                std::stop_callback b(own, [&] { both.request_stop(); });
                options_.control->serve_control(std::move(ch), std::move(first), both.get_token());
                done->store(true);
            })});
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
        pending_.clear();
    }
    if (session_.joinable()) session_.join();
    session_ = std::jthread([this, ch = std::move(ch), hello = std::move(hello), outer = stop](std::stop_token own) mutable {
        // Either the server stopping or the session being cancelled ends the test.
        std::stop_source both;
        std::stop_callback a(outer, [&] { both.request_stop(); });
        std::stop_callback b(own, [&] { both.request_stop(); });
        // The session frees the server before it sends its result, so a client that starts its next test
        // right after reading the result is never told "busy"; the thread's tail must not free it twice
        // (a new session may own the flag by then).
        bool released = false;
        const auto release = [this, &released] {
            if (released) return;
            std::lock_guard lock(mutex_);
            session_active_ = false;
            pending_.clear();
            ++sessions_done_;
            released = true;
        };
        run_session(std::move(ch), std::move(hello), both.get_token(), release);
        release();
    });
}

void TrafficServer::run_session(ControlChannel ch, Json hello, std::stop_token stop, const std::function<void()>& release) {
    std::string client;
    try {
        client = peer_address(ch.fd()).host();
        TestSpec spec;
        try {
            spec = resolve_spec(hello.at("spec").get<TestSpec>(), engine_cores());
        } catch (const Error& e) {
            send_error(ch, e);
            return;
        }
        const StreamLayout layout = StreamLayout::of(spec);
        const bool udp = spec.protocol == Protocol::Udp;
        const bool rr = spec.pattern != TrafficPattern::Stream;
        const bool server_receives = layout.receives(End::Server);
        const SocketAddress local = local_address(ch.fd());
        try {
            if (!udp && (rr || layout.sends(End::Server))) check_congestion(spec.socket.congestion);
        } catch (const Error& e) {
            send_error(ch, e);
            return;
        }

        // The server's data flows to the client.
        EnginePlan plan = plan_for(spec, Direction::Reverse, iface_for_address(local.host()));
        plan.peer = peer_address(ch.fd());

        uint16_t udp_port = 0;
        uint16_t rr_port = 0;
        if (udp && server_receives) {
            plan.recv_groups = make_udp_receivers(local, port_, spec.threads, spec.window, udp_port);
            for (auto& g : plan.recv_groups) apply_udp_options(g.front().fd.get(), spec.socket, false);
        }
        if (spec.pattern == TrafficPattern::Crr) plan.recv_groups = make_crr_listeners(local, spec.threads, rr_port);
        const uint32_t cookie = std::random_device{}();
        {
            std::lock_guard lock(mutex_);
            cookie_ = cookie;
            expected_streams_ = layout.data_connections();
        }
        ch.send(Msg::Ready, Json{{"cookie", cookie}, {"udp_port", udp_port}, {"rr_port", rr_port}, {"spec", spec}},
                deadline_in(kHandshakeTimeout));
        Json start = ch.expect(deadline_in(kHandshakeTimeout), "start from the client");
        if (!is(start, Msg::Start)) return;

        std::vector<DataStream> tcp_streams;
        if (!udp) {
            std::unique_lock lock(mutex_);
            const bool all = data_arrived_.wait_for(lock, kHandshakeTimeout, [&] { return pending_.size() == expected_streams_; });
            if (!all) {
                const auto got = pending_.size();
                lock.unlock();
                send_error(ch, WireError::Failed, std::to_string(got) + " of " + std::to_string(expected_streams_) +
                                                      " data connections arrived within " + std::to_string(kHandshakeTimeout.count()) + " s");
                return;
            }
            tcp_streams = std::move(pending_);
            pending_.clear();
            cookie_ = 0;
        }
        std::vector<DataStream> sends, recvs;
        for (auto& s : tcp_streams) {
            set_buffer_sizes(s.fd.get(), spec.window);
            const bool sends_on_it = layout.sender_of(s.id) == End::Server;
            apply_tcp_options(s.fd.get(), spec.socket, {.client = false, .sends = rr || sends_on_it});
            (sends_on_it ? sends : recvs).push_back(std::move(s));
        }
        if (udp && layout.sends(End::Server)) {
            SocketAddress peer = peer_address(ch.fd());
            peer.set_port(start.at("udp_port").get<uint16_t>());
            const StreamIds ids = layout.sent_by(End::Server);
            for (uint32_t id = ids.first; id < ids.end; ++id) {
                sends.push_back(make_udp_sender(peer, id, spec.window));
                apply_udp_options(sends.back().fd.get(), spec.socket, false);
            }
        }
        plan.send_groups = spread_streams(std::move(sends), spec.threads);
        if (!udp && spec.pattern != TrafficPattern::Crr) plan.recv_groups = spread_streams(std::move(recvs), spec.threads);

        EndEngine engine(std::move(plan));
        const Timeline tl = make_timeline(spec, std::chrono::steady_clock::now());
        engine.start(tl);
        ch.send(Msg::Started, Json::object(), deadline_in(kHandshakeTimeout));
        const LoopOutcome outcome = run_end_loop(ch, engine, spec, tl, server_receives, stop);
        EndReport report = engine.finish(outcome.status, outcome.error);
        release();
        if (!outcome.channel_lost) {
            try {
                ch.send(Msg::Result, Json{{"report", report}}, deadline_in(kResultTimeout));
            } catch (const Error&) {
                // The client went away after the data; its run reports that.
            }
        }
        if (options_.on_test) options_.on_test(ServerTestRecord{client, spec, report});
    } catch (const Error& e) {
        send_error(ch, WireError::Failed, e.what());
    } catch (const nlohmann::json::exception& e) {
        send_error(ch, WireError::Protocol, std::string("bad message: ") + e.what());
    }
}

}  // namespace nm
