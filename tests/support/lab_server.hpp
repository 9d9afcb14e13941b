#pragma once
// The engine's server in-process for integration tests: a TrafficServer on its own thread inside a lab
// namespace, serving until destroyed.
#include <catch2/catch.hpp>

#include <future>
#include <optional>
#include <string>
#include <thread>

#include "core/session/traffic_server.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm::test {

/// A TrafficServer serving on its own thread inside `netns` until destroyed, with `options` (its port is
/// always a free one).
class LabServer {
public:
    explicit LabServer(const std::string& netns, ServerOptions options = {}) {
        std::promise<uint16_t> bound;
        auto port = bound.get_future();
        thread_ = std::jthread([&bound, netns, opts = std::move(options)](std::stop_token stop) mutable {
            // The whole thread stays in the namespace: the sessions serve() starts inherit it.
            std::optional<NetnsScope> scope;
            std::optional<TrafficServer> server;
            try {
                scope.emplace(netns);
                opts.port = 0;
                server.emplace(opts);
                bound.set_value(server->port());
            } catch (...) {
                bound.set_exception(std::current_exception());
                return;
            }
            server->serve(stop);
        });
        REQUIRE(port.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
        port_ = port.get();
    }
    uint16_t port() const { return port_; }

private:
    std::jthread thread_;
    uint16_t port_ = 0;
};

}  // namespace nm::test
