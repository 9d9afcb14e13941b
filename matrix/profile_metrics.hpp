#pragma once
// The kernel profile's figures as metrics of a run, for the summaries, report, compare and the plots:
//   cpu:<category>            the category's share of the sampled CPU time of the run's host(s): on one
//                             host (the lab) that host's; on two, both hosts' samples pooled
//   cpu:sender:<category>     the same for the sender's host alone, and cpu:receiver:<category> for the
//                             receiver's, when the ends are on different hosts
// Shares are percent of all samples (every CPU, idle included) over the end's measured window.
#include <map>
#include <string>

#include "core/traffic/traffic_types.hpp"

namespace nm {

/// Adds the profile metrics of `run` (none when it has no profile) to `metrics`.
void add_profile_metrics(const RunResult& run, std::map<std::string, double>& metrics);

/// True when `name` has the form of a profile metric (cpu:<category>, cpu:sender:<category>,
/// cpu:receiver:<category>); whether a results file has it is for the file to say.
bool is_profile_metric(const std::string& name);

}  // namespace nm
