#pragma once
// The engine in-process for integration tests: a TrafficServer on its own thread inside a lab namespace,
// serving until destroyed, a lab with one, and one client run from inside the client's namespace.
#include <catch2/catch.hpp>

#include <future>
#include <optional>
#include <string>
#include <thread>

#include "core/session/traffic_client.hpp"
#include "core/session/traffic_server.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "ethtool_ctl/netns.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

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

/// A Catch2 fixture (TEST_CASE_METHOD): skips the test without CAP_NET_ADMIN, then makes a pair lab whose
/// server end serves tests in-process (`server`, on a port of its own).
struct InProcessLab : NeedsNetAdmin {
    ScopedLab lab;
    LabServer server{lab.server().netns};
};

/// One TrafficClient run of `spec` from inside `client`'s namespace (the calling thread enters it and
/// leaves it on return).
inline RunResult run_in(const LabInterface& client, const TestSpec& spec, std::stop_token stop = {}, TrafficClientOptions options = {}) {
    NetnsScope scope(client.netns);
    TrafficClient c(std::move(options));
    return c.run(spec, stop);
}

}  // namespace nm::test
