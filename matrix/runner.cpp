#include "matrix/runner.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/rfc2544.hpp"
#include "matrix/config.hpp"
#include "matrix/results_store.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

bool applies(ApplyTo to, EndRole role) {
    switch (role) {
        case EndRole::Local: return to == ApplyTo::Both || to == ApplyTo::Local;
        case EndRole::Remote: return to == ApplyTo::Both || to == ApplyTo::Peer;
        case EndRole::Dut: return to == ApplyTo::Dut;
    }
    return false;
}

bool applies(ApplyTo to, bool remote) { return applies(to, remote ? EndRole::Remote : EndRole::Local); }

bool uses_dut(const SweepConfig& config) { return config.apply_offloads_to == ApplyTo::Dut || config.apply_mtu_to == ApplyTo::Dut; }

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The state of one end as the results file keeps it: MTU and the active state of every feature the
// device lets us change (fixed ones are in hosts.*.interface.original and cannot differ between cells).
EndSettings effective(const LinkState& original, uint32_t mtu, const std::map<std::string, bool>& active) {
    EndSettings e;
    e.mtu = mtu;
    for (const auto& [name, on] : active) {
        const auto it = original.features.find(name);
        if (it == original.features.end() || !it->second.fixed) e.features[name] = on;
    }
    return e;
}

EndSettings end_settings(const LinkState& s) {
    std::map<std::string, bool> active;
    for (const auto& [name, f] : s.features) active[name] = f.active;
    return effective(s, s.mtu, active);
}

InterfaceInfo interface_info(const LinkState& s) {
    InterfaceInfo i;
    i.name = s.name;
    i.netns = s.netns;
    i.driver = s.driver.driver;
    i.firmware = s.driver.firmware;
    i.bus_info = s.driver.bus_info;
    i.speed_mbps = s.speed_mbps;
    i.mtu_min = s.mtu_min;
    i.mtu_max = s.mtu_max;
    i.original = end_settings(s);
    i.rings = s.rings;
    i.coalesce = s.coalesce;
    i.channels = s.channels;
    return i;
}

// Why requested settings did not hold, in ethtool's words: "nm-a: tso fixed, mtu 9000 -> 1500".
std::string infeasible_reason(const ApplyReport& r) {
    std::string reason;
    const auto add = [&](const std::string& s) { reason += (reason.empty() ? "" : ", ") + s; };
    for (const auto& c : r.features) {
        if (!c.requested) continue;
        const std::string name = c.requested_as.empty() ? c.name : c.requested_as + " (" + c.name + ")";
        if (c.outcome == SettingOutcome::Fixed) add(name + " is fixed " + (c.after ? "on" : "off"));
        if (c.outcome == SettingOutcome::Unsupported) add(name + " requested " + (*c.requested ? "on" : "off") + " but stayed " + (c.after ? "on" : "off"));
    }
    if (r.mtu && r.mtu->outcome != SettingOutcome::Applied && r.mtu->outcome != SettingOutcome::AlreadySet) {
        add("mtu " + std::to_string(r.mtu->requested) + " not applied (stayed " + std::to_string(r.mtu->after) + ")");
    }
    return r.ifname + ": " + (reason.empty() ? "settings did not hold" : reason);
}

// The runtime of one end during a sweep: what it was before, and what the last cell left on it.
struct EndRuntime {
    const SweepEnd* end = nullptr;
    EndRole role = EndRole::Local;
    bool remote = false;
    bool changes = false;     // the sweep changes something on this end
    LinkState original;
    bool features_dirty = false;   // a profile's features were applied since the last reset
};

// How long the check after each cell waits for the peer agent's answer before counting it as lost.
constexpr auto kAgentAliveTimeout = std::chrono::seconds(5);

// The peer agent was lost and did not come back: the sweep stops (Sweep::stop_without_agent).
struct AgentGone {
    std::string why;
};

class Sweep {
public:
    Sweep(const SweepConfig& config, const SweepTarget& target, SweepServices& services, const SweepOptions& options,
          std::stop_token stop)
        : config_(config), target_(target), s_(services), options_(options), stop_(std::move(stop)), cells_(expand_cells(config)) {}

    SweepOutcome run();

private:
    void prepare_results();
    CellResult run_cell(const CellSpec& cell);
    bool apply_end(EndRuntime& end, const CellSpec& cell, CellResult& result);
    bool confirm_change(const CellSpec& cell, CellResult& result, const std::vector<LinkState>& before);
    CellResult run_cell_with_agent(const CellSpec& cell);
    bool agent_lost() const;
    void recover_agent();
    void stop_without_agent(const std::string& why);
    std::vector<ApplyReport> restore_local();
    void measure(const CellSpec& cell, CellResult& result);
    void record(CellResult result);
    void save() {
        if (!options_.output_path.empty()) save_results(outcome_.results, options_.output_path);
    }
    void note(const std::string& text) {
        if (s_.observer) s_.observer->on_note(text);
    }
    double planned_s(const CellSpec& cell) const { return planned_seconds(config_, cell) + 0.2; }
    void measure_rfc2544(const CellSpec& cell, const TestSpec& base, CellResult& result);
    void cooldown();
    static std::string fingerprint(const CellResult& r) {
        return Json{{"local", r.applied_local ? Json(*r.applied_local) : Json()},
                    {"remote", r.applied_remote ? Json(*r.applied_remote) : Json()},
                    {"dut", r.applied_dut},
                    {"traffic", r.spec.traffic}}
            .dump();
    }

    const SweepConfig& config_;
    const SweepTarget& target_;
    SweepServices& s_;
    const SweepOptions& options_;
    std::stop_token stop_;
    std::vector<CellSpec> cells_;
    std::vector<EndRuntime> ends_;
    SweepOutcome outcome_;
    std::map<std::string, std::string> measured_;   // fingerprint -> key of the first cell with it
    std::optional<size_t> current_profile_;
};

void Sweep::prepare_results() {
    auto& r = outcome_.results;
    if (options_.resume) {
        r = *options_.resume;
        r.run.finished.clear();
        // A resumed cell keeps its spec from the file; its indices come from the config.
        for (auto& c : r.cells) {
            const auto it = std::find_if(cells_.begin(), cells_.end(), [&](const CellSpec& s) { return s.key == c.spec.key; });
            if (it != cells_.end()) c.spec = *it;
            if (c.status != CellStatus::Infeasible && c.status != CellStatus::Duplicate) measured_.emplace(fingerprint(c), c.spec.key);
        }
    } else {
        r.tool.version = options_.tool_version;
        r.run.started = utc_now();
        r.run.command = options_.command;
        r.run.config_file = options_.config_file;
        r.run.config = config_;
    }
    r.local = s_.local_host;
    r.remote = s_.remote_host;
    for (const auto& e : ends_) {
        if (e.role != EndRole::Dut) (e.remote ? r.remote : r.local).interface = interface_info(e.original);
    }
}

SweepOutcome Sweep::run() {
    // A journal left by a sweep that was killed: put those interfaces back before reading any original.
    for (const auto& rep : s_.journal.restore()) note("restored " + rep.ifname + " from a leftover journal");

    check_sweep(config_, target_);
    std::vector<std::pair<const SweepEnd*, EndRole>> all = {{&target_.local, EndRole::Local}, {&target_.remote, EndRole::Remote}};
    for (const auto& d : target_.dut) all.emplace_back(&d, EndRole::Dut);
    for (const auto& [end, role] : all) {
        if (end->device == nullptr) continue;
        EndRuntime rt;
        rt.end = end;
        rt.role = role;
        rt.remote = role == EndRole::Remote;
        rt.original = end->device->read(end->ifname);
        rt.changes = std::any_of(cells_.begin(), cells_.end(), [&, r = role](const CellSpec& c) { return !cell_settings(config_, c, r).empty(); });
        ends_.push_back(std::move(rt));
    }
    prepare_results();

    // Restore on every way out: the normal end, a stop, an exception.
    // The peer agent's end journals itself (on the peer, where a crash of this process cannot lose it).
    struct RestoreGuard {
        SettingsJournal& journal;
        ConfirmedEnd* agent;
        bool armed = true;
        ~RestoreGuard() {
            if (!armed) return;
            try {
                journal.restore();
            } catch (...) {  // NOLINT(bugprone-empty-catch): an exception is already propagating
            }
            try {
                if (agent != nullptr) agent->restore();
            } catch (...) {  // NOLINT(bugprone-empty-catch): the agent also restores when the connection drops
            }
        }
    } guard{s_.journal, target_.remote.agent};
    for (const auto& e : ends_) {
        if (e.changes && e.end->agent == nullptr) s_.journal.remember(e.original);
    }
    save();

    std::set<std::string> done;
    for (const auto& c : outcome_.results.cells) done.insert(c.spec.key);
    double planned_total = 0;
    for (const auto& c : cells_) {
        if (!done.count(c.key)) planned_total += planned_s(c);
    }
    const auto started = s_.clock.now();
    double planned_done = 0;
    for (size_t i = 0; i < cells_.size(); ++i) {
        const auto& cell = cells_[i];
        if (done.count(cell.key)) continue;
        if (stop_.stop_requested()) {
            outcome_.interrupted = true;
            break;
        }
        CellProgress progress;
        progress.number = i + 1;
        progress.total = cells_.size();
        progress.cell = &cell;
        progress.local = cell_settings(config_, cell, false);
        progress.remote = cell_settings(config_, cell, true);
        if (!target_.dut.empty()) progress.dut = cell_settings(config_, cell, EndRole::Dut);
        const auto eta = [&] {
            const double elapsed = seconds(started, s_.clock.now());
            const double rate = planned_done > 0 ? elapsed / planned_done : 1.0;
            progress.elapsed_s = elapsed;
            progress.eta_s = std::max(0.0, (planned_total - planned_done) * rate);
        };
        eta();
        if (s_.observer) s_.observer->on_cell_start(progress);
        CellResult result;
        try {
            result = run_cell_with_agent(cell);
        } catch (const AgentGone& gone) {
            guard.armed = false;
            stop_without_agent(gone.why);
            return std::move(outcome_);
        }
        if (stop_.stop_requested() && result.status != CellStatus::Ok && result.status != CellStatus::Duplicate &&
            result.status != CellStatus::Infeasible) {
            // A cell cut short by the user is not a result: leave it for --resume.
            outcome_.interrupted = true;
            break;
        }
        if (stop_.stop_requested() && result.status == CellStatus::Ok && result.runs.size() < config_.repetitions) {
            outcome_.interrupted = true;
            break;
        }
        planned_done += planned_s(cell);
        eta();
        if (s_.observer) s_.observer->on_cell_done(progress, result);
        const bool was_measured = !result.runs.empty();
        record(std::move(result));
        ++outcome_.cells_run;
        if (was_measured && i + 1 < cells_.size()) cooldown();
    }

    guard.armed = false;
    outcome_.restored = restore_local();
    if (target_.remote.agent != nullptr && target_.remote.agent->connected()) {
        for (auto& r : target_.remote.agent->restore()) outcome_.restored.push_back(std::move(r));
    }
    if (!outcome_.interrupted) outcome_.results.run.finished = utc_now();
    save();
    return std::move(outcome_);
}

// Every end this process changed itself (the local end, DUT ports) back to its original state.
std::vector<ApplyReport> Sweep::restore_local() { return s_.journal.restore(); }

bool Sweep::apply_end(EndRuntime& end, const CellSpec& cell, CellResult& result) {
    auto& device = *end.end->device;
    const auto& ifname = end.end->ifname;
    const LinkSettings wanted = cell_settings(config_, cell, end.role);

    // Every cell starts from the original state. Cells come profile by profile, so the features of the
    // previous profile are put back (in their kernel names, one request) only when the profile changes;
    // cells of the same profile differ only in MTU and traffic, and the profile's request is the same.
    if (end.features_dirty && current_profile_ != cell.profile_index) {
        const LinkState now = device.read(ifname);
        LinkSettings reset;
        for (const auto& [name, f] : now.features) {
            const auto it = end.original.features.find(name);
            if (it != end.original.features.end() && !it->second.fixed && f.wanted != it->second.wanted) {
                reset.features[name] = it->second.wanted;
            }
        }
        if (!reset.empty()) device.apply(ifname, reset);
        end.features_dirty = false;
    }

    EndSettings applied;
    if (wanted.empty()) {
        applied = end_settings(device.read(ifname));
    } else {
        const ApplyReport report = device.apply(ifname, wanted);
        if (!wanted.features.empty()) end.features_dirty = true;
        applied = effective(end.original, report.mtu_after, report.active_after);
        if (!report.all_requested_hold()) {
            result.status = CellStatus::Infeasible;
            result.error = infeasible_reason(report);
        }
    }
    switch (end.role) {
        case EndRole::Local: result.applied_local = applied; break;
        case EndRole::Remote: result.applied_remote = applied; break;
        case EndRole::Dut: result.applied_dut[ifname] = applied; break;
    }
    return result.status != CellStatus::Infeasible;
}

// Commit confirmed: with the peer agent, a cell's change stands only when the peer still answers on the
// control path, full-size DF frames cross the data path at the cell's MTU, and the agent takes the
// confirm (it refuses one that comes after its window: it has reverted the change already). Otherwise
// the agent reverts its side by itself (no confirm comes, or it came too late) and this end reverts its
// own; the cell is not measured, so it is never recorded under settings it did not have.
bool Sweep::confirm_change(const CellSpec& cell, CellResult& result, const std::vector<LinkState>& before) {
    ConfirmedEnd* agent = target_.remote.agent;
    const uint32_t mtu = result.applied_local ? result.applied_local->mtu : cell.mtu;
    std::string why;
    bool peer_said = false;
    if (!agent->ping(options_.probe_timeout)) {
        why = "the peer agent did not answer on the control path";
    } else {
        const auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
        if (!probe.passed) why = "the data path failed: " + probe.detail;
    }
    if (why.empty()) {
        if (agent->confirm() == ConfirmedEnd::Confirmation::Confirmed) return true;
        why = "the peer agent had already rolled the change back when the confirmation came (its confirm window had passed)";
        peer_said = true;
    }
    for (size_t i = 0; i < ends_.size(); ++i) {
        auto& end = ends_[i];
        if (end.end->agent != nullptr) continue;
        const LinkSettings back = settings_back_to(before[i], end.end->device->read(end.end->ifname));
        if (!back.empty()) end.end->device->apply(end.end->ifname, back);
    }
    if (!peer_said) peer_said = agent->await_rollback(options_.rollback_wait);
    result.status = CellStatus::UnreachableAfterChange;
    result.error = "after the change (" + describe_settings(cell_settings(config_, cell, true)) + " on the peer): " + why +
                   "; both ends reverted it" + (peer_said ? "" : " (the peer did not report its rollback in time)");
    current_profile_.reset();
    for (auto& end : ends_) end.features_dirty = true;
    return false;
}

// True when the peer agent's control connection is gone. A round trip settles it: the connection may have
// died a moment ago (the agent killed while the cell measured) without its reader having seen it yet.
bool Sweep::agent_lost() const {
    ConfirmedEnd* agent = target_.remote.agent;
    return agent != nullptr && (!agent->connected() || !agent->ping(kAgentAliveTimeout));
}

// A cell with the peer agent, through losses of its control connection: the agent restores its side
// when the connection drops, so a cell the loss cut is run again from the originals once reconnected.
// Throws AgentGone when the agent does not come back.
CellResult Sweep::run_cell_with_agent(const CellSpec& cell) {
    if (agent_lost()) recover_agent();   // lost between cells: this cell has changed nothing yet
    CellResult result = run_cell(cell);
    if (!agent_lost()) return result;
    recover_agent();
    // The first try is no result: the cell's settings are not a duplicate of themselves.
    std::erase_if(measured_, [&](const auto& m) { return m.second == cell.key; });
    result = run_cell(cell);
    if (!agent_lost()) return result;
    CellResult failed;
    failed.spec = cell;
    failed.status = CellStatus::Failed;
    failed.error = "the peer agent's control connection was lost twice during this cell (the agent restored its side each time)";
    current_profile_.reset();
    for (auto& end : ends_) end.features_dirty = true;
    return failed;
}

// After a loss: reconnect within options_.agent_reconnect and check the peer is back at its originals.
void Sweep::recover_agent() {
    ConfirmedEnd& agent = *target_.remote.agent;
    // Every end is out of step with what the last cell left: the next apply starts from the originals.
    current_profile_.reset();
    for (auto& end : ends_) end.features_dirty = true;
    note("lost the control connection to the peer agent (it restores its side by itself); reconnecting for up to " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.agent_reconnect).count()) + " s");
    try {
        agent.reconnect(options_.agent_reconnect);
        for (const auto& end : ends_) {
            if (end.end->agent == nullptr) continue;
            const LinkSettings differs = settings_back_to(end.original, end.end->device->read(end.end->ifname));
            if (!differs.empty()) {
                note("after the reconnect the peer's " + end.end->ifname + " is not at its original state (" + describe_settings(differs) +
                     " would put it back); the next cell starts over from the originals");
            }
        }
    } catch (const Error& e) {
        throw AgentGone{e.what()};
    }
    note("reconnected to the peer agent; its side is at its original state");
}

// The agent is gone: put this side back, keep every finished cell, and change nothing more.
void Sweep::stop_without_agent(const std::string& why) {
    outcome_.restored = restore_local();
    outcome_.interrupted = true;
    outcome_.stopped_because = "lost the peer agent: " + why;
    save();
}

CellResult Sweep::run_cell(const CellSpec& cell) {
    CellResult result;
    result.spec = cell;
    const auto t0 = s_.clock.now();
    bool confirmed = false;
    try {
        std::vector<LinkState> before;
        const bool agent = target_.remote.agent != nullptr && std::any_of(ends_.begin(), ends_.end(), [](const EndRuntime& e) {
                               return e.end->agent != nullptr && e.changes;
                           });
        if (agent) {
            for (auto& end : ends_) before.push_back(end.end->agent != nullptr ? LinkState{} : end.end->device->read(end.end->ifname));
        }
        for (auto& end : ends_) {
            if (!apply_end(end, cell, result)) break;
        }
        current_profile_ = cell.profile_index;
        if (agent && result.status == CellStatus::Ok) confirmed = confirm_change(cell, result, before);
    } catch (const Error& e) {
        // The device refused (a setting it cannot take) or broke; either way this cell has no figures.
        result.status = e.kind() == ErrorKind::Failed ? CellStatus::Failed : CellStatus::Infeasible;
        result.error = e.what();
        current_profile_.reset();
        for (auto& end : ends_) end.features_dirty = true;
    }
    if (result.status == CellStatus::Ok) {
        const auto fp = fingerprint(result);
        if (const auto it = measured_.find(fp); it != measured_.end()) {
            result.status = CellStatus::Duplicate;
            result.duplicate_of = it->second;
            result.error = "effective settings equal those of " + it->second;
        } else {
            measured_.emplace(fp, cell.key);
            const uint32_t mtu = result.applied_local ? result.applied_local->mtu : cell.mtu;
            // A confirmed change has passed the same probe already.
            if (!confirmed) {
                try {
                    const auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
                    if (!probe.passed) {
                        result.status = CellStatus::PathMtuBlackhole;
                        result.error = probe.detail;
                    }
                } catch (const Error& e) {
                    result.status = CellStatus::Failed;
                    result.error = std::string("path MTU probe: ") + e.what();
                }
            }
        }
    }
    result.overhead_s = seconds(t0, s_.clock.now());
    if (result.status == CellStatus::Ok) measure(cell, result);
    result.summary = summarize_runs(result.runs);
    return result;
}

void Sweep::measure(const CellSpec& cell, CellResult& result) {
    TestSpec spec = cell.traffic.test;
    spec.host = target_.base.host;
    spec.port = target_.base.port;
    spec.bind = target_.base.bind;
    spec.iface = target_.base.iface;
    spec.duration_s = config_.duration_s;
    spec.omit_s = config_.omit_s;
    spec.interval_s = target_.base.interval_s;
    if (cell.traffic.rfc2544) {
        measure_rfc2544(cell, spec, result);
        return;
    }
    for (uint32_t rep = 0; rep < config_.repetitions; ++rep) {
        if (stop_.stop_requested()) return;
        try {
            RunResult run = s_.traffic.run(spec, stop_);
            switch (run.status) {
                case RunStatus::Ok: result.runs.push_back(std::move(run)); break;
                case RunStatus::Interrupted: return;
                case RunStatus::Stalled:
                    result.status = CellStatus::Stalled;
                    result.error = "repetition " + std::to_string(rep + 1) + ": " + (run.error.empty() ? "data stopped flowing" : run.error);
                    result.runs.push_back(std::move(run));
                    return;
                case RunStatus::PeerLost:
                    result.status = CellStatus::Failed;
                    result.error = "repetition " + std::to_string(rep + 1) + ": " + (run.error.empty() ? "the server end vanished" : run.error);
                    result.runs.push_back(std::move(run));
                    return;
            }
        } catch (const Error& e) {
            result.status = CellStatus::Failed;
            result.error = "repetition " + std::to_string(rep + 1) + ": " + e.what();
            return;
        }
    }
}

// A frame-size table is one measurement per cell (its trials are its repetitions). The line rate comes
// from the sending interface's link speed as the cell leaves it, unless the entry sets one.
void Sweep::measure_rfc2544(const CellSpec& cell, const TestSpec& base, CellResult& result) {
    std::optional<double> link_bps;
    const auto local = std::find_if(ends_.begin(), ends_.end(), [](const EndRuntime& e) { return e.role == EndRole::Local; });
    try {
        if (local != ends_.end()) {
            const LinkState now = local->end->device->read(local->end->ifname);
            if (now.speed_mbps) link_bps = *now.speed_mbps * 1e6;
        }
        Rfc2544Result table = run_rfc2544(s_.traffic, base, *cell.traffic.rfc2544, link_bps, stop_);
        for (const auto& e : ends_) table.interfaces.push_back({e.original.netns, e.end->ifname, e.original.coalesce});
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

void Sweep::record(CellResult result) {
    auto& cells = outcome_.results.cells;
    const auto order = [&](const std::string& key) {
        return std::find_if(cells_.begin(), cells_.end(), [&](const CellSpec& c) { return c.key == key; }) - cells_.begin();
    };
    const auto pos = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return order(c.spec.key) > order(result.spec.key); });
    cells.insert(pos, std::move(result));
    save();
}

void Sweep::cooldown() {
    if (config_.cooldown_s <= 0) return;
    const auto until = s_.clock.now() + std::chrono::duration_cast<Clock::time_point::duration>(std::chrono::duration<double>(config_.cooldown_s));
    // Wake up every 100 ms so a stop does not wait for the whole cooldown.
    while (!stop_.stop_requested() && s_.clock.now() < until) {
        s_.clock.sleep_until(std::min(until, s_.clock.now() + std::chrono::milliseconds(100)));
    }
}

}  // namespace

LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, EndRole role) {
    LinkSettings s;
    if (applies(config.apply_mtu_to, role)) s.mtu = cell.mtu;
    if (applies(config.apply_offloads_to, role)) s.features = cell.features_requested;
    return s;
}

LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, bool remote) {
    return cell_settings(config, cell, remote ? EndRole::Remote : EndRole::Local);
}

double planned_seconds(const SweepConfig& config, const CellSpec& cell) {
    if (const auto& r = cell.traffic.rfc2544) {
        // A table: per size about half the trial budget (the search often ends early) plus the
        // confirmation, each trial with some setup time.
        const double sizes = r->frames.empty() ? 8.0 : static_cast<double>(r->frames.size());
        return sizes * (r->max_trials / 2.0 + 2) * (r->trial_s + 0.1) + config.cooldown_s;
    }
    return config.repetitions * (config.omit_s + config.duration_s) + config.cooldown_s;
}

bool sweep_changes_end(const SweepConfig& config, bool remote) {
    const auto cells = expand_cells(config);
    return std::any_of(cells.begin(), cells.end(), [&](const CellSpec& c) { return !cell_settings(config, c, remote).empty(); });
}

void refuse_if_uncontrollable(const SweepConfig& config, bool remote, const std::string& why) {
    if (!sweep_changes_end(config, remote)) return;
    throw usage_error(std::string("sweep ") + config.name + ": the config applies " +
                      (applies(config.apply_mtu_to, remote) ? "the MTU" : "offloads") + " to the " + (remote ? "peer" : "local") +
                      " end, which cannot be changed from here (" + why +
                      "); set \"apply_to\" to \"local\" and set the peer by hand, or use --lab");
}

void check_sweep(const SweepConfig& config, const SweepTarget& target) {
    if (expand_cells(config).empty()) throw usage_error("sweep " + config.name + ": the exclude rules leave no cell to run");
    if (uses_dut(config) && target.dut.empty()) {
        throw usage_error("sweep " + config.name + ": \"apply_to\": \"dut\" needs a device under test between the ends; run it with --lab --topology bridge");
    }
    for (const auto& d : target.dut) {
        if (d.device == nullptr || !uses_dut(config)) continue;
        d.device->read(d.ifname);
        try {
            for (const auto& p : config.offloads) {
                if (applies(config.apply_offloads_to, EndRole::Dut) && !p.features.empty()) d.device->validate(d.ifname, LinkSettings{std::nullopt, p.features});
            }
            for (uint32_t mtu : config.mtu) {
                if (applies(config.apply_mtu_to, EndRole::Dut)) d.device->validate(d.ifname, LinkSettings{mtu, {}});
            }
        } catch (const Error& e) {
            throw Error(e.kind(), "device under test: " + std::string(e.what()));
        }
    }
    for (const auto* end : {&target.local, &target.remote}) {
        const bool remote = end == &target.remote;
        const bool needed = sweep_changes_end(config, remote);
        if (end->device == nullptr) {
            refuse_if_uncontrollable(config, remote, end->why_no_control);
            continue;
        }
        // read() throws a usage error naming an unknown interface.
        const LinkState state = end->device->read(end->ifname);
        (void)state;
        if (!needed) continue;
        const std::string where = std::string(remote ? "peer" : "local") + " end: ";
        try {
            for (const auto& p : config.offloads) {
                LinkSettings s;
                if (applies(config.apply_offloads_to, remote)) s.features = p.features;
                if (!s.empty()) end->device->validate(end->ifname, s);
            }
            for (uint32_t mtu : config.mtu) {
                if (applies(config.apply_mtu_to, remote)) end->device->validate(end->ifname, LinkSettings{mtu, {}});
            }
        } catch (const Error& e) {
            throw Error(e.kind(), where + e.what());
        }
    }
}

SweepOutcome run_sweep(const SweepConfig& config, const SweepTarget& target, SweepServices& services,
                       const SweepOptions& options, std::stop_token stop) {
    if (options.resume) check_resumable(*options.resume, config, options.output_path);
    return Sweep(config, target, services, options, std::move(stop)).run();
}

std::vector<CellPlan> plan_sweep(const SweepConfig& config, const std::optional<ResultsFile>& resume) {
    std::set<std::string> done;
    if (resume) {
        for (const auto& c : resume->cells) done.insert(c.spec.key);
    }
    std::vector<CellPlan> plan;
    for (const auto& cell : expand_cells(config)) {
        plan.push_back({cell, cell_settings(config, cell, false), cell_settings(config, cell, true),
                        cell_settings(config, cell, EndRole::Dut), done.count(cell.key) > 0});
    }
    return plan;
}

std::string describe_settings(const LinkSettings& settings) {
    if (settings.empty()) return "(unchanged)";
    std::string out;
    if (settings.mtu) out = "mtu=" + std::to_string(*settings.mtu);
    for (const auto& [name, on] : settings.features) out += (out.empty() ? "" : " ") + name + (on ? "=on" : "=off");
    return out;
}

}  // namespace nm
