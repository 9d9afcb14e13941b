#pragma once
// A sweep as a plan: the config and its cells, expanded once, and what each cell asks of each end. Built
// once (load_sweep_plan, or make_sweep_plan for a config already checked) and passed down to the checks,
// the dry run and the runner, which read the cells from it and never expand them again.
#include <optional>
#include <string>
#include <vector>

#include "matrix/model/sweep_types.hpp"

namespace nm {

/// A sweep config and its cells.
struct SweepPlan {
    SweepConfig config;
    /// expand_cells(config): offloads x mtu x tuning axes x traffic, less the excluded, in that order.
    std::vector<CellSpec> cells;

    /// The position of the cell `key` in `cells`; cells.size() when the plan has none.
    size_t index_of(const std::string& key) const;
};

/// The plan of `config`: its cells expanded (the one place a sweep expands them). Pure; checks nothing
/// (load_sweep_plan checks a config file as it reads it).
SweepPlan make_sweep_plan(SweepConfig config);

/// Which interface of the path a setting goes to.
enum class EndRole { Local, Remote, Dut };

/// True when settings for `to` go to the end of `role`.
bool applies_to(ApplyTo to, EndRole role);
/// Where the config puts the values of tuning axis `axis` (its "apply_to", both ends by default).
ApplyTo axis_applies_to(const SweepConfig& config, const std::string& axis);
/// True when some setting of the config goes to the device under test's ports ("apply_to": "dut").
bool uses_dut(const SweepConfig& config);

/// The settings `cell` asks of one end, given the config's apply_to. Empty when the end gets nothing.
LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, EndRole role);
/// The same for the local (remote = false) or the peer end.
LinkSettings cell_settings(const SweepConfig& config, const CellSpec& cell, bool remote);

/// True when some cell of `plan` changes a setting on the local (remote = false) or the peer end.
bool sweep_changes_end(const SweepPlan& plan, bool remote);

/// Seconds of measuring a cell is expected to take (planned_repetitions x (omit + duration + cooldown),
/// or an estimate of a frame-size table's trials); for --dry-run.
double planned_seconds(const SweepConfig& config, const CellSpec& cell);

/// The repetitions a cell is expected to get: `repetitions`, or with a precision at least what its
/// confidence needs (6 for 95%), within min_repetitions..max_repetitions.
uint32_t planned_repetitions(const SweepConfig& config);

/// The same cells a sweep would run, with the settings each applies, changing nothing (--dry-run).
struct CellPlan {
    CellSpec cell;
    LinkSettings local;
    LinkSettings remote;
    LinkSettings dut;   ///< on each DUT port (apply_to "dut")
    bool done = false;  ///< already in the file being resumed
};
std::vector<CellPlan> plan_sweep(const SweepPlan& plan, const std::optional<ResultsFile>& resume);

/// Human text of LinkSettings: "mtu=9000 gro=off tso=off"; "(unchanged)" when empty.
std::string describe_settings(const LinkSettings& settings);

}  // namespace nm
