#pragma once
// A whole sweep world of fakes (both lab ends, journal, engine, path, clock, observer) and a scratch
// directory (tests/support/temp_dir.hpp), shared by the matrix unit tests.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device/device_codec.hpp"
#include "core/host/host_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/runner.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

namespace nm::test {

/// The sweep config that `layers` make: the first a whole config's JSON, each next one a JSON merge patch
/// (RFC 7386) over what came before.
inline SweepConfig sweep_config(std::initializer_list<std::string> layers) {
    Json j = Json::object();
    for (const auto& layer : layers) j.merge_patch(Json::parse(layer));
    return parse_sweep_config(j);
}

/// Eight cells: two profiles (every offload on, every offload off) x two MTUs x one and ten streams, each
/// run 1 s after 0.5 s omitted (the runner tests set the repetitions and the order).
inline const std::string kEightCellSweep = R"({
      "offloads": [{"name": "all-on", "features": {"tx": "on", "sg": "on", "tso": "on", "gso": "on", "gro": "on"}},
                   {"name": "all-off", "features": {"tx": "off", "sg": "off", "tso": "off", "gso": "off", "gro": "off"}}],
      "mtu": [1500, 9000],
      "traffic": [{"streams": 1}, {"streams": 10}],
      "duration_s": 1, "omit_s": 0.5})";

/// The cell of `r` whose key is `key`; the test fails naming it when there is none.
inline const CellResult& cell(const ResultsFile& r, const std::string& key) {
    for (const auto& c : r.cells) {
        if (c.spec.key == key) return c;
    }
    FAIL("no cell " << key);
    throw std::logic_error("unreachable");
}

/// Records what a sweep reports.
class Recorder final : public SweepObserver {
public:
    void on_note(const std::string& text) override { notes.push_back(text); }
    void on_cell_start(const CellProgress& p) override {
        started.push_back(p.number);
        rounds.push_back(p.round);
    }
    void on_cell_done(const CellProgress& p, const CellResult& r) override {
        done.push_back(r.spec.key);
        finals.push_back(p.final);
        etas.push_back(p.eta_s);
        totals.push_back(p.total);
    }
    std::vector<std::string> notes, done;
    std::vector<size_t> started, totals;
    std::vector<uint32_t> rounds;
    std::vector<bool> finals;
    std::vector<double> etas;
};

/// The lab as fakes: client end nm-a, server end nm-b, a traffic engine, a path, a clock, a journal.
struct World {
    FakeDeviceControl local, remote;
    FakeJournal journal{{&local, &remote}};
    FakeTrafficRunner traffic{local, "nm-a"};
    FakePathProbe probe;
    FakeClock clock;
    FakeLoadProbe load{clock};
    Recorder observer;
    SweepTarget target;
    LinkState local_original, remote_original;
    HostInfo remote_host;  ///< what the peer's agent said about its host (none by default: no agent)

    World() {
        local.add_interface("nm-a", "lab-a");
        remote.add_interface("nm-b", "lab-b");
        target.local = {&local, "nm-a", ""};
        target.remote = {&remote, "nm-b", ""};
        target.base.host = "198.18.0.2";
        target.base.port = 5301;
        local_original = local.state("nm-a");
        remote_original = remote.state("nm-b");
    }

    SweepOutcome run(const SweepConfig& config, const SweepOptions& options = {}, std::stop_token stop = {}) {
        SweepServices services{journal, traffic, probe, clock, &observer, {}, remote_host, &load};
        services.local_host.kernel = "6.18.0-test";
        return run_sweep(config, target, services, options, std::move(stop));
    }

    // Both ends exactly as they were: MTU and every feature's wanted and active state.
    void check_restored() const {
        CHECK(Json(local.state("nm-a").features.size()) == Json(local_original.features.size()));
        for (const auto* pair : {&local, &remote}) {
            const auto& now = pair == &local ? local.state("nm-a") : remote.state("nm-b");
            const auto& was = pair == &local ? local_original : remote_original;
            CHECK(now.mtu == was.mtu);
            for (const auto& [name, f] : was.features) {
                INFO(now.name << " " << name);
                CHECK(now.features.at(name).wanted == f.wanted);
                CHECK(now.features.at(name).active == f.active);
            }
        }
    }
};

}  // namespace nm::test
