#include "ethtool_ctl/link_settle.hpp"

#include <thread>

namespace nm {

namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

constexpr auto kPoll = std::chrono::milliseconds(10);

double seconds_between(SteadyTime a, SteadyTime b) { return std::chrono::duration<double>(b - a).count(); }

bool is_back(const CarrierState& now, const CarrierState& before) {
    // A device that never reports an operstate ("unknown", e.g. some tunnels) is back with its carrier.
    const bool operstate_ok = now.operstate == "up" || (before.operstate != "up" && now.operstate == before.operstate);
    return now.admin_up && now.carrier && operstate_ok;
}

}  // namespace

std::string describe_link(const CarrierState& now) {
    return std::string(now.admin_up ? "" : "set down, ") + (now.carrier ? "carrier" : "no carrier") + ", operstate " +
           (now.operstate.empty() ? "unknown" : now.operstate);
}

bool wait_for_carrier(DeviceControl& device, std::string_view ifname, std::chrono::milliseconds bound, std::stop_token stop) {
    const SteadyTime deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        const auto now = device.carrier(ifname);
        if (!now || now->carrier) return true;
        if (std::chrono::steady_clock::now() >= deadline || stop.stop_requested()) return false;
        std::this_thread::sleep_for(kPoll);
    }
}

std::optional<LinkSettle> wait_for_link(DeviceControl& device, std::string_view ifname, const std::optional<CarrierState>& before,
                                        const ChangeWindow& change, bool on_a_bus, const LinkWait& wait) {
    if (!before || wait.bound.count() <= 0 || !before->admin_up || !before->carrier) return std::nullopt;
    LinkSettle out;
    const SteadyTime deadline = change.ended + wait.bound;
    const SteadyTime watch_until = change.ended + (on_a_bus ? wait.late_drop_watch : std::chrono::milliseconds(0));
    bool lost = false;  // the carrier is gone since lost_since
    SteadyTime lost_since{};
    CarrierState now = *before;
    for (bool first = true;; first = false) {
        const auto read = device.carrier(ifname);
        const SteadyTime t = std::chrono::steady_clock::now();
        if (!read) return std::nullopt;
        now = *read;
        const uint32_t drops = now.carrier_down_count - before->carrier_down_count;  // wraps like the kernel's counter
        if (drops > out.carrier_drops) {
            // A loss the kernel counted since the last poll: it started no earlier than the change (at the
            // first poll) or the previous poll.
            if (!lost) {
                lost = true;
                lost_since = first ? change.started : t - kPoll;
            }
            out.carrier_drops = drops;
        }
        if (!is_back(now, *before) && !lost) {
            lost = true;
            lost_since = t;
        }
        if (is_back(now, *before)) {
            if (lost) {
                out.link_down_s += seconds_between(lost_since, t);
                lost = false;
            }
            if (out.carrier_drops > 0 || out.link_down_s > 0) {
                out.wait_s = seconds_between(change.ended, t);
                return out;
            }
            if (t >= watch_until) return out;  // never left: 0 down, 0 waited
        }
        if (t >= deadline || wait.stop.stop_requested()) break;
        std::this_thread::sleep_for(kPoll);
    }
    if (lost) out.link_down_s += seconds_between(lost_since, std::chrono::steady_clock::now());
    out.wait_s = seconds_between(change.ended, std::chrono::steady_clock::now());
    out.back = false;
    out.state = describe_link(now);
    return out;
}

}  // namespace nm
