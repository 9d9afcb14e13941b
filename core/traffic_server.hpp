#pragma once
// The server end of the engine (`nicmatrix serve`): accepts a control connection, runs one test at a time
// and reports its own measurements back. Usable in-process: the sweep constructs it on a thread that sits
// in the server's network namespace (threads it spawns inherit the namespace).
#include <atomic>
#include <condition_variable>
#include <memory>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/base/traffic_types.hpp"
#include "core/base/unique_fd.hpp"
#include "core/control_channel.hpp"
#include "core/control_handler.hpp"
#include "core/engine.hpp"

namespace nm {

/// One finished test as the server saw it.
struct ServerTestRecord {
    std::string client;     ///< the client's address
    TestSpec spec;          ///< resolved (automatic values filled in)
    EndReport report;       ///< what this end measured
};

struct ServerOptions {
    std::string bind;                   ///< local address; "" = every address, IPv4 and IPv6
    uint16_t port = kDefaultPort;       ///< 0 = any free port (see TrafficServer::port())
    bool once = false;                  ///< serve() returns after the first test
    /// Called on the session thread after each test (for the CLI's log lines). Must not throw.
    std::function<void(const ServerTestRecord&)> on_test;
    /// Serves connections that open with anything but "hello" (the peer agent's settings control); null =
    /// such connections get an error. Not owned; must outlive serve().
    ControlHandler* control = nullptr;
    /// Called with one line for each connection refused before it became a test (malformed, oversized or
    /// unknown first message), e.g. "refused 198.18.0.1: control message: longer than 65536 bytes". Must
    /// not throw; may be called from the accept loop.
    std::function<void(const std::string&)> on_refused;
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
    /// test runs gets an error message "busy" and the running test goes on undisturbed.
    void serve(std::stop_token stop);

private:
    void handle_connection(UniqueFd fd, std::stop_token stop);
    void run_session(ControlChannel channel, Json hello, std::stop_token stop, const std::function<void()>& release);
    bool offer_data(uint32_t cookie, uint32_t id, UniqueFd fd);

    ServerOptions options_;
    UniqueFd listener_;
    uint16_t port_ = 0;
    std::promise<uint16_t> ready_promise_;
    std::shared_future<uint16_t> ready_;

    // Handing data connections from the accept loop to the running session.
    std::mutex mutex_;
    std::condition_variable data_arrived_;
    bool session_active_ = false;
    uint32_t cookie_ = 0;
    uint32_t expected_streams_ = 0;
    std::vector<DataStream> pending_;
    std::jthread session_;
    uint64_t sessions_done_ = 0;

    // Control connections handed to options_.control, each on its own thread; finished ones are reaped
    // by the accept loop.
    struct ControlThread {
        std::shared_ptr<std::atomic<bool>> done;
        std::jthread thread;
    };
    std::vector<ControlThread> control_threads_;
};

}  // namespace nm
