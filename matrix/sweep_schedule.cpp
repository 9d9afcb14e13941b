#include "matrix/sweep_schedule.hpp"

#include <algorithm>

#include "matrix/runner.hpp"
#include "matrix/stats.hpp"

namespace nm {

double seconds_between(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

uint64_t choose_seed(std::optional<uint64_t> asked, const std::optional<ResultsFile>& resume) {
    if (asked) return *asked;
    if (resume && resume->run.order.seed) return *resume->run.order.seed;
    return std::random_device{}();
}

SweepSchedule::SweepSchedule(const SweepPlan& plan, Clock& clock, std::optional<double> time_budget_s, Recorded recorded)
    : plan_(plan), config_(plan.config), clock_(clock), time_budget_s_(time_budget_s), recorded_(std::move(recorded)) {}

std::vector<size_t> SweepSchedule::next_round() {
    std::vector<size_t> order;
    if (sequential()) {
        if (sequential_done_) return order;
        sequential_done_ = true;
    } else {
        ++round_;
    }
    for (size_t i = 0; i < plan_.cells.size(); ++i) {
        if (wants_visit(i)) order.push_back(i);
    }
    return sequential() ? order : shuffled(std::move(order));
}

uint64_t SweepSchedule::draw(uint64_t bound) {
    // Uniform in [0, bound) from the generator's raw output (std::uniform_int_distribution differs between
    // standard libraries, and a seed must give the same order everywhere).
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x = 0;
    do {
        x = rng_();
    } while (x >= limit);
    return x % bound;
}

std::vector<size_t> SweepSchedule::shuffled(std::vector<size_t> order) {
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw(i)]);
    if (order.size() > 1 && last_visited_ && order.front() == *last_visited_) std::swap(order[0], order[1 + draw(order.size() - 1)]);
    return order;
}

bool SweepSchedule::wants_more(const CellResult& result) const {
    if (result.status != CellStatus::Ok || result.spec.traffic.rfc2544) return false;
    const size_t n = result.runs.size();
    if (!config_.precision) return n < config_.repetitions;
    const auto& p = *config_.precision;
    if (n < p.min_repetitions) return true;
    return n < p.max_repetitions && !result.precision_met.value_or(false);
}

bool SweepSchedule::wants_visit(size_t index) const {
    const CellResult* r = recorded_(plan_.cells[index].key);
    return r == nullptr || wants_more(*r);
}

bool SweepSchedule::any_wants_visit() const {
    for (size_t i = 0; i < plan_.cells.size(); ++i) {
        if (wants_visit(i)) return true;
    }
    return false;
}

// What it has when it wants no more; with a precision at least what the asked confidence needs (6 for
// 95%), all of max_repetitions once that did not suffice.
size_t SweepSchedule::expected_repetitions(size_t index) const {
    const CellResult* r = recorded_(plan_.cells[index].key);
    if (r != nullptr && !wants_more(*r)) return r->runs.size();
    if (plan_.cells[index].traffic.rfc2544) return 1;
    const size_t have = r != nullptr ? r->runs.size() : 0;
    if (!config_.precision) return config_.repetitions;
    const auto& p = *config_.precision;
    const size_t needed = std::max<size_t>(p.min_repetitions, repetitions_for_confidence(p.confidence));
    const size_t guess = have >= needed ? p.max_repetitions : needed;
    return std::clamp<size_t>(guess, have + 1, p.max_repetitions);
}

double SweepSchedule::repetition_s() const {
    return config_.omit_s + config_.duration_s + config_.cooldown_s + 0.2 + config_.interference.sample_ms / 1000.0;
}

bool SweepSchedule::budget_allows_another() const {
    if (!time_budget_s_) return true;
    return elapsed_s() + repetition_s() <= *time_budget_s_;
}

CellProgress SweepSchedule::progress(size_t index, bool with_dut) const {
    const auto& cell = plan_.cells[index];
    CellProgress p;
    p.number = index + 1;
    p.total = plan_.cells.size();
    p.cell = &cell;
    p.local = cell_settings(config_, cell, false);
    p.remote = cell_settings(config_, cell, true);
    if (with_dut) p.dut = cell_settings(config_, cell, EndRole::Dut);
    p.round = round_;
    p.elapsed_s = elapsed_s();
    p.budget_s = time_budget_s_.value_or(0);
    // What is left: the repetitions every cell is still expected to get, at the pace so far.
    size_t left = 0;
    for (size_t i = 0; i < plan_.cells.size(); ++i) {
        const CellResult* r = recorded_(plan_.cells[i].key);
        const size_t have = r != nullptr ? r->runs.size() : 0;
        const size_t planned = expected_repetitions(i);
        if (planned > have) left += planned - have;
    }
    const double per = repetitions_done_ > 0 ? p.elapsed_s / static_cast<double>(repetitions_done_) : repetition_s();
    p.eta_s = static_cast<double>(left) * per;
    if (time_budget_s_) p.eta_s = std::min(p.eta_s, std::max(0.0, *time_budget_s_ - p.elapsed_s));
    return p;
}

}  // namespace nm
