#pragma once
#include <string>
#include <vector>

#include "matrix/model/sweep_types.hpp"
#include "matrix/sweep_plan.hpp"

namespace nm {

/// Reads and checks a sweep config file. Throws nm::Error (Usage) whose message starts with the file
/// name and the JSON pointer of the offending value and says what was expected, e.g.
/// `configs/x.json: /traffic/1/streams: expected a positive integer (at most 256), got -3`.
/// A config without a "name" is named after its file ("offload-mtu" for configs/offload-mtu.json).
SweepConfig load_sweep_config(const std::string& path);

/// The same for JSON text; `source` names it in error messages.
SweepConfig parse_sweep_config_text(const std::string& text, const std::string& source);

/// load_sweep_config with the config's plan: its cells, expanded once (every cell's test is checked
/// against the engine's limits at the cell's MTU as the config is read).
SweepPlan load_sweep_plan(const std::string& path);

/// The same for JSON text; `source` names it in error messages.
SweepPlan parse_sweep_plan_text(const std::string& text, const std::string& source);

/// The cells of a sweep: the cartesian product offloads × mtu × traffic, in that nesting (profile
/// outermost, as the config lists them), less the cells an exclusion rule matches. The order and the
/// keys ("<profile>/mtu<N>/<traffic>") depend only on the config. A sweep expands them once, in its
/// plan (make_sweep_plan, matrix/sweep_plan.hpp).
std::vector<CellSpec> expand_cells(const SweepConfig& config);

/// True when `rule` matches `cell`: every field the rule gives is equal in the cell.
bool excludes(const ExcludeRule& rule, const CellSpec& cell);

}  // namespace nm
