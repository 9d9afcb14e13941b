#pragma once
// The schedule of a sweep: which cells a round visits and in what order (the config's, or shuffled by a
// seeded generator), how many repetitions a cell wants (repetitions, or a precision), whether the time
// budget allows another repetition, and the progress and estimate the observer gets.
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "core/base/clock.hpp"
#include "matrix/model/sweep_types.hpp"
#include "matrix/sweep_plan.hpp"

namespace nm {

struct CellProgress;

/// Seconds from `from` to `to`.
double seconds_between(Clock::time_point from, Clock::time_point to);

/// The seed of a shuffled order: `asked` (--seed), else the resumed file's, else a random one.
uint64_t choose_seed(std::optional<uint64_t> asked, const std::optional<ResultsFile>& resume);

class SweepSchedule {
public:
    /// What the results hold of a cell so far (null: nothing yet).
    using Recorded = std::function<const CellResult*(const std::string& key)>;

    /// `time_budget_s`: no repetition starts that would end after this many seconds of measuring.
    SweepSchedule(const SweepPlan& plan, Clock& clock, std::optional<double> time_budget_s, Recorded recorded);

    /// Seeds the shuffled order's generator (mt19937_64, whose sequence the standard fixes).
    void seed(uint64_t seed) { rng_.seed(seed); }
    /// Measuring starts: the time budget and the estimate count from now.
    void start() { started_ = clock_.now(); }

    /// True in the sequential order: a visit runs all of a cell's repetitions back to back.
    bool sequential() const { return plan_.config.order == SweepOrder::Sequential; }
    /// The next round: the cells (indices into the plan's) that want a visit, in the config's order once
    /// (sequential), or shuffled, round after round, until none wants more. Empty when the sweep is done.
    std::vector<size_t> next_round();
    /// 1-based round of the shuffled order; 0 in the sequential one.
    uint32_t round() const { return round_; }
    /// Fisher-Yates over `order`, then the first cell swapped away when it is the one visited last, so no
    /// cell is measured twice in a row while others wait.
    std::vector<size_t> shuffled(std::vector<size_t> order);
    /// Cell `index` is being visited (the next round does not start with it).
    void visiting(size_t index) { last_visited_ = index; }

    /// A measured cell wants another repetition while it has fewer than asked: `repetitions`, or with a
    /// precision at least min_repetitions and, until the precision is met, up to max_repetitions.
    bool wants_more(const CellResult& result) const;
    /// True when cell `index` has no result yet or wants more.
    bool wants_visit(size_t index) const;
    /// True when some cell wants a visit.
    bool any_wants_visit() const;
    /// The repetitions cell `index` is expected to get in all, for the estimate.
    size_t expected_repetitions(size_t index) const;

    /// True when another repetition would end within the time budget (always without one).
    bool budget_allows_another() const;
    std::optional<double> time_budget_s() const { return time_budget_s_; }
    /// Seconds since start().
    double elapsed_s() const { return seconds_between(started_, clock_.now()); }

    /// One more repetition measured (for the pace of the estimate).
    void count_repetition() { ++repetitions_done_; }
    size_t repetitions_done() const { return repetitions_done_; }
    /// Forgets the repetitions counted since `done` (a visit that is run again).
    void rewind_repetitions(size_t done) { repetitions_done_ = done; }

    /// Where cell `index` stands, for the observer: its settings (the DUT's when `with_dut`), the round,
    /// the time so far and the estimate of what is left (at most what is left of the budget).
    CellProgress progress(size_t index, bool with_dut) const;

private:
    /// Seconds one repetition is expected to take before any was measured.
    double repetition_s() const;
    uint64_t draw(uint64_t bound);

    const SweepPlan& plan_;
    const SweepConfig& config_;
    Clock& clock_;
    std::optional<double> time_budget_s_;
    Recorded recorded_;
    std::mt19937_64 rng_;
    std::optional<size_t> last_visited_;
    uint32_t round_ = 0;
    bool sequential_done_ = false;
    Clock::time_point started_{};
    size_t repetitions_done_ = 0;  // by this call, for the estimate
};

}  // namespace nm
