// LabSession on the real kernel: its lab, the server thread in the server namespace, the client in the
// client namespace, and nothing left behind. The device control and the traffic engine are stand-ins
// here (tests/integration/cli/sweep_cli_test.cpp runs the real ones); the namespaces, sockets and threads
// are real.
#include <catch2/catch.hpp>

#include <net/if.h>

#include <fstream>

#include "core/base/error.hpp"
#include "matrix/config.hpp"
#include "matrix/lab_session.hpp"
#include "matrix/results_store.hpp"
#include "matrix/sweep_request.hpp"
#include "tests/support/command.hpp"
#include "tests/support/command_device.hpp"
#include "tests/support/hello_engine.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/matrix_world.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"

namespace {

bool netns_listed(const std::string& name) { return nm::test::run_command("ip netns list | grep -qw " + name).exit_status == 0; }

}  // namespace

TEST_CASE("LabSession: server in the server namespace, client and devices in the client's, all gone afterwards", "[integration]") {
    nm::test::require_net_admin();
    const std::string name = nm::test::unique_name("nmls");
    std::vector<std::pair<std::string, bool>> device_calls;  // namespace, and whether nm-a/nm-b was visible
    nm::LabFactories factories;
    factories.device = [&](const std::string& netns) {
        const bool visible = ::if_nametoindex(netns == name + "-a" ? "nm-a" : "nm-b") != 0;
        device_calls.emplace_back(netns, visible);
        return std::make_unique<nm::test::FakeDeviceControl>();
    };
    factories.client = [] { return std::make_unique<nm::test::HelloClient>(); };
    factories.server = [] { return std::make_unique<nm::test::HelloServer>(); };
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
    factories.client = [] { return std::make_unique<nm::test::HelloClient>(); };
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
    factories.client = [] { return std::make_unique<nm::test::HelloClient>(); };
    factories.server = [] { return std::make_unique<nm::test::HelloServer>(); };
    nm::LabSession lab(name, nm::LabTopology::Pair, factories);
    nm::test::FakeJournal journal({client_device, server_device});
    nm::SteadyClock clock;
    nm::test::TempDir dir;
    nm::SweepServices services{journal, lab.traffic(), lab.probe(), clock, nullptr, {}, {}};
    nm::SweepOptions options;
    options.output_path = dir.file("lab.json");
    // Long, so that a cell that waited for the probe's timeout cannot pass for one refused at once.
    options.probe_timeout = std::chrono::milliseconds(10000);
    // The real interfaces stay at MTU 1500 (the stand-in devices change nothing), so the 9000 cells'
    // real DF probe finds the path does not carry them.
    const auto config = nm::parse_sweep_config_text(R"({"offloads": [{"name": "on", "features": {"tso": "on"}}],
        "mtu": [1500, 9000], "traffic": [{"streams": 1}], "duration_s": 0.1, "omit_s": 0, "repetitions": 2})",
                                                    "x");
    const auto out = nm::run_sweep(config, lab.target(), services, options, {});
    REQUIRE(out.results.cells.size() == 2);
    CHECK(out.results.cells[0].status == nm::CellStatus::Ok);
    CHECK(out.results.cells[0].runs.size() == 2);
    CHECK(out.results.cells[0].runs[0].bytes == 5);
    CHECK(out.results.cells[1].status == nm::CellStatus::PathMtuBlackhole);
    CHECK_THAT(out.results.cells[1].error, Catch::EndsWith("larger than the sending interface's MTU"));
    CHECK(out.results.cells[1].overhead_s < 5.0);
    CHECK(nm::load_results(options.output_path).cells.size() == 2);
}

TEST_CASE("execute_sweep --lab: its own lab, settings on both ends, the results file, and no lab afterwards", "[integration]") {
    nm::test::require_net_admin();
    nm::test::TempDir dir;
    const auto cfg = dir.file("cfg.json");
    std::ofstream(cfg) << R"({"name": "wiring", "offloads": [{"name": "original", "features": {}}, {"name": "gro-on", "features": {"gro": "on"}}],
        "mtu": [1500, 9000], "traffic": [{}], "duration_s": 0.1, "omit_s": 0, "repetitions": 2})";
    nm::SweepRequest req;
    req.config_file = cfg;
    req.lab = true;
    req.lab_name = nm::test::unique_name("nmex");
    req.output = dir.file("out/r.json");
    req.journal = dir.file("j/journal.json");
    nm::test::FakeJournal* journal = nullptr;
    nm::SweepBackends backends;
    backends.journal = [&](const std::string&) {
        auto j = std::make_unique<nm::test::FakeJournal>(std::vector<nm::DeviceControl*>{});
        journal = j.get();
        return j;
    };
    backends.lab = [&] {
        nm::LabFactories f;
        f.device = [&](const std::string& netns) {
            auto d = std::make_unique<nm::test::CommandDeviceControl>(netns);
            journal->add_device(d.get());
            return d;
        };
        f.client = [] { return std::make_unique<nm::test::HelloClient>(); };
        f.server = [] { return std::make_unique<nm::test::HelloServer>(); };
        return f;
    };
    const auto prepared = nm::prepare_sweep(req);
    const auto out = nm::execute_sweep(req, prepared, backends, nullptr, {});
    REQUIRE(out.results.cells.size() == 4);
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key << ": " << c.error);
        CHECK(c.status == nm::CellStatus::Ok);  // both ends at 9000 on a pair lab: the DF probe passes
        CHECK(c.applied_local->mtu == c.spec.mtu);
        CHECK(c.applied_remote->mtu == c.spec.mtu);
        CHECK(c.runs.at(0).bytes == 5);
    }
    CHECK(out.results.cells[2].applied_remote->features.at("rx-gro") == true);
    CHECK(out.results.local.interface->netns == req.lab_name + "-a");
    CHECK(out.results.remote.interface->netns == req.lab_name + "-b");
    CHECK(nm::load_results(req.output).cells.size() == 4);
    CHECK_FALSE(netns_listed(req.lab_name + "-a"));
    CHECK_FALSE(netns_listed(req.lab_name + "-b"));
}
