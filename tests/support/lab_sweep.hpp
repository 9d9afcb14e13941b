#pragma once
// A sweep on a real lab through device controls and an engine the test chooses, for the matrix
// integration tests: the rest of the sweep's services are the real path probe, the steady clock and a
// journal in memory.
#include "core/base/clock.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/runner.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/scoped_lab.hpp"

namespace nm::test {

/// run_sweep of `config` from `lab`'s client end to its server end: `local` and `remote` change the two
/// ends, `traffic` measures; the path is probed with ICMP to the server's IPv4 address.
inline SweepOutcome run_lab_sweep(const ScopedLab& lab, const SweepConfig& config, DeviceControl& local, DeviceControl& remote,
                                  TrafficRunner& traffic) {
    FakeJournal journal{{&local, &remote}};
    IcmpPathProbe probe{lab.client().netns, strip_prefix(lab.server().ipv4)};
    SteadyClock clock;
    SweepTarget target;
    target.local = {&local, lab.client().ifname, ""};
    target.remote = {&remote, lab.server().ifname, ""};
    target.base.host = strip_prefix(lab.server().ipv4);
    SweepServices services{journal, traffic, probe, clock, nullptr, {}, {}};
    return run_sweep(config, target, services, {}, {});
}

}  // namespace nm::test
