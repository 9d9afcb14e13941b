#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "matrix/config.hpp"
#include "matrix/runner.hpp"
#include "tests/support/matrix_world.hpp"

using nm::CellStatus;
using nm::test::cell;
using nm::test::World;

// A real NIC's link after a change, as these tests script it on the fakes: the driver resets the device
// and its carrier is gone for a while (veth never does this; the real kernel's behaviour is checked in
// tests/integration/ethtool_ctl/link_settle_test.cpp and on the VM lab's e1000e).

namespace {

using Steady = std::chrono::steady_clock;

nm::SweepConfig link_config(const std::string& patch = "{}") {
    return nm::test::sweep_config({R"({
      "offloads": [{"name": "original", "features": {}}],
      "mtu": [1500, 9000],
      "traffic": [{"streams": 1}],
      "duration_s": 1, "omit_s": 0, "repetitions": 2, "order": "sequential"})",
                                   patch});
}

// A NIC that drops its carrier for `down` (real time) whenever its MTU changes; `forever_at` an MTU at
// which it never comes back; `last_drop` (when not 0) the drop after which it never comes back.
struct ResettingNic {
    std::chrono::milliseconds down{60};
    uint32_t forever_at = 0;
    uint32_t last_drop = 0;
    uint32_t mtu = 1500;
    uint32_t drops = 0;
    Steady::time_point back_at{};

    std::optional<nm::CarrierState> operator()(const nm::LinkState& now) {
        if (now.mtu != mtu) {
            mtu = now.mtu;
            ++drops;
            back_at = Steady::now() + down;
        }
        nm::CarrierState s;
        s.admin_up = true;
        s.carrier = mtu != forever_at && (last_drop == 0 || drops < last_drop) && Steady::now() >= back_at;
        s.operstate = s.carrier ? "up" : "down";
        s.carrier_down_count = drops;
        return s;
    }
};

}  // namespace

TEST_CASE("A change that drops the link is waited out and measured only after, its first run records link_down_s and settle_s", "[unit]") {
    World w;
    auto nic = std::make_shared<ResettingNic>();
    w.local.on_carrier = [nic](const nm::LinkState& s) { return (*nic)(s); };
    const auto out = w.run(link_config());

    const auto& jumbo = cell(out.results, "original/mtu9000/tcp-p1");
    REQUIRE(jumbo.status == CellStatus::Ok);
    REQUIRE(jumbo.runs.size() == 2);
    REQUIRE(jumbo.runs[0].link);
    const auto& link = *jumbo.runs[0].link;
    // The carrier was gone for at least the scripted 60 ms, and the sweep waited at least that long.
    CHECK(link.link_down_s >= 0.06);
    CHECK(link.settle_s >= 0.06);
    REQUIRE(link.ends.size() == 1);  // both ends changed; only the local one can tell (and it dropped)
    CHECK(link.ends[0].end == "local");
    CHECK(link.ends[0].ifname == "nm-a");
    CHECK(link.ends[0].link.carrier_drops == 1);
    CHECK(link.ends[0].link.back);
    // The second repetition of the visit had no change before it.
    CHECK_FALSE(jumbo.runs[1].link);
    CHECK(jumbo.summary.at("link_down_s").n == 1);
    CHECK(jumbo.summary.at("link_down_s").median >= 0.06);

    // The first cell changed nothing (1500 is the original): its link stayed, 0 s down.
    const auto& first = cell(out.results, "original/mtu1500/tcp-p1");
    REQUIRE(first.runs[0].link);
    CHECK(first.runs[0].link->link_down_s == 0);
    CHECK(first.runs[0].link->ends[0].link.carrier_drops == 0);

    // After the drop the path was asked again (a frame of at most 1280 bytes) before the preflight.
    CHECK(std::count(w.probe.probed.begin(), w.probe.probed.end(), 1280u) >= 1);
    w.check_restored();
}

TEST_CASE("A link that does not come back within link_wait_s makes the cell link_lost, rolled back, and the sweep goes on", "[unit]") {
    World w;
    auto nic = std::make_shared<ResettingNic>();
    nic->forever_at = 9000;
    w.local.on_carrier = [nic](const nm::LinkState& s) { return (*nic)(s); };
    const auto out = w.run(link_config(R"({"link_wait_s": 0.2})"));

    const auto& jumbo = cell(out.results, "original/mtu9000/tcp-p1");
    CHECK(jumbo.status == CellStatus::LinkLost);
    CHECK(jumbo.runs.empty());  // never measured
    CHECK_THAT(jumbo.error, Catch::Contains("nm-a") && Catch::Contains("not back 0.2 s after the change") && Catch::Contains("no carrier"));
    CHECK(cell(out.results, "original/mtu1500/tcp-p1").status == CellStatus::Ok);
    // Rolled back at once: the 9000 never outlived its cell, and everything ended as it began.
    CHECK(w.local.state("nm-a").mtu == 1500);
    w.check_restored();
    CHECK(nm::Json(jumbo).at("status") == "link_lost");
}

TEST_CASE("A link that comes back while the path never answers again makes the cell link_lost", "[unit]") {
    World w;
    auto nic = std::make_shared<ResettingNic>();
    nic->down = std::chrono::milliseconds(20);
    w.local.on_carrier = [nic](const nm::LinkState& s) { return (*nic)(s); };
    w.probe.max_mtu = 0;  // nothing crosses
    const auto out = w.run(link_config(R"({"link_wait_s": 0.3})"));
    const auto& jumbo = cell(out.results, "original/mtu9000/tcp-p1");
    CHECK(jumbo.status == CellStatus::LinkLost);
    CHECK_THAT(jumbo.error, Catch::Contains("the path did not answer within 0.3 s"));
    w.check_restored();
}

TEST_CASE("A rollback whose link does not come back is waited for once and noted once", "[unit]") {
    World w;
    auto nic = std::make_shared<ResettingNic>();
    nic->down = std::chrono::milliseconds(20);
    nic->last_drop = 2;  // the 9000 cell's drop comes back; taking it back to 1500 drops the link for good
    w.local.on_carrier = [nic](const nm::LinkState& s) { return (*nic)(s); };
    w.probe.max_mtu = 0;  // the path never answers after the change: the cell is rolled back
    const auto out = w.run(link_config(R"({"link_wait_s": 0.3})"));
    CHECK(cell(out.results, "original/mtu9000/tcp-p1").status == CellStatus::LinkLost);
    CHECK(nic->drops == 2);
    const auto rollback_notes = std::count_if(w.observer.notes.begin(), w.observer.notes.end(), [](const std::string& n) {
        return n.find("after taking the cell's change back") != std::string::npos;
    });
    CAPTURE(w.observer.notes);
    CHECK(rollback_notes == 1);
    CHECK(std::any_of(w.observer.notes.begin(), w.observer.notes.end(), [](const std::string& n) {
        return n.rfind("nm-a", 0) == 0 && n.find("the link was still not back 0.3 s after taking the cell's change back") != std::string::npos;
    }));
    CHECK(w.local.state("nm-a").mtu == 1500);
    w.check_restored();
}

TEST_CASE("link_wait_s 0 waits for nothing and records no link figures", "[unit]") {
    World w;
    auto nic = std::make_shared<ResettingNic>();
    w.local.on_carrier = [nic](const nm::LinkState& s) { return (*nic)(s); };
    const auto out = w.run(link_config(R"({"link_wait_s": 0})"));
    for (const auto& c : out.results.cells) {
        for (const auto& r : c.runs) CHECK_FALSE(r.link);
    }
}

TEST_CASE("link_wait_s out of range is refused naming the field", "[unit]") {
    CHECK_THROWS_WITH(link_config(R"({"link_wait_s": 601})"), Catch::Contains("link_wait_s"));
    CHECK_THROWS_WITH(link_config(R"({"link_wait_s": -1})"), Catch::Contains("link_wait_s"));
}
