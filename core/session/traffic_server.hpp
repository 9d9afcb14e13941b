#pragma once
// The server end of the engine (`nicmatrix serve`): accepts connections, runs one test at a time and
// reports its own measurements back. Usable in-process: the sweep constructs it on a thread that sits in
// the server's network namespace (threads it spawns inherit the namespace).
//
// Strangers must not be able to take it down, so the thread that calls serve() only ever does
// non-blocking work: it accepts, and classifies each new connection by its first bytes in an event loop
// (a data connection's header, a test's hello, anything else for the ControlHandler), each within a short
// handshake deadline, with caps per source (an IPv4 address, an IPv6 /64) and in all (at a cap the
// oldest unclassified connection goes). A test runs on a session thread of its own, a control connection on a thread of its
// own (capped too); neither is ever joined while it runs. Out of file descriptors (EMFILE), it makes room
// by closing the oldest unclassified connection, or accepts and closes with a reserved descriptor, and
// backs off instead of spinning. Every test is checked against ServerLimits at hello.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/base/unique_fd.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/control_handler.hpp"
#include "core/engine/engine.hpp"
#include "core/session/server_limits.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

/// One finished test as the server saw it.
struct ServerTestRecord {
    std::string client;  ///< the client's address
    TestSpec spec;       ///< resolved (automatic values filled in)
    EndReport report;    ///< what this end measured
};

struct ServerOptions {
    std::string bind;              ///< local address; "" = every address, IPv4 and IPv6
    uint16_t port = kDefaultPort;  ///< 0 = any free port (see TrafficServer::port())
    bool once = false;             ///< serve() returns after the first test
    /// Called on the session thread after each test (for the CLI's log lines). Must not throw.
    std::function<void(const ServerTestRecord&)> on_test;
    /// Serves connections that open with anything but "hello" (the peer agent's settings control); null =
    /// such connections get an error. Not owned; must outlive serve().
    ControlHandler* control = nullptr;
    /// Called with one line for each connection refused or closed before it became a test (malformed,
    /// oversized or unknown first message, over a limit, not in --allow-from), e.g. "refused
    /// 198.18.0.1: control message: longer than 65536 bytes". At most 20 lines a second; the rest are
    /// counted in a summary line. Must not throw; called from the thread that runs serve(), and from a
    /// test's or control connection's thread when its body ends in an unexpected exception (so it must be
    /// safe to call from several threads, as AgentServer's serialized log is).
    std::function<void(const std::string&)> on_refused;
    /// What one client may ask of this server.
    ServerLimits limits;
    /// When not empty, a test must prove it holds this key (core/control/test_auth.hpp) before it is run.
    std::string key;
    /// A kernel profile of this host (`--profile`: where its kernel spends time, its tasks' names) goes to a
    /// client that proved it holds the key, and without a key only when this is set (serve
    /// --allow-profile); a client on this same host is never sampled here (its own sampler covers both ends).
    bool allow_profile = false;
};

/// Listens when constructed (so a port in use is reported at once), serves tests until stopped.
class TrafficServer {
public:
    /// Binds and listens. Throws nm::Error: Usage for a bad --bind address, Failed for a port in use
    /// ("listen on [::]:5301: Address already in use").
    explicit TrafficServer(ServerOptions options);
    ~TrafficServer();
    TrafficServer(const TrafficServer&) = delete;
    TrafficServer& operator=(const TrafficServer&) = delete;

    /// The bound port; valid as soon as the constructor returned.
    uint16_t port() const { return port_; }

    /// A future that holds the bound port; for callers on another thread that did not construct the server.
    std::shared_future<uint16_t> ready() const { return ready_; }

    /// Accepts and serves tests one at a time until `stop` is requested (a running test then ends with
    /// status Interrupted and the client is told), or after one test when `once`. A second client while a
    /// test runs gets an error message "busy" and the running test goes on undisturbed. Returns after
    /// every thread it started has ended.
    void serve(std::stop_token stop);

private:
    struct Pending;
    struct Worker {
        std::shared_ptr<std::atomic<bool>> done;
        std::string group;  ///< the peer's source_group() (control connections are capped per source)
        std::jthread thread;
    };

    void accept_ready(std::chrono::steady_clock::time_point now, std::stop_token stop);
    void admit(UniqueFd fd, const SocketAddress& peer, std::chrono::steady_clock::time_point now, std::stop_token stop);
    bool make_room_for_descriptor();
    /// Reads what `p` has sent; true when it is finished with (handed on, refused or closed).
    bool advance(Pending& p, std::stop_token stop);
    /// advance(), with a failure logged (and told to the peer when it speaks the protocol): true when done.
    bool step(Pending& p, std::stop_token stop);
    bool on_first_message(Pending& p, Json message, std::stop_token stop);
    /// `opening`: the hello (or, with a key, the auth) that asks for the test: its spec, and the client's
    /// host id and profile category table when it wants a profile.
    void start_test(Pending& p, const Json& opening, std::stop_token stop);
    void start_control(Pending& p, Json first, std::stop_token stop);
    /// Runs one test (`hello`: the message that opened it); calls release(true) once its figures are in
    /// (before the result is sent, so the client's next test is not told "busy").
    void run_session(ControlChannel channel, TestSpec spec, const Json& hello, SocketAddress client, std::stop_token stop,
                     const std::function<void(bool)>& release);
    /// The test's TCP data connections, once all have arrived (offer_data); nullopt, with the client told
    /// unless the server stops, when they do not within kHandshakeTimeout.
    std::optional<std::vector<DataStream>> take_data_connections(ControlChannel& channel, std::stop_token stop);
    bool offer_data(uint32_t cookie, uint32_t id, const std::string& source, UniqueFd fd);
    void refuse(const std::string& line);
    void reap();
    void stop_all();

    ServerOptions options_;
    UniqueFd listener_;
    UniqueFd reserve_fd_;  ///< closed to accept-and-close one connection when out of descriptors
    uint16_t port_ = 0;
    std::promise<uint16_t> ready_promise_;
    std::shared_future<uint16_t> ready_;
    unsigned cores_ = 1;

    // The event loop's own state (only the serve() thread touches it).
    std::vector<std::unique_ptr<Pending>> pending_;
    uint64_t next_pending_id_ = 0;
    std::chrono::steady_clock::time_point accept_paused_until_{};
    std::chrono::steady_clock::time_point log_second_{};
    int logged_this_second_ = 0;
    uint64_t suppressed_logs_ = 0;

    // Handing data connections from the event loop to the running session.
    std::mutex mutex_;
    std::condition_variable_any data_arrived_;
    bool session_active_ = false;
    uint32_t cookie_ = 0;
    uint32_t expected_streams_ = 0;
    std::string session_client_;  ///< data connections must come from the test's client address
    std::vector<DataStream> pending_data_;
    uint64_t sessions_done_ = 0;

    std::vector<Worker> sessions_;
    std::vector<Worker> controls_;
};

}  // namespace nm
