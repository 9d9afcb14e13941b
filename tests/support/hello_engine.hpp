#pragma once
// A traffic engine in miniature for tests of the sweep's wiring on real namespaces and sockets: the server
// answers every connection with "hello", the client counts what it gets; deterministic and instant where
// the real engine would measure.
#include <stop_token>

#include "core/base/unique_fd.hpp"
#include "core/session/traffic_runner.hpp"
#include "matrix/lab_session.hpp"

namespace nm::test {

/// Listens on an ephemeral TCP port (in the namespace it is made in); answers "hello" until stopped.
class HelloServer final : public LabServer {
public:
    HelloServer();
    uint16_t port() const override { return port_; }
    void serve(std::stop_token stop) override;

private:
    UniqueFd fd_;
    uint16_t port_ = 0;
};

/// Connects to spec.host:spec.port and reports the bytes it got as the run's figures.
class HelloClient final : public TrafficRunner {
public:
    RunResult run(const TestSpec& spec, std::stop_token stop) override;
};

}  // namespace nm::test
