#pragma once
// RFC 2544 section 26.1 throughput: the highest offered rate at which no frames are lost, found by a
// binary search over timed trials. The trial itself (sending at a paced rate and counting what arrived)
// is a callback, so the search is tested against a fake path with a known limit and run for real by the
// traffic engine.
#include <cstdint>
#include <functional>
#include <stop_token>
#include <vector>

namespace nm {

/// What one timed trial at an offered rate did. Loss is counted against frames actually sent.
struct TrialOutcome {
    double offered_fps = 0;  ///< the rate asked of the generator
    double sent_fps = 0;     ///< what the generator actually sent (sent / duration)
    uint64_t sent = 0;
    uint64_t received = 0;

    uint64_t lost() const { return sent > received ? sent - received : 0; }
    double loss_pct() const { return sent == 0 ? 0.0 : 100.0 * static_cast<double>(lost()) / static_cast<double>(sent); }
};

struct SearchOptions {
    double max_fps = 0;                    ///< upper bound: line rate (or the generator's maximum)
    double min_fps = 0;                    ///< lower bound; 0 = search down to nothing
    double resolution_pct = 1.0;           ///< stop when the bracket is narrower than this % of its upper end (or,
                                           ///< nothing passing, when the top fell below this % of the first top)
    uint32_t max_trials = 20;              ///< including the first trial at max_fps, not the confirmation
    double loss_tolerance_pct = 0.0;       ///< a trial "passes" with loss at or below this
    double generator_shortfall_pct = 5.0;  ///< sending this % below the offered rate = generator-limited
};

/// One trial in the order run, for the result's history.
struct SearchStep {
    TrialOutcome outcome;
    bool passed = false;
};

struct SearchResult {
    double throughput_fps = 0;       ///< highest passing rate as actually sent; 0 when none passed
    bool found = false;              ///< some trial passed
    TrialOutcome at_rate;            ///< the passing trial the throughput comes from
    TrialOutcome confirmation;       ///< a final trial at the reported rate
    bool confirmed = false;          ///< the confirmation trial passed too (a failed confirmation backs the
                                     ///< rate off by the resolution, then 2x, 4x, 8x it, until a rate
                                     ///< passes, and confirms that one; at most 4 steps)
    uint32_t trials = 0;             ///< search trials run (without the confirmation)
    bool generator_limited = false;  ///< some trial could not send at the offered rate
    double generator_max_fps = 0;    ///< highest rate the generator actually sent in any trial
    bool interrupted = false;
    std::vector<SearchStep> history;
};

using TrialFunction = std::function<TrialOutcome(double offered_fps)>;

/// Runs the search. A trial passes when its loss is within the tolerance. The first trial runs at
/// max_fps; if it passes, that is the result (line rate, or the generator's limit when it could not
/// send that fast). Otherwise the bracket [low, high] halves until it is narrower than the resolution or
/// max_trials are spent. When the generator falls short of the offered rate, the search does not
/// offer above what it managed, so a table limited by the generator says so. Throws nm::Error (Usage)
/// for bad options.
SearchResult find_throughput(const TrialFunction& trial, const SearchOptions& options, std::stop_token stop = {});

}  // namespace nm
