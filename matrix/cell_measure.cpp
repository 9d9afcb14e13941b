#include "matrix/cell_measure.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <utility>

#include "core/base/error.hpp"
#include "core/rfc2544/rfc2544.hpp"
#include "matrix/modes.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"
#include "matrix/sweep_schedule.hpp"

namespace nm {
namespace {

// With milliseconds, for the start of every run: "2026-11-30T02:00:01.234Z".
std::string utc_now_precise() {
    const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::time_t t = static_cast<std::time_t>(since / 1000);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[40];
    const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buf + n, sizeof buf - n, ".%03lldZ", static_cast<long long>(since % 1000));
    return buf;
}

}  // namespace

CellMeasure::CellMeasure(const SweepConfig& config, const SweepTarget& target, SweepServices& services, std::stop_token stop)
    : config_(config), target_(target), s_(services), stop_(std::move(stop)) {}

TestSpec CellMeasure::test_spec(const CellSpec& cell) const {
    TestSpec spec = test_spec_for(cell.traffic, config_, target_.base);
    spec.client_cpus = config_.affinity.client;
    spec.server_cpus = config_.affinity.server;
    spec.interval_s = target_.base.interval_s;
    // Frame-size tables are many short trials: only streams are profiled.
    if (!cell.traffic.rfc2544) {
        spec.profile = config_.profile;
        spec.profile_hz = config_.profile_hz;
        spec.profile_categories = target_.base.profile_categories;
    }
    return spec;
}

// Samples the machine until it is quiet or max_wait_s has passed; `disturbed` when it never was. None
// when the config turns the check off or the sweep has no load probe.
std::optional<BackgroundLoad> CellMeasure::wait_for_quiet(bool& disturbed) {
    disturbed = false;
    const auto& f = config_.interference;
    if (s_.load == nullptr || f.sample_ms == 0) return std::nullopt;
    const auto loud = [&](const BackgroundLoad& b) { return b.busy_pct > f.max_busy_pct || b.steal_pct > f.max_steal_pct; };
    const auto t0 = s_.clock.now();
    const auto window = std::chrono::milliseconds(f.sample_ms);
    BackgroundLoad b = s_.load->sample(window, stop_);
    while (loud(b) && !stop_.stop_requested() && seconds_between(t0, s_.clock.now()) < f.max_wait_s) b = s_.load->sample(window, stop_);
    b.waited_s = std::max(0.0, seconds_between(t0, s_.clock.now()) - b.window_s);
    disturbed = loud(b);
    return b;
}

bool CellMeasure::measure_one(const TestSpec& spec, CellResult& result, std::optional<ChangeLink>& link) {
    if (stop_.stop_requested()) return false;
    const std::string rep = "repetition " + std::to_string(result.runs.size() + 1) + ": ";
    try {
        bool disturbed = false;
        const auto background = wait_for_quiet(disturbed);
        if (stop_.stop_requested()) return false;
        const std::string started = utc_now_precise();
        const size_t repetition = result.runs.size() + 1;
        TrafficRunner::LiveSink live;
        if (s_.observer != nullptr && spec.interval_s > 0) {
            live = [&](const LiveInterval& i) { s_.observer->on_interval(result.spec.key, repetition, i); };
        }
        RunResult run = live ? s_.traffic.run_live(spec, stop_, live) : s_.traffic.run(spec, stop_);
        run.started = started;
        // The first run after the visit's change carries what the change did to the links.
        run.link = std::exchange(link, std::nullopt);
        run.background = background;
        run.disturbed = disturbed;
        // A run that ended badly is kept, and ends the cell with `status` and the run's error (else `why`).
        const auto end_cell = [&](CellStatus status, const char* why) {
            result.status = status;
            result.error = rep + (run.error.empty() ? why : run.error);
            result.runs.push_back(std::move(run));
            return false;
        };
        switch (run.status) {
            case RunStatus::Ok: result.runs.push_back(std::move(run)); return true;
            case RunStatus::Interrupted: return false;
            case RunStatus::Stalled: return end_cell(CellStatus::Stalled, "data stopped flowing");
            case RunStatus::PeerLost:
            case RunStatus::Limited: return end_cell(CellStatus::Failed, "the server end vanished");
            case RunStatus::Failed: return end_cell(CellStatus::Failed, "a traffic worker failed");
        }
    } catch (const Error& e) {
        result.status = CellStatus::Failed;
        result.error = rep + e.what();
    }
    return false;
}

void CellMeasure::finish_summary(CellResult& result) const {
    result.summary = summarize_runs(result.runs, confidence());
    result.precision_met.reset();
    result.modes.reset();
    if (result.status != CellStatus::Ok || result.runs.empty() || result.spec.traffic.rfc2544) return;
    const std::string metric =
        config_.precision ? precision_metric(*config_.precision, result.spec.traffic.test) : headline_metric(result.spec.traffic.test);
    result.modes = cell_modes(result.runs, metric, confidence(), config_.precision);
    if (!config_.precision) return;
    // With modes, the precision applies to each: a median between two modes is no figure to make precise.
    if (result.modes) {
        result.precision_met =
            std::all_of(result.modes->modes.begin(), result.modes->modes.end(), [](const ValueMode& m) { return m.precision_met.value_or(false); });
        return;
    }
    const auto it = result.summary.find(metric);
    result.precision_met = it != result.summary.end() && precision_met(it->second, *config_.precision);
}

void CellMeasure::measure_rfc2544(const CellSpec& cell, const TestSpec& base, CellResult& result,
                                  const std::function<std::optional<double>()>& local_link_bps, std::vector<InterfaceCoalesce> interfaces) {
    try {
        const std::optional<double> link_bps = local_link_bps();
        Rfc2544Result table = run_rfc2544(s_.traffic, base, *cell.traffic.rfc2544, link_bps, stop_);
        table.interfaces = std::move(interfaces);
        const bool any = std::any_of(table.rows.begin(), table.rows.end(), [](const FrameRow& r) { return r.error.empty(); });
        if (!any && !table.rows.empty()) {
            result.status = CellStatus::Failed;
            result.error = table.rows.front().frame + ": " + table.rows.front().error;
        }
        if (table.interrupted) {
            result.status = CellStatus::Failed;
            result.error = "interrupted";
        }
        result.rfc2544 = std::move(table);
    } catch (const Error& e) {
        result.status = CellStatus::Failed;
        result.error = std::string("rfc2544: ") + e.what();
    }
}

void CellMeasure::cooldown() {
    if (config_.cooldown_s <= 0) return;
    const auto until = s_.clock.now() + std::chrono::duration_cast<Clock::time_point::duration>(std::chrono::duration<double>(config_.cooldown_s));
    // Wake up every 100 ms so a stop does not wait for the whole cooldown.
    while (!stop_.stop_requested() && s_.clock.now() < until) {
        s_.clock.sleep_until(std::min(until, s_.clock.now() + std::chrono::milliseconds(100)));
    }
}

}  // namespace nm
