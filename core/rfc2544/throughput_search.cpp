#include "core/rfc2544/throughput_search.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace nm {
namespace {

void validate(const SearchOptions& o) {
    if (!(o.max_fps > 0)) throw usage_error("rfc2544: max rate must be positive (set --line-rate or the link speed)");
    if (o.min_fps < 0 || o.min_fps >= o.max_fps) throw usage_error("rfc2544: min rate must be between 0 and the max rate");
    if (!(o.resolution_pct > 0) || o.resolution_pct >= 100) throw usage_error("rfc2544: resolution_pct must be in (0, 100)");
    if (o.max_trials == 0) throw usage_error("rfc2544: max_trials must be at least 1");
    if (o.loss_tolerance_pct < 0 || o.loss_tolerance_pct >= 100) throw usage_error("rfc2544: loss_tolerance_pct must be in [0, 100)");
}

}  // namespace

SearchResult find_throughput(const TrialFunction& trial, const SearchOptions& options, std::stop_token stop) {
    validate(options);
    SearchResult result;
    const auto passes = [&](const TrialOutcome& t) { return t.sent > 0 && t.loss_pct() <= options.loss_tolerance_pct; };
    const auto run = [&](double offered) {
        TrialOutcome t = trial(offered);
        t.offered_fps = offered;
        const bool ok = passes(t);
        result.history.push_back({t, ok});
        ++result.trials;
        result.generator_max_fps = std::max(result.generator_max_fps, t.sent_fps);
        if (t.sent_fps < offered * (1.0 - options.generator_shortfall_pct / 100.0)) result.generator_limited = true;
        if (ok && t.sent_fps >= result.throughput_fps) {
            result.throughput_fps = t.sent_fps;
            result.at_rate = t;
            result.found = true;
        }
        return ok;
    };

    double low = options.min_fps;
    double high = options.max_fps;
    // The resolution is relative to the bracket's upper end, not to max_fps: a device that passes 1% of
    // line rate (a 50 Mbit/s shaper on a 10 Gbit/s veth) is still found to within resolution_pct of itself.
    const double fraction = options.resolution_pct / 100.0;
    if (!run(high)) {
        // Never offer more than the generator managed: above it, trials measure the generator.
        high = std::min(high, std::max(result.history.back().outcome.sent_fps, low + high * fraction));
        // While nothing has passed, the search goes down to `fraction` of where it started, no further.
        const double floor = high * fraction;
        while (result.trials < options.max_trials && high - low > high * fraction && !(low <= options.min_fps && high <= floor)) {
            if (stop.stop_requested()) {
                result.interrupted = true;
                return result;
            }
            const double mid = (low + high) / 2.0;
            if (run(mid)) {
                low = mid;
            } else {
                high = mid;
            }
        }
    }
    // Confirm at the reported rate. A rate that passed once by luck (a shaper's burst and queue absorb a
    // little excess within one trial) fails here: it then counts as a failed trial and the search backs
    // off below it, each step twice the last (the resolution, then 2x, 4x, ...), until a rate passes and
    // is confirmed or kBackoffSteps steps are spent. A fixed step would give up while still inside the
    // band where luck decides (on a loaded host that band is wider than one resolution step).
    constexpr int kBackoffSteps = 4;
    double step = std::max(fraction, 0.005);
    int backoffs = 0;
    while (result.found && !stop.stop_requested()) {
        result.confirmation = trial(result.at_rate.offered_fps);
        result.confirmation.offered_fps = result.at_rate.offered_fps;
        result.confirmed = passes(result.confirmation);
        if (result.confirmed) break;
        result.history.push_back({result.confirmation, false});
        ++result.trials;
        double offered = result.at_rate.offered_fps;
        result.found = false;
        result.throughput_fps = 0;
        while (!result.found && backoffs < kBackoffSteps && !stop.stop_requested()) {
            ++backoffs;
            offered *= 1.0 - step;
            step *= 2;
            run(offered);
        }
    }
    result.interrupted = stop.stop_requested();
    return result;
}

}  // namespace nm
