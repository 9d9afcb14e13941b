// The loop of a sweep: the plan's cells visited as the schedule says, each visit applying the cell on the
// ends, deciding it at its first visit, measuring and recording it; the ends restored on every way out.
#include "matrix/runner.hpp"

#include "core/base/error.hpp"
#include "matrix/cell_measure.hpp"
#include "matrix/results_store.hpp"
#include "matrix/sweep_ends.hpp"
#include "matrix/sweep_record.hpp"
#include "matrix/sweep_schedule.hpp"

namespace nm {
namespace {

class Sweep {
public:
    Sweep(const SweepPlan& plan, const SweepTarget& target, SweepServices& services, const SweepOptions& options, std::stop_token stop)
        : plan_(plan),
          config_(plan.config),
          target_(target),
          s_(services),
          stop_(stop),
          ends_(plan, target, services, options, stop),
          record_(plan, options, services.observer, outcome_.results),
          schedule_(plan, services.clock, options.time_budget_s, [this](const std::string& key) { return record_.recorded(key); }),
          measure_(plan.config, target, services, stop),
          options_(options) {}

    SweepOutcome run();

private:
    void measure_cells();
    void visit(size_t index);
    bool attempt_visit(const CellSpec& cell, CellResult& fresh, CellResult* rec);
    void decide(const CellSpec& cell, CellResult& result, bool confirmed);
    void measure(const CellSpec& cell, CellResult& target);
    void cell_done(size_t index, bool measured);
    void note(const std::string& text) {
        if (s_.observer) s_.observer->on_note(text);
    }

    const SweepPlan& plan_;
    const SweepConfig& config_;
    const SweepTarget& target_;
    SweepServices& s_;
    std::stop_token stop_;
    SweepOutcome outcome_;
    SweepEnds ends_;
    SweepRecord record_;
    SweepSchedule schedule_;
    CellMeasure measure_;
    const SweepOptions& options_;
    std::map<std::string, std::string> infeasible_;  // key -> why, found by the pre-check before any change
    std::vector<bool> visited_;                      // by index: recorded or measured by this call (cells_run)
    std::string agent_gone_;                         // why the peer agent was lost for good; empty while it is not
};

SweepOutcome Sweep::run() {
    ends_.restore_leftovers();
    check_sweep(plan_, target_);
    ends_.open();
    infeasible_ = ends_.infeasible_cells();
    std::optional<uint64_t> seed;
    if (config_.order == SweepOrder::Shuffled) {
        // A resumed file keeps its seed unless --seed gives another.
        seed = choose_seed(options_.seed, options_.resume);
        schedule_.seed(*seed);
    }
    record_.begin(seed, s_.local_host, s_.remote_host);
    ends_.describe(outcome_.results);

    // Restore on every way out: the normal end, a stop, an exception. Only the ends this process
    // claimed, from the originals it holds (the journal is the backup for a crash); an end another live
    // process holds was refused by claim() and is not ours to touch.
    // The peer agent's end journals itself (on the peer, where a crash of this process cannot lose it).
    struct RestoreGuard {
        SweepEnds& ends;
        ConfirmedEnd* agent;
        bool armed = true;
        ~RestoreGuard() {
            if (!armed) return;
            try {
                ends.restore();
            } catch (...) {  // NOLINT(bugprone-empty-catch): an exception is already propagating; the journal keeps the rest
            }
            try {
                if (agent != nullptr) agent->restore();
            } catch (...) {  // NOLINT(bugprone-empty-catch): the agent also restores when the connection drops
            }
        }
    } guard{ends_, target_.remote.agent};
    ends_.claim();
    record_.save();

    measure_cells();

    guard.armed = false;
    outcome_.restored = ends_.restore();
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
    record_.save();
    if (!not_restored.empty()) throw Error(ErrorKind::Failed, "sweep " + config_.name + ": " + not_restored);
    return std::move(outcome_);
}

// Rounds of visits as the schedule orders them (sequential: one round, each cell's repetitions back to
// back), until no cell wants more, the time budget is spent or a stop.
void Sweep::measure_cells() {
    schedule_.start();
    visited_.assign(plan_.cells.size(), false);
    const auto stopped = [&] { return stop_.stop_requested() || !schedule_.budget_allows_another(); };
    try {
        bool cut = false;
        while (!cut) {
            const std::vector<size_t> order = schedule_.next_round();
            if (order.empty()) break;
            for (size_t i : order) {
                cut = stopped();
                if (cut) break;
                visit(i);
            }
        }
    } catch (const AgentGone& gone) {
        // Nothing more is changed: run() restores this side and saves what is recorded.
        agent_gone_ = gone.why.empty() ? "it did not come back" : gone.why;
    }
    const bool unfinished = schedule_.any_wants_visit();
    outcome_.interrupted = unfinished && (stop_.stop_requested() || !agent_gone_.empty());
    outcome_.results.run.budget_reached = unfinished && !outcome_.interrupted && options_.time_budget_s.has_value();
    for (const bool v : visited_) outcome_.cells_run += v ? 1 : 0;
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
void Sweep::visit(size_t index) {
    const auto& cell = plan_.cells[index];
    CellProgress progress = schedule_.progress(index, !target_.dut.empty());
    const CellResult* before = record_.recorded(cell.key);
    progress.repetition = static_cast<uint32_t>(before != nullptr ? before->runs.size() + 1 : 1);
    if (s_.observer) s_.observer->on_cell_start(progress);
    schedule_.visiting(index);
    if (ends_.agent_lost()) ends_.recover_agent();  // lost between visits: this visit has changed nothing yet

    CellResult* rec = record_.recorded(cell.key);
    const bool first = rec == nullptr;
    const std::optional<CellResult> kept = first ? std::nullopt : std::optional<CellResult>(*rec);
    const size_t repetitions_before = schedule_.repetitions_done();
    CellResult fresh;
    bool measured = false;
    for (int attempt = 1;; ++attempt) {
        fresh = CellResult{};
        fresh.spec = cell;
        measured = attempt_visit(cell, fresh, rec);
        if (!ends_.agent_lost()) break;
        // Undo the visit: a first try is no result (its settings are not a duplicate of themselves), and
        // a recorded cell goes back to what it had.
        if (first) record_.forget(cell.key);
        if (rec != nullptr) *rec = *kept;
        schedule_.rewind_repetitions(repetitions_before);
        measured = false;
        if (attempt == 1) {
            ends_.recover_agent();
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
        ends_.start_over();
        break;
    }

    if (first) {
        // A cell cut short by the user before it had any figure is not a result: leave it for --resume.
        const bool cut =
            stop_.stop_requested() && fresh.runs.empty() && fresh.status != CellStatus::Duplicate && fresh.status != CellStatus::Infeasible;
        if (cut) return;
        record_.record(std::move(fresh));
    } else {
        record_.save();
    }
    visited_[index] = true;
    cell_done(index, measured);
}

// Tells the observer the visit is done and cools down when something was measured and more is to come.
void Sweep::cell_done(size_t index, bool measured) {
    const CellResult& done = *record_.recorded(plan_.cells[index].key);
    CellProgress progress = schedule_.progress(index, !target_.dut.empty());
    progress.repetition = static_cast<uint32_t>(done.runs.size());
    progress.final = !schedule_.wants_more(done);
    if (s_.observer) s_.observer->on_cell_done(progress, done);
    if (measured && schedule_.any_wants_visit()) measure_.cooldown();
}

// The work of one visit: the settings applied into `fresh`, the cell decided (first visit: `rec` null)
// or checked against its first visit (`rec`), and its repetitions measured into `fresh` (first visit) or
// `*rec`. True when it measured something.
bool Sweep::attempt_visit(const CellSpec& cell, CellResult& fresh, CellResult* rec) {
    const auto t0 = s_.clock.now();
    bool confirmed = false;
    ends_.pending_link().reset();
    if (const auto it = infeasible_.find(cell.key); it != infeasible_.end()) {
        fresh.status = CellStatus::Infeasible;
        fresh.error = it->second;
    } else {
        confirmed = ends_.apply_cell(cell, fresh);
    }
    const bool first = rec == nullptr;
    if (first) {
        decide(cell, fresh, confirmed);
    } else if (fresh.status != CellStatus::Ok) {
        // Settings that held at the first visit did not now: nothing more is measured under this label.
        rec->status = fresh.status == CellStatus::Infeasible ? CellStatus::Failed : fresh.status;
        rec->error = "repetition " + std::to_string(rec->runs.size() + 1) + ": " + fresh.error;
    } else if (settings_fingerprint(fresh) != settings_fingerprint(*rec)) {
        rec->status = CellStatus::Failed;
        rec->error = "repetition " + std::to_string(rec->runs.size() + 1) +
                     ": the effective settings differ from the cell's first visit (something else changed the interface)";
    }
    CellResult& target = first ? fresh : *rec;
    target.overhead_s += seconds_between(t0, s_.clock.now());

    const size_t runs_before = target.runs.size();
    if (target.status == CellStatus::Ok) measure(cell, target);
    measure_.finish_summary(target);
    return target.runs.size() > runs_before || target.rfc2544.has_value();
}

// A frame-size table, or one repetition (sequential: all the cell wants, while the budget allows).
void Sweep::measure(const CellSpec& cell, CellResult& target) {
    const TestSpec spec = measure_.test_spec(cell);
    if (cell.traffic.rfc2544) {
        measure_.measure_rfc2544(
            cell, spec, target, [this] { return ends_.local_link_bps(); }, ends_.interfaces());
        return;
    }
    do {
        if (!measure_.measure_one(spec, target, ends_.pending_link())) break;
        schedule_.count_repetition();
        measure_.finish_summary(target);
    } while (schedule_.sequential() && schedule_.wants_more(target) && schedule_.budget_allows_another() && !stop_.stop_requested());
}

// At a cell's first visit, what stands for the whole sweep: a duplicate of a cell measured before, or a
// path that drops full-size frames at this MTU.
void Sweep::decide(const CellSpec& cell, CellResult& result, bool confirmed) {
    if (result.status != CellStatus::Ok) return;
    if (const auto same = record_.duplicate_of(result, cell.key)) {
        result.status = CellStatus::Duplicate;
        result.duplicate_of = *same;
        result.error = "effective settings equal those of " + *same;
        return;
    }
    const uint32_t mtu = result.applied_local ? result.applied_local->mtu : cell.mtu;
    // A confirmed change has passed the same probe already.
    if (confirmed) return;
    try {
        // A link that dropped in this visit has just come back: a NIC may answer small frames before it
        // takes full-size ones again, so the path gets the rest of link_wait_s before it is called a
        // blackhole; otherwise one probe (resent every 250 ms) decides.
        const bool dropped_now = ends_.link_dropped();
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

}  // namespace

SweepOutcome run_sweep(const SweepPlan& plan, const SweepTarget& target, SweepServices& services, const SweepOptions& options, std::stop_token stop) {
    if (options.resume) check_resumable(*options.resume, plan.config, options.output_path);
    return Sweep(plan, target, services, options, std::move(stop)).run();
}

SweepOutcome run_sweep(const SweepConfig& config, const SweepTarget& target, SweepServices& services, const SweepOptions& options,
                       std::stop_token stop) {
    return run_sweep(make_sweep_plan(config), target, services, options, std::move(stop));
}

}  // namespace nm
