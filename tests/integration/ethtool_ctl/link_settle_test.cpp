#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "tests/support/command.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

// The wait for the link after a change, on the real kernel. veth never resets itself on a change, so
// the device here does what a NIC's driver does on an MTU change: it takes the link down as part of the
// change (the veth peer set down, which takes this end's carrier), and a thread brings it back a while
// later, as autonegotiation would. The carrier itself, its counter and the timing are the kernel's; the
// oracles are sysfs's carrier_down_count and `ip link`, read beside the code.

namespace {

using nm::test::run_in_netns;

// Applies through the real device control, then drops the link the way a resetting driver does.
class ResettingVeth final : public nm::DeviceControl {
public:
    ResettingVeth(nm::NetlinkDeviceControl& inner, nm::LabInterface peer) : inner_(inner), peer_(std::move(peer)) {}
    std::optional<std::chrono::milliseconds> back_after;  ///< none: the link stays down

    nm::LinkState read(std::string_view ifname) override { return inner_.read(ifname); }
    void validate(std::string_view ifname, const nm::LinkSettings& wanted) override { inner_.validate(ifname, wanted); }
    std::optional<nm::CarrierState> carrier(std::string_view ifname) override { return inner_.carrier(ifname); }
    nm::ApplyReport apply(std::string_view ifname, const nm::LinkSettings& wanted) override {
        nm::ApplyReport r = inner_.apply(ifname, wanted);
        REQUIRE(run_in_netns(peer_.netns, "ip link set " + peer_.ifname + " down").exit_status == 0);
        if (back_after) {
            const auto delay = *back_after;
            bring_up_ = std::thread([this, delay] {
                std::this_thread::sleep_for(delay);  // the "negotiation": how long the link stays down, at least
                run_in_netns(peer_.netns, "ip link set " + peer_.ifname + " up");
            });
        }
        return r;
    }
    ~ResettingVeth() override {
        if (bring_up_.joinable()) bring_up_.join();
    }

private:
    nm::NetlinkDeviceControl& inner_;
    nm::LabInterface peer_;
    std::thread bring_up_;
};

uint64_t carrier_down_count(const nm::LabInterface& end) {
    const auto r = run_in_netns(end.netns, "cat /sys/class/net/" + end.ifname + "/carrier_down_count");
    REQUIRE(r.exit_status == 0);
    return std::stoull(r.output);
}

// The client end of a lab of its own, its real device control, and a journal that remembers it.
struct LabEnd {
    nm::test::ScopedLab lab;
    nm::LabInterface a = lab.client();
    nm::test::TempDir dir;
    nm::NetlinkDeviceControl real{a.netns};
    nm::FileSettingsJournal journal{dir.file("journal.json")};
    LabEnd() { journal.remember(real.read(a.ifname)); }

    // MTU 4000 through `device`, journalled, the link waited for at most `bound`.
    nm::ApplyReport change_mtu(nm::DeviceControl& device, std::chrono::milliseconds bound) {
        nm::LinkSettings change;
        change.mtu = 4000;
        nm::LinkWait wait;
        wait.bound = bound;
        return nm::apply_recorded(device, journal, a.ifname, change, nullptr, wait).report;
    }
};

}  // namespace

TEST_CASE("After a change that drops the carrier, apply_recorded waits until it is back and says how long it was down", "[integration][link]") {
    LabEnd end;
    const auto& a = end.a;
    ResettingVeth device(end.real, end.lab.server());
    device.back_after = std::chrono::milliseconds(1200);
    const uint64_t drops_before = carrier_down_count(a);

    const auto report = end.change_mtu(device, std::chrono::seconds(10));

    REQUIRE(report.link);
    const auto& link = *report.link;
    CHECK(link.back);
    // The peer stayed down at least 1.2 s; the wait saw the carrier gone for that long (10 ms polls).
    CHECK(link.link_down_s >= 1.15);
    CHECK(link.wait_s >= 1.15);
    CHECK(link.link_down_s < 10);
    // The kernel's own count of carrier losses agrees with the report's.
    CHECK(carrier_down_count(a) - drops_before == link.carrier_drops);
    CHECK(link.carrier_drops >= 1);
    // Back means back: carrier (LOWER_UP) and operstate UP, as `ip` shows them right after the call.
    const auto shown = run_in_netns(a.netns, "ip -o link show " + a.ifname);
    CHECK_THAT(shown.output, Catch::Contains("LOWER_UP") && Catch::Contains("state UP") && Catch::Contains("mtu 4000"));
}

TEST_CASE("A carrier that does not come back is reported not back at the bound, with what the link shows", "[integration][link]") {
    LabEnd end;
    ResettingVeth device(end.real, end.lab.server());  // never brought back
    const auto t0 = std::chrono::steady_clock::now();
    const auto report = end.change_mtu(device, std::chrono::milliseconds(500));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    REQUIRE(report.link);
    CHECK_FALSE(report.link->back);
    CHECK_THAT(report.link->state, Catch::Contains("no carrier"));
    CHECK(took >= 0.5);  // it waited the bound out
    const auto shown = run_in_netns(end.a.netns, "ip -o link show " + end.a.ifname);
    CHECK_THAT(shown.output, Catch::Contains("NO-CARRIER"));
}

TEST_CASE("A change on a link that never drops reports 0 s down without waiting", "[integration][link]") {
    LabEnd end;
    const auto report = end.change_mtu(end.real, std::chrono::seconds(10));
    REQUIRE(report.link);
    CHECK(report.link->back);
    CHECK(report.link->link_down_s == 0);
    CHECK(report.link->carrier_drops == 0);
    CHECK(report.link->wait_s == 0);
}
