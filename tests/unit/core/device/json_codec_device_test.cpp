#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/device/device_codec.hpp"
#include "ethtool_ctl/journal_codec.hpp"

namespace {

nm::LinkState sample_state() {
    nm::LinkState s;
    s.name = "nm-a";
    s.netns = "lab-a";
    s.driver = {"veth", "1.0", "", ""};
    s.speed_mbps = 10000;
    s.duplex = "full";
    s.operstate = "up";
    s.mtu = 1500;
    s.mtu_min = 68;
    s.mtu_max = 65535;
    s.features["rx-gro"] = {false, true, false};
    s.features["rx-lro"] = {false, false, true};
    s.feature_order = {"rx-gro", "rx-lro"};
    s.channels["rx_max"] = 2;
    s.counters.rx_crc_errors = 7;
    s.counters.tx_window_errors = 3;
    s.identity = {4, 4026532999, 7, "", "veth"};
    return s;
}

}  // namespace

TEST_CASE("LinkState round-trips through JSON, with and without a speed", "[unit]") {
    auto s = sample_state();
    auto back = nm::Json(s).get<nm::LinkState>();
    CHECK(nm::Json(back) == nm::Json(s));
    CHECK(back.features.at("rx-gro").wanted);
    CHECK(back.counters.rx_crc_errors == 7);
    CHECK(back.speed_mbps == 10000u);
    CHECK(back.identity.netns_ino == 4026532999u);
    CHECK(back.identity.ifindex == 7);
    CHECK(back.identity.kind == "veth");
    CHECK(back.identity.known());
    // A state written before identities existed reads as one whose identity is unknown.
    nm::Json old = nm::Json(s);
    old.erase("identity");
    CHECK_FALSE(old.get<nm::LinkState>().identity.known());
    s.speed_mbps.reset();
    CHECK(nm::Json(s).at("speed_mbps").is_null());
    CHECK_FALSE(nm::Json(s).get<nm::LinkState>().speed_mbps);
}

TEST_CASE("ApplyReport and LinkSettings round-trip, outcomes are words", "[unit]") {
    nm::ApplyReport r;
    r.ifname = "nm-a";
    r.path = "ioctl";
    r.features.push_back({"tx-checksum-ip-generic", "tx", false, true, false, nm::SettingOutcome::Applied});
    r.features.push_back({"tx-tcp-segmentation", "", std::nullopt, true, false, nm::SettingOutcome::SideEffect});
    r.mtu = nm::MtuChange{9000, 1500, 9000, nm::SettingOutcome::Applied};
    r.active_after = {{"tx-tcp-segmentation", false}};
    r.mtu_after = 9000;
    r.note = std::string("restored");
    const nm::Json j = r;
    CHECK(j.at("features").at(1).at("outcome") == "side_effect");
    CHECK(j.at("features").at(1).at("requested").is_null());
    CHECK(j.at("all_requested_hold") == true);
    const auto back = j.get<nm::ApplyReport>();
    CHECK(nm::Json(back) == j);

    nm::LinkSettings ls;
    ls.mtu = 9000;
    ls.features = {{"tso", false}};
    CHECK(nm::Json(nm::Json(ls).get<nm::LinkSettings>()) == nm::Json(ls));
    CHECK_THROWS_AS(nm::Json("maybe").get<nm::SettingOutcome>(), nm::Error);
    for (auto o : {nm::SettingOutcome::Applied, nm::SettingOutcome::AlreadySet, nm::SettingOutcome::Fixed, nm::SettingOutcome::Unsupported,
                   nm::SettingOutcome::SideEffect}) {
        CHECK(nm::Json(o).get<nm::SettingOutcome>() == o);
    }
}

TEST_CASE("Journal entries and restore reports round-trip, actions are words", "[unit]") {
    nm::JournalEntry e;
    e.owner = {4242, 123456, "0f5e6a4c-1d2b-4c3a-9e8f-7a6b5c4d3e2f", "nicmatrix sweep x.json --lab"};
    e.original = sample_state();
    e.where = "lab-a";
    const nm::Json j = e;
    CHECK(j.at("owner").at("pid") == 4242);
    const auto back = j.get<nm::JournalEntry>();
    CHECK(nm::Json(back) == j);
    CHECK(back.owner == e.owner);

    nm::JournalReport r;
    r.action = nm::JournalAction::LeftAlone;
    r.ifname = "nm-a";
    r.where = "lab-a";
    r.owner = e.owner;
    r.note = "left alone";
    nm::Json rj = r;
    CHECK(rj.at("action") == "left_alone");
    CHECK(rj.at("applied").is_null());
    CHECK(nm::Json(rj.get<nm::JournalReport>()) == rj);
    r.action = nm::JournalAction::Restored;
    r.applied = nm::ApplyReport{};
    r.applied->ifname = "nm-x";
    rj = r;
    CHECK(rj.at("action") == "restored");
    CHECK(rj.get<nm::JournalReport>().applied->ifname == "nm-x");
    rj["action"] = "vanished";
    CHECK_THROWS_AS(rj.get<nm::JournalReport>(), nm::Error);
}
