// LabSession on the real kernel: its lab, the server thread in the server namespace, the client in the
// client namespace, and nothing left behind. The device control and the traffic engine are stand-ins
// here (the real ones come from other branches); the namespaces, sockets and threads are real.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "matrix/config.hpp"
#include "matrix/lab_session.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/command.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

// Listens on an ephemeral TCP port; answers every connection with "hello" until stopped.
class HelloServer final : public nm::LabServer {
public:
    HelloServer() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        REQUIRE(fd_);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        REQUIRE(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd_.get(), 8) == 0);
        socklen_t len = sizeof addr;
        ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
    }
    uint16_t port() const override { return port_; }
    void serve(std::stop_token stop) override {
        while (!stop.stop_requested()) {
            pollfd p{fd_.get(), POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            nm::UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (c) (void)!::write(c.get(), "hello", 5);
        }
    }

private:
    nm::UniqueFd fd_;
    uint16_t port_ = 0;
};

// Connects to the spec's server and counts the bytes it gets: a traffic engine in miniature.
class HelloClient final : public nm::TrafficRunner {
public:
    nm::RunResult run(const nm::TestSpec& spec, std::stop_token) override {
        nm::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(spec.port);
        ::inet_pton(AF_INET, spec.host.c_str(), &to.sin_addr);
        nm::RunResult r;
        r.spec = spec;
        if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            throw nm::Error(nm::ErrorKind::Failed, "connect to " + spec.host);
        }
        char buf[16];
        ssize_t n = 0;
        while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) r.bytes += static_cast<uint64_t>(n);
        r.throughput_bps = static_cast<double>(r.bytes) * 8 / std::max(spec.duration_s, 1e-3);
        r.duration_s = spec.duration_s;
        return r;
    }
};

bool netns_listed(const std::string& name) {
    return nm::test::run_command("ip netns list | grep -qw " + name).exit_status == 0;
}

}  // namespace

TEST_CASE("LabSession: server in the server namespace, client and devices in the client's, all gone afterwards", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name("nmls");
    std::vector<std::pair<std::string, bool>> device_calls;   // namespace, and whether nm-a/nm-b was visible
    nm::LabFactories factories;
    factories.device = [&](const std::string& netns) {
        const bool visible = ::if_nametoindex(netns == name + "-a" ? "nm-a" : "nm-b") != 0;
        device_calls.emplace_back(netns, visible);
        return std::make_unique<nm::test::FakeDeviceControl>();
    };
    factories.client = [] { return std::make_unique<HelloClient>(); };
    factories.server = [] { return std::make_unique<HelloServer>(); };
    {
        nm::LabSession lab(name, nm::LabTopology::Pair, factories);
        CHECK(netns_listed(name + "-a"));
        CHECK(device_calls == std::vector<std::pair<std::string, bool>>{{name + "-a", true}, {name + "-b", true}});
        const auto& target = lab.target();
        CHECK(target.base.host == "198.18.0.2");
        CHECK(target.local.ifname == "nm-a");
        CHECK(target.remote.ifname == "nm-b");
        // The oracle: the port listens in the server namespace.
        CHECK(nm::test::run_in_netns(name + "-b", "ss -ltnH 'sport = :" + std::to_string(target.base.port) + "' | grep -q LISTEN").exit_status == 0);
        // Only the client namespace reaches 198.18.0.2: a run that gets "hello" ran there.
        nm::TestSpec spec = target.base;
        spec.duration_s = 1;
        CHECK(lab.traffic().run(spec, {}).bytes == 5);
        CHECK(lab.probe().probe(1500, std::chrono::milliseconds(1000), {}).passed);
    }
    CHECK_FALSE(netns_listed(name + "-a"));
    CHECK_FALSE(netns_listed(name + "-b"));
}

TEST_CASE("LabSession: a server that cannot start leaves no lab behind", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name("nmls");
    nm::LabFactories factories;
    factories.device = [](const std::string&) { return std::make_unique<nm::test::FakeDeviceControl>(); };
    factories.client = [] { return std::make_unique<HelloClient>(); };
    factories.server = []() -> std::unique_ptr<nm::LabServer> { throw nm::Error(nm::ErrorKind::Failed, "bind: Address in use"); };
    CHECK_THROWS_WITH(nm::LabSession(name, nm::LabTopology::Pair, factories), "bind: Address in use");
    CHECK_FALSE(netns_listed(name + "-a"));
    CHECK_FALSE(netns_listed(name + "-b"));
}

TEST_CASE("A sweep through a LabSession: real namespaces, sockets and path probe with stand-in devices and engine", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name("nmls");
    nm::test::FakeDeviceControl* client_device = nullptr;
    nm::test::FakeDeviceControl* server_device = nullptr;
    nm::LabFactories factories;
    factories.device = [&](const std::string& netns) {
        auto d = std::make_unique<nm::test::FakeDeviceControl>();
        const bool client = netns == name + "-a";
        d->add_interface(client ? "nm-a" : "nm-b", netns);
        (client ? client_device : server_device) = d.get();
        return d;
    };
    factories.client = [] { return std::make_unique<HelloClient>(); };
    factories.server = [] { return std::make_unique<HelloServer>(); };
    nm::LabSession lab(name, nm::LabTopology::Pair, factories);
    nm::test::FakeJournal journal({client_device, server_device});
    nm::SteadyClock clock;
    nm::test::TempDir dir;
    nm::SweepServices services{journal, lab.traffic(), lab.probe(), clock, nullptr, {}, {}};
    nm::SweepOptions options;
    options.output_path = dir.file("lab.json");
    // The real interfaces stay at MTU 1500 (the stand-in devices change nothing), so the 9000 cells'
    // real DF probe finds the path does not carry them.
    const auto config = nm::parse_sweep_config_text(R"({"offloads": [{"name": "on", "features": {"tso": "on"}}],
        "mtu": [1500, 9000], "traffic": [{"streams": 1}], "duration_s": 0.1, "omit_s": 0, "repetitions": 2})", "x");
    const auto out = nm::run_sweep(config, lab.target(), services, options, {});
    REQUIRE(out.results.cells.size() == 2);
    CHECK(out.results.cells[0].status == nm::CellStatus::Ok);
    CHECK(out.results.cells[0].runs.size() == 2);
    CHECK(out.results.cells[0].runs[0].bytes == 5);
    CHECK(out.results.cells[1].status == nm::CellStatus::PathMtuBlackhole);
    CHECK_THAT(out.results.cells[1].error, Catch::EndsWith("larger than the sending interface's MTU"));
    CHECK(out.results.cells[1].overhead_s < 1.0);
    CHECK(nm::load_results(options.output_path).cells.size() == 2);
}
