#include "matrix/runner.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <type_traits>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/number_text.hpp"
#include "core/base/version.hpp"
#include "core/rfc2544.hpp"
#include "ethtool_ctl/restore_settings.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "matrix/config.hpp"
#include "matrix/results_store.hpp"
#include "matrix/modes.hpp"
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

ApplyTo apply_axis_to(const SweepConfig& config, const std::string& axis) {
    const auto it = config.apply_axes.find(axis);
    return it == config.apply_axes.end() ? ApplyTo::Both : it->second;
}

bool uses_dut(const SweepConfig& config) {
    bool axes = false;
    for (const auto& [axis, values] : config.axes) axes = axes || apply_axis_to(config, axis) == ApplyTo::Dut;
    return axes || config.apply_offloads_to == ApplyTo::Dut || config.apply_mtu_to == ApplyTo::Dut;
}

// The tuning kinds the sweep has axes of, kept in what a cell records (the originals keep every kind).
TuningState trimmed(const TuningState& t, const SweepConfig& config) {
    TuningState out;
    const auto has = [&](const char* axis) { return config.axes.count(axis) > 0; };
    if (has("channels")) out.channels = t.channels;
    if (has("rings")) out.rings = t.rings;
    if (has("coalesce")) out.coalesce = t.coalesce;
    if (has("rps")) out.rps = t.rps;
    if (has("xps")) out.xps = t.xps;
    if (has("irq_affinity")) out.irq_affinity = t.irq_affinity;
    if (has("napi")) out.napi = t.napi;
    if (has("qdisc")) out.qdisc = t.qdisc;
    if (has("sysctl")) {
        // Only the sysctls some value of the axis names.
        for (const auto& p : config.axes.at("sysctl")) {
            for (const auto& [name, v] : p.tuning.sysctl) {
                if (const auto it = t.sysctl.find(name); it != t.sysctl.end()) out.sysctl[name] = it->second;
            }
        }
    }
    return out;
}

// A cell's request names only its own values; what another value of the same axis names and this one
// does not goes back to the original, so each cell runs under exactly its label whatever ran before.
void complete_from_original(const SweepConfig& config, TuningRequest& t, const TuningState& original) {
    const auto fill_keys = [&](const char* axis, auto member, auto& out, const auto& orig) {
        const auto it = config.axes.find(axis);
        if (it == config.axes.end() || out.empty()) return;
        for (const auto& p : it->second) {
            for (const auto& [key, value] : p.tuning.*member) {
                if (!out.count(key)) {
                    if (const auto o = orig.find(key); o != orig.end()) out[key] = static_cast<typename std::decay_t<decltype(out)>::mapped_type>(o->second);
                }
            }
        }
    };
    fill_keys("channels", &TuningRequest::channels, t.channels, original.channels);
    fill_keys("rings", &TuningRequest::rings, t.rings, original.rings);
    fill_keys("coalesce", &TuningRequest::coalesce, t.coalesce, original.coalesce);
    fill_keys("napi", &TuningRequest::napi, t.napi, original.napi);
    fill_keys("sysctl", &TuningRequest::sysctl, t.sysctl, original.sysctl);
    const auto fill_queues = [](std::map<std::string, std::string>& out, const std::map<std::string, std::string>& orig) {
        if (out.empty() || out.count("*")) return;
        for (const auto& [q, list] : orig) out.emplace(q, list);
    };
    fill_queues(t.rps, original.rps);
    fill_queues(t.xps, original.xps);
    fill_queues(t.irq_affinity, original.irq_affinity);
}

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

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

EndSettings end_settings(const LinkState& s, const SweepConfig& config) {
    EndSettings e = end_settings(s);
    if (!config.axes.empty()) e.tuning = trimmed(s.tuning, config);
    return e;
}

InterfaceInfo interface_info(const LinkState& s) {
    InterfaceInfo i;
    i.name = s.name;
    i.netns = s.netns;
    i.driver = s.driver.driver;
    i.firmware = s.driver.firmware;
    i.driver_version = s.driver.version;
    i.bus_info = s.driver.bus_info;
    i.speed_mbps = s.speed_mbps;
    i.mtu_min = s.mtu_min;
    i.mtu_max = s.mtu_max;
    i.original = end_settings(s);
    i.rings = s.rings;
    i.coalesce = s.coalesce;
    i.channels = s.channels;
    i.tuning = s.tuning;
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
    for (const auto& c : r.tuning) {
        if (c.outcome != SettingOutcome::Applied && c.outcome != SettingOutcome::AlreadySet) {
            add(c.setting + " " + c.requested + " requested but the kernel has " + (c.after.empty() ? "none" : c.after));
        }
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
    std::optional<InterfaceSystem> system;   // qdisc, IRQs, RPS/XPS as the sweep found them
    bool features_dirty = false;   // a profile's features were applied since the last reset
    bool claimed = false;          // journalled under this process: ours to restore at the end

    SettingWrites writes;          // what this process wrote on this end (as journalled): the final restore takes back these

    // Changes this end: journalled write by write when the end is this host's (the journal knows what to
    // take back), sent as they are to a peer agent (which journals on its side).
    // With a link wait, the link is waited out after the change (a peer agent waits for its own).
    ApplyReport apply(SettingsJournal& journal, const LinkSettings& wanted, const LinkWait& link = {}) {
        if (end->agent != nullptr) return end->device->apply(end->ifname, wanted);
        RecordedApply done = apply_recorded(*end->device, journal, end->ifname, wanted, nullptr, link);
        merge_writes(writes, done.writes);
        return std::move(done.report);
    }
};

// How long the check after each cell waits for the peer agent's answer before counting it as lost.
constexpr auto kAgentAliveTimeout = std::chrono::seconds(5);

// The peer agent was lost and did not come back: the sweep stops, restoring its own side (Sweep::run).
struct AgentGone {
    std::string why;
};

// A cell's place in the sweep: whether its first visit has decided it, and whether it wants more visits.
struct CellState {
    size_t index = 0;           // in the config's cell order
    bool visited = false;       // recorded or measured by this call (for cells_run)
};

const char* role_name(EndRole role) {
    switch (role) {
        case EndRole::Local: return "local";
        case EndRole::Remote: return "remote";
        case EndRole::Dut: return "dut";
    }
    return "local";
}

// True when an end's link dropped after a change (the path must then answer again before measuring).
bool dropped(const ChangeLink& link) {
    return std::any_of(link.ends.begin(), link.ends.end(), [](const ChangeLink::End& e) { return e.link.carrier_drops > 0 || e.link.link_down_s > 0; });
}

std::string end_label(const std::string& ifname, const std::string& netns) {
    return netns.empty() ? ifname : ifname + " (netns " + netns + ")";
}

// What a leftover restore at the start did, for the observer.
std::string journal_note(const JournalReport& r) {
    switch (r.action) {
        case JournalAction::Restored:
            return "restored " + r.ifname + " from a leftover journal" + (r.note.empty() ? "" : " (" + r.note + ")");
        case JournalAction::LeftAlone: return end_label(r.ifname, r.where) + ": " + r.note;
        default: return "leftover journal: " + end_label(r.ifname, r.where) + ": " + r.note;
    }
}

class Sweep {
public:
    Sweep(const SweepConfig& config, const SweepTarget& target, SweepServices& services, const SweepOptions& options,
          std::stop_token stop)
        : config_(config), target_(target), s_(services), options_(options), stop_(std::move(stop)), cells_(expand_cells(config)) {}

    SweepOutcome run();

private:
    void prepare_results();
    void measure_cells();
    void visit(size_t index, bool all_repetitions);
    bool attempt_visit(const CellSpec& cell, CellResult& fresh, CellResult* rec, bool all_repetitions);
    void apply_cell(const CellSpec& cell, CellResult& result, bool& confirmed);
    void decide(const CellSpec& cell, CellResult& result, bool confirmed);
    bool apply_end(EndRuntime& end, const CellSpec& cell, CellResult& result);
    bool note_link(const EndRuntime& end, const ApplyReport& report, CellResult& result);
    bool confirm_change(const CellSpec& cell, CellResult& result, const std::vector<LinkState>& before);
    LinkWait link_wait() const {
        LinkWait w;
        w.bound = std::chrono::milliseconds(static_cast<int64_t>(config_.link_wait_s * 1000));
        w.stop = stop_;
        return w;
    }
    bool wait_for_path(const CellSpec& cell, CellResult& result, std::chrono::steady_clock::time_point changed);
    void roll_back_cell(const std::vector<LinkState>& before);
    TestSpec test_spec(const CellSpec& cell) const;
    bool measure_one(const TestSpec& spec, CellResult& result);
    std::optional<BackgroundLoad> wait_for_quiet(bool& disturbed);
    void finish_summary(CellResult& result) const;
    bool wants_more(const CellResult& result) const;
    bool wants_visit(size_t index) const;
    bool budget_allows_another() const;
    size_t planned_repetitions(size_t index) const;
    CellProgress progress_for(size_t index) const;
    CellResult* recorded(const std::string& key);
    const CellResult* recorded(const std::string& key) const;
    std::vector<size_t> shuffled(std::vector<size_t> order);
    uint64_t draw(uint64_t bound);
    bool agent_lost() const;
    void recover_agent();
    void record(CellResult result);
    void save() {
        if (s_.observer != nullptr) outcome_.results.run.json_stream = s_.observer->stream_stats();
        if (!options_.output_path.empty()) save_results(outcome_.results, options_.output_path);
    }
    void note(const std::string& text) {
        if (s_.observer) s_.observer->on_note(text);
    }
    double repetition_s() const { return config_.omit_s + config_.duration_s + config_.cooldown_s + 0.2 + config_.interference.sample_ms / 1000.0; }
    double confidence() const { return config_.precision ? config_.precision->confidence : 95; }
    void measure_rfc2544(const CellSpec& cell, const TestSpec& base, CellResult& result);
    void cooldown();
    std::vector<ApplyReport> restore_ends();
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
    std::map<std::string, std::string> infeasible_; // key -> why, found by the pre-check before any change
    std::optional<size_t> current_profile_;
    std::vector<CellState> states_;
    std::mt19937_64 rng_;               // the shuffle's; mt19937_64's sequence is fixed by the standard
    std::optional<size_t> last_visited_;
    uint32_t round_ = 0;                // 1-based round of the shuffled order; 0 for sequential
    Clock::time_point started_{};
    size_t repetitions_done_ = 0;       // by this call, for the estimate
    std::string agent_gone_;            // why the peer agent was lost for good; empty while it is not
    std::optional<ChangeLink> pending_link_;   // what the links did after this visit's change, for its first run
};

void Sweep::prepare_results() {
    auto& r = outcome_.results;
    if (options_.resume) {
        r = *options_.resume;
        r.run.finished.clear();
        // The file's tool is the first run's; the build that continues it (perhaps another) is recorded here.
        r.run.resumed.push_back(ResumeInfo{utc_now(), options_.command, ToolInfo{.version = options_.tool_version, .commit = options_.tool_commit}});
        const std::string began = build_label(r.tool.version, r.tool.commit), now = build_label(options_.tool_version, options_.tool_commit);
        if (began != now) {
            note("the file was begun by nicmatrix " + began + " and is continued by " + now +
                 ": its cells will hold figures of two builds (run.resumed records which)");
        }
        // A resumed cell keeps its spec from the file; its indices come from the config.
        for (auto& c : r.cells) {
            const auto it = std::find_if(cells_.begin(), cells_.end(), [&](const CellSpec& s) { return s.key == c.spec.key; });
            if (it != cells_.end()) c.spec = *it;
            if (c.status != CellStatus::Infeasible && c.status != CellStatus::Duplicate) measured_.emplace(fingerprint(c), c.spec.key);
        }
    } else {
        r.tool.version = options_.tool_version;
        r.tool.commit = options_.tool_commit;
        r.run.started = utc_now();
        r.run.command = options_.command;
        r.run.config_file = options_.config_file;
        r.run.config = config_;
    }
    // The order: a resumed file keeps its seed unless --seed gives another.
    r.run.order.mode = config_.order;
    r.run.order.seed.reset();
    if (config_.order == SweepOrder::Shuffled) {
        std::optional<uint64_t> seed = options_.seed;
        if (!seed && options_.resume && options_.resume->run.order.seed) seed = options_.resume->run.order.seed;
        if (!seed) seed = std::random_device{}();
        r.run.order.seed = seed;
        rng_.seed(*seed);
    }
    if (options_.time_budget_s) r.run.time_budget_s = options_.time_budget_s;
    r.run.budget_reached = false;
    r.local = s_.local_host;
    r.remote = s_.remote_host;
    // A peer agent of another build measures the server's end with other code than this sweep's client.
    if (!r.remote.tool.version.empty()) {
        const std::string peer = build_label(r.remote.tool.version, r.remote.tool.commit), ours = build_label(options_.tool_version, options_.tool_commit);
        if (peer != ours) {
            note("the peer's agent is nicmatrix " + peer + " and this sweep " + ours +
                 ": the two ends' figures come from different builds (hosts.remote.tool records the agent's)");
        }
    }
    for (const auto& e : ends_) {
        if (e.role == EndRole::Dut) continue;
        auto& info = (e.remote ? r.remote : r.local).interface;
        info = interface_info(e.original);
        info->system = e.system;
        info->emulator = e.end->emulator;
        info->device_model = e.end->device_model;
    }
}

SweepOutcome Sweep::run() {
    // Entries left by a sweep (or `set`) that is gone: put those interfaces back before reading any
    // original. Entries of processes that still run (another sweep, an agent) are theirs: left alone.
    for (const auto& rep : s_.journal.restore(RestoreOptions{})) note(journal_note(rep));

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
        if (role != EndRole::Dut) rt.system = end->device->describe(end->ifname);
        rt.changes = std::any_of(cells_.begin(), cells_.end(), [&, r = role](const CellSpec& c) { return !cell_settings(config_, c, r).empty(); });
        ends_.push_back(std::move(rt));
    }
    // The pre-check: a setting an end cannot take (an MTU above what the device allows, as an 8139's
    // 1500 or 4096; rings on veth, a sysctl its namespace lacks) makes the cell infeasible with the
    // kernel's reason, found here, before anything is changed.
    for (const auto& cell : cells_) {
        std::string why;
        for (const auto& e : ends_) {
            const LinkSettings wanted = cell_settings(config_, cell, e.role);
            const LinkState& o = e.original;
            if (wanted.mtu && o.mtu_max > 0 && (*wanted.mtu < o.mtu_min || *wanted.mtu > o.mtu_max)) {
                why += (why.empty() ? "" : "; ") + end_label(e.end->ifname, o.netns) + ": mtu " + std::to_string(*wanted.mtu) +
                       " outside the device's range " + std::to_string(o.mtu_min) + ".." + std::to_string(o.mtu_max) + " (IFLA_MIN_MTU..IFLA_MAX_MTU)";
            }
            if (wanted.tuning.empty()) continue;
            const std::string reason = e.end->device->unsupported(e.end->ifname, wanted);
            if (!reason.empty()) why += (why.empty() ? "" : "; ") + reason;
        }
        if (!why.empty()) infeasible_[cell.key] = why;
    }
    prepare_results();

    // Restore on every way out: the normal end, a stop, an exception. Only the ends this process
    // claimed, from the originals it holds (the journal is the backup for a crash); an end another live
    // process holds was refused by remember() and is not ours to touch.
    // The peer agent's end journals itself (on the peer, where a crash of this process cannot lose it).
    struct RestoreGuard {
        Sweep& sweep;
        ConfirmedEnd* agent;
        bool armed = true;
        ~RestoreGuard() {
            if (!armed) return;
            try {
                sweep.restore_ends();
            } catch (...) {  // NOLINT(bugprone-empty-catch): an exception is already propagating; the journal keeps the rest
            }
            try {
                if (agent != nullptr) agent->restore();
            } catch (...) {  // NOLINT(bugprone-empty-catch): the agent also restores when the connection drops
            }
        }
    } guard{*this, target_.remote.agent};
    // Every end is claimed before the first change: a second sweep or `set` on an interface that a live
    // process holds stops here (nm::Error Refused naming it), with nothing changed.
    for (auto& e : ends_) {
        if (!e.changes || e.end->agent != nullptr) continue;
        s_.journal.remember(e.original);
        e.claimed = true;
    }
    save();

    measure_cells();

    guard.armed = false;
    outcome_.restored = restore_ends();
    std::string not_restored;
    for (const auto& r : outcome_.restored) {
        if (r.note.empty()) continue;
        note(r.note);
        not_restored += (not_restored.empty() ? "" : "; ") + r.note;
    }
    // The agent puts its side back itself when its connection is gone (and a lost agent is not asked).
    if (target_.remote.agent != nullptr && agent_gone_.empty() && target_.remote.agent->connected()) {
        for (auto& r : target_.remote.agent->restore()) outcome_.restored.push_back(std::move(r));
    }
    if (!agent_gone_.empty()) outcome_.stopped_because = "lost the peer agent: " + agent_gone_;
    if (!outcome_.interrupted) outcome_.results.run.finished = utc_now();
    save();
    if (!not_restored.empty()) throw Error(ErrorKind::Failed, "sweep " + config_.name + ": " + not_restored);
    return std::move(outcome_);
}

// Takes back on every claimed end what this process wrote there (the journal's writes: a setting someone
// else changed meanwhile is left as it is and noted), and drops its journal entry once the restore holds.
// An end whose restore fails or does not hold keeps its entry (this process's, so `nicmatrix restore`
// takes it once this process is gone) and gets a note.
std::vector<ApplyReport> Sweep::restore_ends() {
    std::vector<ApplyReport> out;
    for (auto& e : ends_) {
        if (!e.claimed) continue;
        const std::string where = end_label(e.end->ifname, e.original.netns);
        ApplyReport rep;
        try {
            const UndoResult done = undo_writes(*e.end->device, e.end->ifname, e.writes);
            rep = done.report;
            // A real NIC resets on the way back too: the sweep ends with the link up as it found it (not
            // cut short by a stop: the restore is what a stop asks for).
            if (e.original.operstate == "up" && !wait_for_carrier(*e.end->device, e.end->ifname, link_wait().bound)) {
                note(where + " has no carrier " + number_text(config_.link_wait_s) + " s after its restore");
            }
            if (!done.foreign.empty()) {
                note("left as they are on " + where + ", changed since by someone else: " + done.foreign);
            }
            if (done.differences.empty()) {
                s_.journal.release(e.original);
                e.claimed = false;
            } else {
                rep.note = "restore did not hold on " + where + ":" + done.differences +
                           "; the journal keeps its original (nicmatrix restore tries again)";
            }
        } catch (const std::exception& err) {
            rep.ifname = e.end->ifname;
            rep.netns = e.original.netns;
            rep.note = "restore " + where + ": " + err.what() + "; the journal keeps its original (nicmatrix restore tries again)";
        }
        out.push_back(std::move(rep));
    }
    return out;
}

// Adds what one change did to `end`'s link to the visit's figures (one entry per end: a profile's reset
// and the cell's change add up). False, with the cell link_lost, when the link was not back.
bool Sweep::note_link(const EndRuntime& end, const ApplyReport& report, CellResult& result) {
    if (!report.link) return true;
    const LinkSettle& l = *report.link;
    if (!pending_link_) pending_link_ = ChangeLink{};
    auto it = std::find_if(pending_link_->ends.begin(), pending_link_->ends.end(), [&](const ChangeLink::End& e) { return e.ifname == end.end->ifname && e.end == role_name(end.role); });
    if (it == pending_link_->ends.end()) {
        pending_link_->ends.push_back({role_name(end.role), end.end->ifname, l});
    } else {
        it->link.link_down_s += l.link_down_s;
        it->link.carrier_drops += l.carrier_drops;
        it->link.wait_s += l.wait_s;
        it->link.back = l.back;
        it->link.state = l.state;
    }
    double down = 0;
    for (const auto& e : pending_link_->ends) down = std::max(down, e.link.link_down_s);
    pending_link_->link_down_s = down;
    pending_link_->settle_s += l.wait_s;   // the ends are changed one after the other
    if (l.back) return true;
    result.status = CellStatus::LinkLost;
    result.error = end_label(end.end->ifname, end.original.netns) + ": the link was not back " + number_text(config_.link_wait_s) +
                   " s after the change (" + l.state + ")" + (end.end->agent != nullptr ? "; the peer agent rolled it back" : "");
    return false;
}

bool Sweep::apply_end(EndRuntime& end, const CellSpec& cell, CellResult& result) {
    auto& device = *end.end->device;
    const auto& ifname = end.end->ifname;
    LinkSettings wanted = cell_settings(config_, cell, end.role);
    complete_from_original(config_, wanted.tuning, end.original.tuning);

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
        // A real NIC may reset on this too (an e1000e renegotiates on `rx` checksum changes): waited out
        // and counted with the cell's own change.
        if (!reset.empty() && !note_link(end, end.apply(s_.journal, reset, link_wait()), result)) return false;
        end.features_dirty = false;
    }

    EndSettings applied;
    if (wanted.empty()) {
        applied = end_settings(device.read(ifname), config_);
    } else {
        const ApplyReport report = end.apply(s_.journal, wanted, link_wait());
        if (!wanted.features.empty()) end.features_dirty = true;
        if (!note_link(end, report, result)) return false;
        applied = effective(end.original, report.mtu_after, report.active_after);
        // What the kernel really has of the tuning kinds, read back after the change.
        if (!config_.axes.empty()) applied.tuning = trimmed(device.read(ifname).tuning, config_);
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
        if (!back.empty()) end.apply(s_.journal, back);
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

CellResult* Sweep::recorded(const std::string& key) {
    auto& cells = outcome_.results.cells;
    const auto it = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return c.spec.key == key; });
    return it == cells.end() ? nullptr : &*it;
}

const CellResult* Sweep::recorded(const std::string& key) const {
    const auto& cells = outcome_.results.cells;
    const auto it = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return c.spec.key == key; });
    return it == cells.end() ? nullptr : &*it;
}

// A measured cell wants another repetition while it has fewer than asked: `repetitions`, or with a
// precision at least min_repetitions and, until the precision is met, up to max_repetitions.
bool Sweep::wants_more(const CellResult& result) const {
    if (result.status != CellStatus::Ok || result.spec.traffic.rfc2544) return false;
    const size_t n = result.runs.size();
    if (!config_.precision) return n < config_.repetitions;
    const auto& p = *config_.precision;
    if (n < p.min_repetitions) return true;
    return n < p.max_repetitions && !result.precision_met.value_or(false);
}

bool Sweep::wants_visit(size_t index) const {
    const CellResult* r = recorded(cells_[index].key);
    return r == nullptr || wants_more(*r);
}

// The repetitions a cell is expected to get in all, for the estimate: what it has when it wants no more;
// with a precision at least what the asked confidence needs (6 for 95%), all of max_repetitions once that
// did not suffice.
size_t Sweep::planned_repetitions(size_t index) const {
    const CellResult* r = recorded(cells_[index].key);
    if (r != nullptr && !wants_more(*r)) return r->runs.size();
    if (cells_[index].traffic.rfc2544) return 1;
    const size_t have = r != nullptr ? r->runs.size() : 0;
    if (!config_.precision) return config_.repetitions;
    const auto& p = *config_.precision;
    const size_t needed = std::max<size_t>(p.min_repetitions, repetitions_for_confidence(p.confidence));
    const size_t guess = have >= needed ? p.max_repetitions : needed;
    return std::clamp<size_t>(guess, have + 1, p.max_repetitions);
}

bool Sweep::budget_allows_another() const {
    if (!options_.time_budget_s) return true;
    return seconds(started_, s_.clock.now()) + repetition_s() <= *options_.time_budget_s;
}

uint64_t Sweep::draw(uint64_t bound) {
    // Uniform in [0, bound) from the generator's raw output (std::uniform_int_distribution differs between
    // standard libraries, and a seed must give the same order everywhere).
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x = 0;
    do {
        x = rng_();
    } while (x >= limit);
    return x % bound;
}

// Fisher-Yates, then the first cell swapped away when it is the one just visited, so no cell is measured
// twice in a row while others wait.
std::vector<size_t> Sweep::shuffled(std::vector<size_t> order) {
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw(i)]);
    if (order.size() > 1 && last_visited_ && order.front() == *last_visited_) std::swap(order[0], order[1 + draw(order.size() - 1)]);
    return order;
}

CellProgress Sweep::progress_for(size_t index) const {
    const auto& cell = cells_[index];
    CellProgress p;
    p.number = index + 1;
    p.total = cells_.size();
    p.cell = &cell;
    p.local = cell_settings(config_, cell, false);
    p.remote = cell_settings(config_, cell, true);
    if (!target_.dut.empty()) p.dut = cell_settings(config_, cell, EndRole::Dut);
    p.round = round_;
    p.elapsed_s = seconds(started_, s_.clock.now());
    p.budget_s = options_.time_budget_s.value_or(0);
    // What is left: the repetitions every cell is still expected to get, at the pace so far.
    size_t left = 0;
    for (size_t i = 0; i < cells_.size(); ++i) {
        const CellResult* r = recorded(cells_[i].key);
        const size_t have = r != nullptr ? r->runs.size() : 0;
        const size_t planned = planned_repetitions(i);
        if (planned > have) left += planned - have;
    }
    const double per = repetitions_done_ > 0 ? p.elapsed_s / static_cast<double>(repetitions_done_) : repetition_s();
    p.eta_s = static_cast<double>(left) * per;
    if (options_.time_budget_s) p.eta_s = std::min(p.eta_s, std::max(0.0, *options_.time_budget_s - p.elapsed_s));
    return p;
}

// Repetitions in rounds over every cell that wants more, each round in a shuffled order (or, sequential,
// each cell's repetitions back to back), until no cell wants more, the time budget is spent or a stop.
void Sweep::measure_cells() {
    started_ = s_.clock.now();
    states_.clear();
    for (size_t i = 0; i < cells_.size(); ++i) states_.push_back({i, false});
    const auto stopped = [&] { return stop_.stop_requested() || !budget_allows_another(); };
    try {
        if (config_.order == SweepOrder::Sequential) {
            for (size_t i = 0; i < cells_.size(); ++i) {
                if (!wants_visit(i)) continue;
                if (stopped()) break;
                visit(i, true);
            }
        } else {
            for (round_ = 1;; ++round_) {
                std::vector<size_t> order;
                for (size_t i = 0; i < cells_.size(); ++i) {
                    if (wants_visit(i)) order.push_back(i);
                }
                if (order.empty()) break;
                bool cut = false;
                for (size_t i : shuffled(std::move(order))) {
                    if (stopped()) {
                        cut = true;
                        break;
                    }
                    visit(i, false);
                }
                if (cut) break;
            }
        }
    } catch (const AgentGone& gone) {
        // Nothing more is changed: run() restores this side and saves what is recorded.
        agent_gone_ = gone.why.empty() ? "it did not come back" : gone.why;
    }
    bool unfinished = false;
    for (size_t i = 0; i < cells_.size(); ++i) unfinished = unfinished || wants_visit(i);
    outcome_.interrupted = unfinished && (stop_.stop_requested() || !agent_gone_.empty());
    outcome_.results.run.budget_reached = unfinished && !outcome_.interrupted && options_.time_budget_s.has_value();
    for (const auto& st : states_) outcome_.cells_run += st.visited ? 1 : 0;
    if (outcome_.results.run.budget_reached) {
        note("the time budget ended the sweep before every cell had its repetitions; --resume continues it");
    }
}

// One visit: apply the cell's settings (every visit, so each repetition runs under them whatever ran
// before), decide the cell at its first visit, measure one repetition (all of them, sequential), record.
// With the peer agent, a visit during which its control connection dropped is no result (the agent put
// its side back when the connection went, so the figures were not taken under the cell's settings): what
// it did is undone and, once the agent is back, the visit runs again from the originals. Throws AgentGone
// when the agent does not come back.
void Sweep::visit(size_t index, bool all_repetitions) {
    const auto& cell = cells_[index];
    CellProgress progress = progress_for(index);
    const CellResult* before = recorded(cell.key);
    progress.repetition = static_cast<uint32_t>(before != nullptr ? before->runs.size() + 1 : 1);
    if (s_.observer) s_.observer->on_cell_start(progress);
    last_visited_ = index;
    if (agent_lost()) recover_agent();   // lost between visits: this visit has changed nothing yet

    CellResult* rec = recorded(cell.key);
    const bool first = rec == nullptr;
    const std::optional<CellResult> kept = first ? std::nullopt : std::optional<CellResult>(*rec);
    const size_t repetitions_before = repetitions_done_;
    CellResult fresh;
    bool measured = false;
    for (int attempt = 1;; ++attempt) {
        fresh = CellResult{};
        fresh.spec = cell;
        measured = attempt_visit(cell, fresh, rec, all_repetitions);
        if (!agent_lost()) break;
        // Undo the visit: a first try is no result (its settings are not a duplicate of themselves), and
        // a recorded cell goes back to what it had.
        if (first) std::erase_if(measured_, [&](const auto& m) { return m.second == cell.key; });
        if (rec != nullptr) *rec = *kept;
        repetitions_done_ = repetitions_before;
        measured = false;
        if (attempt == 1) {
            recover_agent();
            continue;
        }
        const std::string why = "the peer agent's control connection was lost twice during this visit (the agent restored its side each time)";
        if (first) {
            fresh = CellResult{};
            fresh.spec = cell;
            fresh.status = CellStatus::Failed;
            fresh.error = why;
        } else {
            rec->status = CellStatus::Failed;
            rec->error = "repetition " + std::to_string(rec->runs.size() + 1) + ": " + why;
        }
        current_profile_.reset();
        for (auto& end : ends_) end.features_dirty = true;
        break;
    }

    if (first) {
        // A cell cut short by the user before it had any figure is not a result: leave it for --resume.
        const bool cut = stop_.stop_requested() && fresh.runs.empty() && fresh.status != CellStatus::Duplicate &&
                         fresh.status != CellStatus::Infeasible;
        if (cut) return;
        record(std::move(fresh));
        states_[index].visited = true;
    } else {
        states_[index].visited = true;
        save();
    }
    const CellResult& done = *recorded(cell.key);
    progress = progress_for(index);
    progress.repetition = static_cast<uint32_t>(done.runs.size());
    progress.final = !wants_more(done);
    if (s_.observer) s_.observer->on_cell_done(progress, done);
    if (!measured) return;
    bool more = false;
    for (size_t i = 0; i < cells_.size() && !more; ++i) more = wants_visit(i);
    if (more) cooldown();
}

// The work of one visit: the settings applied into `fresh`, the cell decided (first visit: `rec` null)
// or checked against its first visit (`rec`), and its repetitions measured into `fresh` (first visit) or
// `*rec`. True when it measured something.
bool Sweep::attempt_visit(const CellSpec& cell, CellResult& fresh, CellResult* rec, bool all_repetitions) {
    const auto t0 = s_.clock.now();
    bool confirmed = false;
    pending_link_.reset();
    if (const auto it = infeasible_.find(cell.key); it != infeasible_.end()) {
        fresh.status = CellStatus::Infeasible;
        fresh.error = it->second;
    } else {
        apply_cell(cell, fresh, confirmed);
    }
    const bool first = rec == nullptr;
    if (first) {
        decide(cell, fresh, confirmed);
    } else if (fresh.status != CellStatus::Ok) {
        // Settings that held at the first visit did not now: nothing more is measured under this label.
        rec->status = fresh.status == CellStatus::Infeasible ? CellStatus::Failed : fresh.status;
        rec->error = "repetition " + std::to_string(rec->runs.size() + 1) + ": " + fresh.error;
    } else if (fingerprint(fresh) != fingerprint(*rec)) {
        rec->status = CellStatus::Failed;
        rec->error = "repetition " + std::to_string(rec->runs.size() + 1) +
                     ": the effective settings differ from the cell's first visit (something else changed the interface)";
    }
    CellResult& target = first ? fresh : *rec;
    target.overhead_s += seconds(t0, s_.clock.now());

    const size_t runs_before = target.runs.size();
    if (target.status == CellStatus::Ok) {
        const TestSpec spec = test_spec(cell);
        if (cell.traffic.rfc2544) {
            measure_rfc2544(cell, spec, target);
        } else {
            do {
                if (!measure_one(spec, target)) break;
                ++repetitions_done_;
                finish_summary(target);
            } while (all_repetitions && wants_more(target) && budget_allows_another() && !stop_.stop_requested());
        }
    }
    finish_summary(target);
    return target.runs.size() > runs_before || target.rfc2544.has_value();
}

void Sweep::apply_cell(const CellSpec& cell, CellResult& result, bool& confirmed) {
    pending_link_.reset();
    try {
        std::vector<LinkState> before;
        const bool agent = target_.remote.agent != nullptr && std::any_of(ends_.begin(), ends_.end(), [](const EndRuntime& e) {
                               return e.end->agent != nullptr && e.changes;
                           });
        // What to go back to when the change loses the link (or the peer agent does not confirm it).
        if (agent || config_.link_wait_s > 0) {
            for (auto& end : ends_) {
                before.push_back(end.end->agent != nullptr ? LinkState{} : end.end->device->read(end.end->ifname));
            }
        }
        for (auto& end : ends_) {
            if (!apply_end(end, cell, result)) break;
        }
        const auto changed = std::chrono::steady_clock::now();
        current_profile_ = cell.profile_index;
        if (result.status == CellStatus::LinkLost) {
            roll_back_cell(before);
            return;
        }
        // A link that dropped and came back: the path answers before anything is measured (a switch
        // port relearning, the neighbour entry); settle_s counts that wait too.
        if (result.status == CellStatus::Ok && pending_link_ && dropped(*pending_link_) && !wait_for_path(cell, result, changed)) {
            roll_back_cell(before);
            return;
        }
        if (agent && result.status == CellStatus::Ok) confirmed = confirm_change(cell, result, before);
    } catch (const Error& e) {
        // The device refused (a setting it cannot take) or broke; either way this cell has no figures.
        result.status = e.kind() == ErrorKind::Failed ? CellStatus::Failed : CellStatus::Infeasible;
        result.error = e.what();
        current_profile_.reset();
        for (auto& end : ends_) end.features_dirty = true;
    }
}

// After a change that dropped a link: probes the path until it answers again, within
// link_wait_s of the change. False (the cell marked link_lost) when it never does.
bool Sweep::wait_for_path(const CellSpec& cell, CellResult& result, std::chrono::steady_clock::time_point changed) {
    // A frame every path of this MTU carries (IPv6's minimum MTU at most): whether full-size frames
    // cross is the preflight's question (path_mtu_blackhole), not this one's.
    const uint32_t mtu = std::min<uint32_t>(result.applied_local ? result.applied_local->mtu : cell.mtu, 1280);
    const auto bound = std::chrono::duration<double>(config_.link_wait_s);
    std::string last;
    do {
        try {
            const auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
            if (probe.passed) {
                pending_link_->settle_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - changed).count();
                return true;
            }
            last = probe.detail;
        } catch (const Error& e) {
            last = e.what();   // the network unreachable a moment longer, say
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (!stop_.stop_requested() && std::chrono::steady_clock::now() - changed < bound);
    result.status = CellStatus::LinkLost;
    result.error = "the link came back after the change but the path did not answer within " + number_text(config_.link_wait_s) +
                   " s (" + last + ")";
    return false;
}

// Takes a cell's change back on this host's ends (to `before`, each end's state just before it; a peer
// agent takes its own back) and waits for their links, so that the next cell starts from a link that is
// up. Every end starts the next cell from the originals.
void Sweep::roll_back_cell(const std::vector<LinkState>& before) {
    for (size_t i = 0; i < ends_.size() && i < before.size(); ++i) {
        auto& end = ends_[i];
        if (end.end->agent != nullptr || !end.changes) continue;
        const LinkSettings back = settings_back_to(before[i], end.end->device->read(end.end->ifname));
        if (!back.empty()) {
            const ApplyReport report = end.apply(s_.journal, back, link_wait());
            if (report.link && !report.link->back) {
                note(end_label(end.end->ifname, end.original.netns) + ": the link was still not back " + number_text(config_.link_wait_s) +
                     " s after taking the cell's change back (" + report.link->state + ")");
            }
        }
        if (!wait_for_carrier(*end.end->device, end.end->ifname, link_wait().bound, stop_) && !stop_.stop_requested()) {
            note(end_label(end.end->ifname, end.original.netns) + " has no carrier after taking the cell's change back");
        }
    }
    current_profile_.reset();
    for (auto& end : ends_) end.features_dirty = true;
}

// At a cell's first visit, what stands for the whole sweep: a duplicate of a cell measured before, or a
// path that drops full-size frames at this MTU.
void Sweep::decide(const CellSpec& cell, CellResult& result, bool confirmed) {
    if (result.status != CellStatus::Ok) return;
    const auto fp = fingerprint(result);
    if (const auto it = measured_.find(fp); it != measured_.end()) {
        result.status = CellStatus::Duplicate;
        result.duplicate_of = it->second;
        result.error = "effective settings equal those of " + it->second;
        return;
    }
    measured_.emplace(fp, cell.key);
    const uint32_t mtu = result.applied_local ? result.applied_local->mtu : cell.mtu;
    // A confirmed change has passed the same probe already.
    if (confirmed) return;
    try {
        // A link that dropped in this visit has just come back: a NIC may answer small frames before it
        // takes full-size ones again, so the path gets the rest of link_wait_s before it is called a
        // blackhole; otherwise one probe (resent every 250 ms) decides.
        const bool dropped_now = pending_link_ && dropped(*pending_link_);
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(config_.link_wait_s);
        auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
        while (!probe.passed && dropped_now && !stop_.stop_requested() && std::chrono::steady_clock::now() < until) {
            probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
        }
        if (!probe.passed) {
            result.status = CellStatus::PathMtuBlackhole;
            result.error = probe.detail;
        }
    } catch (const Error& e) {
        result.status = CellStatus::Failed;
        result.error = std::string("path MTU probe: ") + e.what();
    }
}

TestSpec Sweep::test_spec(const CellSpec& cell) const {
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
std::optional<BackgroundLoad> Sweep::wait_for_quiet(bool& disturbed) {
    disturbed = false;
    const auto& f = config_.interference;
    if (s_.load == nullptr || f.sample_ms == 0) return std::nullopt;
    const auto loud = [&](const BackgroundLoad& b) { return b.busy_pct > f.max_busy_pct || b.steal_pct > f.max_steal_pct; };
    const auto t0 = s_.clock.now();
    const auto window = std::chrono::milliseconds(f.sample_ms);
    BackgroundLoad b = s_.load->sample(window, stop_);
    while (loud(b) && !stop_.stop_requested() && seconds(t0, s_.clock.now()) < f.max_wait_s) b = s_.load->sample(window, stop_);
    b.waited_s = std::max(0.0, seconds(t0, s_.clock.now()) - b.window_s);
    disturbed = loud(b);
    return b;
}

// One repetition into `result`. False when the cell must not go on (a stop, or the run failed: the cell's
// status says why).
bool Sweep::measure_one(const TestSpec& spec, CellResult& result) {
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
        run.link = std::move(pending_link_);
        pending_link_.reset();
        run.background = background;
        run.disturbed = disturbed;
        switch (run.status) {
            case RunStatus::Ok: result.runs.push_back(std::move(run)); return true;
            case RunStatus::Interrupted: return false;
            case RunStatus::Stalled:
                result.status = CellStatus::Stalled;
                result.error = rep + (run.error.empty() ? "data stopped flowing" : run.error);
                result.runs.push_back(std::move(run));
                return false;
            case RunStatus::PeerLost:
            case RunStatus::Limited:
                result.status = CellStatus::Failed;
                result.error = rep + (run.error.empty() ? "the server end vanished" : run.error);
                result.runs.push_back(std::move(run));
                return false;
            case RunStatus::Failed:
                result.status = CellStatus::Failed;
                result.error = rep + (run.error.empty() ? "a traffic worker failed" : run.error);
                result.runs.push_back(std::move(run));
                return false;
        }
    } catch (const Error& e) {
        result.status = CellStatus::Failed;
        result.error = rep + e.what();
    }
    return false;
}

void Sweep::finish_summary(CellResult& result) const {
    result.summary = summarize_runs(result.runs, confidence());
    result.precision_met.reset();
    result.modes.reset();
    if (result.status != CellStatus::Ok || result.runs.empty() || result.spec.traffic.rfc2544) return;
    const std::string metric = config_.precision ? precision_metric(*config_.precision, result.spec.traffic.test)
                                                 : headline_metric(result.spec.traffic.test);
    result.modes = cell_modes(result.runs, metric, confidence(), config_.precision);
    if (!config_.precision) return;
    // With modes, the precision applies to each: a median between two modes is no figure to make precise.
    if (result.modes) {
        result.precision_met = std::all_of(result.modes->modes.begin(), result.modes->modes.end(),
                                           [](const ValueMode& m) { return m.precision_met.value_or(false); });
        return;
    }
    const auto it = result.summary.find(metric);
    result.precision_met = it != result.summary.end() && precision_met(it->second, *config_.precision);
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
    for (const auto& [axis, index] : cell.axis_index) {
        const auto it = config.axes.find(axis);
        if (it == config.axes.end() || index >= it->second.size() || !applies(apply_axis_to(config, axis), role)) continue;
        const TuningRequest& t = it->second[index].tuning;
        TuningRequest& out = s.tuning;
        out.channels.insert(t.channels.begin(), t.channels.end());
        out.rings.insert(t.rings.begin(), t.rings.end());
        out.coalesce.insert(t.coalesce.begin(), t.coalesce.end());
        out.rps.insert(t.rps.begin(), t.rps.end());
        out.xps.insert(t.xps.begin(), t.xps.end());
        out.irq_affinity.insert(t.irq_affinity.begin(), t.irq_affinity.end());
        out.napi.insert(t.napi.begin(), t.napi.end());
        out.sysctl.insert(t.sysctl.begin(), t.sysctl.end());
        if (t.qdisc) out.qdisc = t.qdisc;
    }
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
    return static_cast<double>(planned_repetitions(config)) * (config.omit_s + config.duration_s + config.cooldown_s);
}

uint32_t planned_repetitions(const SweepConfig& config) {
    if (!config.precision) return config.repetitions;
    const auto& p = *config.precision;
    const auto needed = static_cast<uint32_t>(repetitions_for_confidence(p.confidence));
    return std::clamp(std::max(p.min_repetitions, needed), p.min_repetitions, p.max_repetitions);
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
                if (applies(config.apply_offloads_to, EndRole::Dut) && !p.features.empty()) d.device->validate(d.ifname, LinkSettings{std::nullopt, p.features, {}});
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
        } catch (const Error& e) {
            throw Error(e.kind(), where + e.what());
        }
        for (const auto& [axis, values] : config.axes) {
            if (!applies(apply_axis_to(config, axis), remote)) continue;
            for (size_t i = 0; i < values.size(); ++i) {
                LinkSettings s;
                s.tuning = values[i].tuning;
                try {
                    end->device->validate(end->ifname, s);
                } catch (const Error& e) {
                    throw Error(e.kind(), "/" + axis + "/" + std::to_string(i) + ": " + where + e.what());
                }
            }
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
    const TuningRequest& t = settings.tuning;
    const auto add = [&](const std::string& kind, const auto& m) {
        for (const auto& [k, v] : m) {
            out += (out.empty() ? "" : " ") + kind + "." + k + "=";
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
                out += v;
            } else {
                out += std::to_string(v);
            }
        }
    };
    add("channels", t.channels);
    add("rings", t.rings);
    add("coalesce", t.coalesce);
    add("rps", t.rps);
    add("xps", t.xps);
    add("irq_affinity", t.irq_affinity);
    add("napi", t.napi);
    add("sysctl", t.sysctl);
    if (t.qdisc) out += (out.empty() ? "" : " ") + std::string("qdisc=") + t.qdisc->kind;
    return out;
}

}  // namespace nm
