#include "core/iperf3/iperf3_client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/control/control_protocol.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/host/proc_stats.hpp"
#include "core/host/socket_options.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/session/traffic_session.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {
namespace {

using iperf3::State;

// How long the server may take to answer a step of the conversation.
constexpr auto kStepTimeout = std::chrono::milliseconds(kHandshakeTimeout);
// How long after TEST_END the server has to close the streams it sends on (-R, --bidir).
constexpr auto kCloseTimeout = std::chrono::seconds(2);

// The control connection to one iperf3 server, one state byte or JSON message at a time.
class Control {
public:
    Control(UniqueFd fd, std::string where) : fd_(std::move(fd)), where_(std::move(where)) {}

    int fd() const { return fd_.get(); }
    const std::string& where() const { return where_; }

    void send_bytes(const std::string& bytes) { send_all(fd_.get(), bytes.data(), bytes.size(), deadline_in(kStepTimeout), where_ + ": send"); }
    void send_state(State s) { send_bytes(std::string(1, static_cast<char>(static_cast<int8_t>(s)))); }
    void send_json(const Json& j) {
        const std::string text = j.dump();
        send_bytes(iperf3::length_prefix(static_cast<uint32_t>(text.size())) + text);
    }

    /// The next state byte, read by `deadline`; `waiting_for` says what for, in the errors.
    uint8_t read_byte(Deadline deadline, const std::string& waiting_for) {
        uint8_t b = 0;
        for (;;) {
            const ssize_t n = ::recv(fd_.get(), &b, 1, MSG_DONTWAIT);
            if (n == 1) return b;
            if (n == 0) throw Error(ErrorKind::Closed, where_ + " closed the connection while this end waited for " + waiting_for);
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) throw system_error(where_ + ": waiting for " + waiting_for, errno);
            if (!wait_fd(fd_.get(), POLLIN, deadline)) {
                throw Error(ErrorKind::Failed, where_ + " sent no " + waiting_for + " within " + std::to_string(kStepTimeout.count()) +
                                                   " ms: is it a stock `iperf3 -s`?");
            }
        }
    }

    /// Reads a state byte and requires `want`; a refusal (ACCESS_DENIED, SERVER_ERROR) or anything else
    /// becomes the matching error.
    void expect(State want, const std::string& name) {
        const uint8_t b = read_byte(deadline_in(kStepTimeout), name);
        if (static_cast<int8_t>(b) == static_cast<int8_t>(want)) return;
        throw_for(b, name);
    }

    [[noreturn]] void throw_for(uint8_t b, const std::string& name) {
        const auto s = static_cast<State>(static_cast<int8_t>(b));
        if (s == State::AccessDenied) throw Error(ErrorKind::Refused, where_ + " is busy with another client's test (ACCESS_DENIED)");
        if (s == State::ServerError) throw Error(ErrorKind::Failed, where_ + " refused the test: " + server_error());
        throw Error(ErrorKind::Failed, where_ + " sent " + iperf3::describe_state_byte(b) + " where iperf3 sends " + name +
                                           ": not an iperf3 server, or one that speaks another protocol");
    }

    /// SERVER_ERROR is followed by the server's i_errno and errno.
    std::string server_error() {
        unsigned char codes[8];
        try {
            recv_exact(fd_.get(), codes, sizeof codes, deadline_in(std::chrono::milliseconds(500)), where_);
        } catch (const Error&) {
            return "SERVER_ERROR without its error number";
        }
        return "SERVER_ERROR: " +
               iperf3::describe_server_error(static_cast<int32_t>(iperf3::read_length(codes)), static_cast<int32_t>(iperf3::read_length(codes + 4)));
    }

    Json read_json(const std::string& what) {
        const auto deadline = deadline_in(kStepTimeout);
        unsigned char len[4];
        recv_exact(fd_.get(), len, sizeof len, deadline, where_ + ": " + what);
        const uint32_t n = iperf3::read_length(len);
        if (n == 0 || n > iperf3::kMaxJsonBytes) {
            throw Error(ErrorKind::Failed, where_ + ": " + what + " of " + std::to_string(n) + " bytes; at most " +
                                               std::to_string(iperf3::kMaxJsonBytes) + " are taken");
        }
        std::string text(n, '\0');
        recv_exact(fd_.get(), text.data(), n, deadline, where_ + ": " + what);
        return iperf3::parse_message(text, where_ + ": " + what);
    }

private:
    UniqueFd fd_;
    std::string where_;
};

std::string where(const TestSpec& spec) { return "iperf3 server " + spec.host + ":" + std::to_string(spec.port); }

// A stock iperf3 serves one test at a time and, between two, closes its listener and opens it again: a
// test that follows another at once (a sweep's next repetition) can find it still finishing the last one
// (ACCESS_DENIED), for a moment not listening (refused), or can land in the backlog of the listener it is
// about to close, which resets the connection before the server has said a word. All three are tried
// again until this much time has passed.
constexpr auto kBetweenTests = std::chrono::milliseconds(1500);

// Connects and goes as far as CREATE_STREAMS: the cookie, PARAM_EXCHANGE, the parameters.
Control open_test(const TestSpec& spec, const SocketAddress& server, const std::string& cookie, const iperf3::Told& told) {
    const auto grace = std::chrono::steady_clock::now() + kBetweenTests;
    const auto again = [&] {
        if (std::chrono::steady_clock::now() > grace) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return true;
    };
    for (;;) {
        UniqueFd fd;
        try {
            fd = connect_tcp(server, spec.bind, 0, deadline_in(kStepTimeout));
        } catch (const Error& e) {
            if (e.code() == std::errc::connection_refused && again()) continue;
            throw Error(e.kind(), std::string(e.what()) + "; is `iperf3 -s` listening on port " + std::to_string(spec.port) + " there?");
        }
        bool greeted = false;  // the server has sent its first byte
        try {
            Control c(std::move(fd), where(spec));
            c.send_bytes(cookie);
            const uint8_t first = c.read_byte(deadline_in(kStepTimeout), "PARAM_EXCHANGE");
            greeted = true;
            if (static_cast<int8_t>(first) != static_cast<int8_t>(State::ParamExchange)) c.throw_for(first, "PARAM_EXCHANGE");
            c.send_json(iperf3::parameters(spec, told, std::string("nicmatrix ") + kVersion));
            c.expect(State::CreateStreams, "CREATE_STREAMS");
            return c;
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Refused && again()) continue;  // ACCESS_DENIED
            const bool dropped_unheard =
                e.kind() == ErrorKind::Closed || e.code() == std::errc::connection_reset || e.code() == std::errc::broken_pipe;
            if (!greeted && dropped_unheard && again()) continue;  // the closing listener's backlog
            throw;
        }
    }
}

// After IPERF_DONE the server closes the control connection once it has finished the test: waiting for
// that (by a deadline) lets the next test find it ready.
void wait_closed(Control& c) {
    const auto deadline = deadline_in(std::chrono::milliseconds(2000));
    char b[64];
    for (;;) {
        const ssize_t n = ::recv(c.fd(), b, sizeof b, MSG_DONTWAIT);
        if (n == 0) return;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && !wait_fd(c.fd(), POLLIN, deadline)) return;
    }
}

// One data connection per stream, in the order the server assigns them (the client's streams first).
std::vector<DataStream> connect_streams(const TestSpec& spec, const SocketAddress& server, const std::string& cookie) {
    const StreamLayout layout = StreamLayout::of(spec);
    std::vector<DataStream> out;
    for (uint32_t id = 0; id < layout.data_connections(); ++id) {
        const SocketRole role{.client = true, .sends = layout.sender_of(id) == End::Client};
        const auto prepare = [&](int fd) { apply_tcp_options(fd, spec.socket, role); };
        DataStream s{connect_tcp(server, spec.bind, spec.window, deadline_in(kStepTimeout), prepare), id};
        send_all(s.fd.get(), cookie.data(), cookie.size(), deadline_in(kStepTimeout), where(spec) + ": data connection cookie");
        out.push_back(std::move(s));
    }
    return out;
}

// The server's figures stand in where the combined result needs the far end's report: the far end's
// counts of what this end sent are this end's own (a stock server's count is over its own window, kept
// apart in iperf3_peer); its TCP_INFO retransmits on what it sent are its report's.
EndReport far_end_report(const TestSpec& spec, const EndReport& mine, const Iperf3PeerFigures* peer) {
    EndReport theirs;
    theirs.measurement.duration_s = mine.measurement.duration_s;
    theirs.received = mine.sent;
    theirs.received_intervals = mine.sent_intervals;
    if (peer != nullptr) {
        for (const auto& st : peer->streams) {
            if (!st.peer_sent) continue;
            StreamResult r;
            r.id = st.stream;
            r.direction = spec.direction == Direction::Bidir ? Direction::Reverse : spec.direction;
            r.retransmits = static_cast<uint32_t>(std::min<uint64_t>(st.retransmits.value_or(0), UINT32_MAX));
            theirs.sent.push_back(r);
        }
    }
    return theirs;
}

// How the data phase of an iperf3 test ended.
struct IperfLoop {
    RunStatus status = RunStatus::Ok;
    std::string error;
    bool control_lost = false;  ///< the server spoke or closed: nothing more is sent to it
};

// Runs while data flows: the engine's snapshots, the end of the window, a stop, a stall, the hard deadline,
// and anything the server says on the control connection (which ends the test).
IperfLoop run_data_phase(Control& c, EndEngine& engine, const TestSpec& spec, const Timeline& tl, std::stop_token stop) {
    IperfLoop out;
    const TimePoint hard_deadline = tl.window_end + kEndGrace;
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        engine.poll(now);
        // The window is over: this end's senders stopped at its end by themselves; a receive-only end
        // ends it by the clock.
        if (engine.has_senders() ? engine.senders_done() : now >= tl.window_end) break;
        if (stop.stop_requested()) {
            out.status = RunStatus::Interrupted;
            out.error = "interrupted";
            return out;
        }
        if (engine.stalled(now)) {
            out.status = RunStatus::Stalled;
            out.error = "stalled: no data moved for " + std::to_string(spec.stall_timeout_s) + " s";
            return out;
        }
        if (now > hard_deadline) {
            out.status = RunStatus::PeerLost;
            out.error = "the test did not end within " + std::to_string(kEndGrace.count()) + " s of its duration";
            return out;
        }
        // Anything the server says while data flows ends the test: SERVER_TERMINATE, SERVER_ERROR, a close.
        const auto wake = std::max(now, std::min(now + std::chrono::milliseconds(10), engine.next_due()));
        pollfd p{c.fd(), POLLIN, 0};
        const int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wake - now).count());
        if (::poll(&p, 1, ms) > 0) {
            out.status = RunStatus::PeerLost;
            out.control_lost = true;
            uint8_t b = 0;
            const ssize_t n = ::recv(c.fd(), &b, 1, MSG_DONTWAIT);
            if (n <= 0) {
                out.error = c.where() + " closed the control connection during the test";
            } else if (static_cast<State>(static_cast<int8_t>(b)) == State::ServerError) {
                out.error = c.where() + " ended the test: " + c.server_error();
            } else {
                out.error = c.where() + " ended the test with " + iperf3::describe_state_byte(b);
            }
            return out;
        }
    }
    return out;
}

}  // namespace

RunResult Iperf3Client::run(const TestSpec& spec, std::stop_token stop) { return run_live(spec, std::move(stop), {}); }

void Iperf3Client::check_access(const TestSpec& requested) {
    iperf3::check_supported(requested);
    TestSpec spec = resolve_spec(requested, engine_cores());
    const SocketAddress server = resolve_address(spec.host, spec.port);
    const std::string cookie = iperf3::make_cookie();
    const iperf3::Told told{0, 1};
    Control c = open_test(spec, server, cookie, told);
    const auto streams = connect_streams(spec, server, cookie);
    c.expect(State::TestStart, "TEST_START");
    c.expect(State::TestRunning, "TEST_RUNNING");
    c.send_state(State::TestEnd);
    c.expect(State::ExchangeResults, "EXCHANGE_RESULTS");
    EndReport none;
    c.send_json(iperf3::client_results(spec, none));
    (void)c.read_json("results");
    c.expect(State::DisplayResults, "DISPLAY_RESULTS");
    c.send_state(State::IperfDone);
    wait_closed(c);
}

RunResult Iperf3Client::run_live(const TestSpec& requested, std::stop_token stop, const LiveSink& live) {
    iperf3::check_supported(requested);
    const TestSpec spec = resolve_spec(requested, engine_cores());
    check_cpus(spec.client_cpus, online_cpus(), "client");
    const StreamLayout layout = StreamLayout::of(spec);
    if (layout.sends(End::Client)) check_congestion(spec.socket.congestion);
    const SocketAddress server = resolve_address(spec.host, spec.port);
    const std::string cookie = iperf3::make_cookie();
    const iperf3::Told told = iperf3::told_times(spec);

    Control c = open_test(spec, server, cookie, told);
    const SocketAddress local = local_address(c.fd());
    std::vector<DataStream> sends, recvs;
    for (auto& s : connect_streams(spec, server, cookie)) (layout.sender_of(s.id) == End::Client ? sends : recvs).push_back(std::move(s));
    EnginePlan plan = plan_for(spec, Direction::Forward, !spec.iface.empty() ? spec.iface : iface_for_address(local.host()));
    plan.cpus = spec.client_cpus;
    plan.peer = server;
    plan.send_groups = spread_streams(std::move(sends), spec.threads);
    plan.recv_groups = spread_streams(std::move(recvs), spec.threads);
    c.expect(State::TestStart, "TEST_START");
    c.expect(State::TestRunning, "TEST_RUNNING");

    EndEngine engine(std::move(plan));
    if (live) engine.watch(live);
    const Timeline tl = make_timeline(spec, std::chrono::steady_clock::now());
    engine.start(tl);
    auto [status, error, control_lost] = run_data_phase(c, engine, spec, tl, stop);
    if (status == RunStatus::Ok) {
        try {
            c.send_state(State::TestEnd);
        } catch (const Error& e) {
            status = RunStatus::PeerLost;
            error = std::string("sending TEST_END: ") + e.what();
            control_lost = true;
        }
        // The server closes the streams it sends on when it reads TEST_END: this end's receivers see
        // their end of data (and end their window at their last byte).
        const auto limit = std::chrono::steady_clock::now() + kCloseTimeout;
        while (engine.has_receivers() && !engine.receivers_done() && std::chrono::steady_clock::now() < limit) {
            engine.poll(std::chrono::steady_clock::now());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    } else if (!control_lost) {
        try {
            c.send_state(State::ClientTerminate);
        } catch (const Error&) {  // NOLINT(bugprone-empty-catch): the run has failed already; its error says why
        }
    }
    EndReport mine = engine.finish(status, error);
    cap_intervals(mine);

    std::optional<Iperf3PeerFigures> peer;
    if (status == RunStatus::Ok) {
        try {
            c.expect(State::ExchangeResults, "EXCHANGE_RESULTS");
            c.send_json(iperf3::client_results(spec, mine));
            peer = iperf3::parse_server_results(c.read_json("results"), spec, told);
            c.expect(State::DisplayResults, "DISPLAY_RESULTS");
            c.send_state(State::IperfDone);
            wait_closed(c);
        } catch (const Error& e) {
            status = RunStatus::PeerLost;
            error = std::string("after the test: ") + e.what();
        }
    }
    RunResult r = combine_reports(spec, mine, far_end_report(spec, mine, peer ? &*peer : nullptr), status, error, server.family());
    if (peer) {
        if (layout.sends(End::Server)) peer->figures_from_peer = {"tcp.retransmits", "streams[].retransmits"};
    } else {
        peer = Iperf3PeerFigures{};
        peer->omit_s = told.omit_s;
        peer->time_s = told.time_s;
    }
    r.iperf3_peer = std::move(peer);
    return r;
}

}  // namespace nm
