#pragma once
// The settings of one end as a sweep sees them: what a cell's request completes from the originals, the
// state a results file keeps of an end, and why a change did not hold. Pure functions of values.
#include <map>
#include <string>

#include "ethtool_ctl/device_control.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

/// The tuning kinds the sweep has axes of, kept in what a cell records (the originals keep every kind).
TuningState trimmed_tuning(const TuningState& tuning, const SweepConfig& config);

/// A cell's request names only its own values; what another value of the same axis names and this one
/// does not goes back to the original, so each cell runs under exactly its label whatever ran before.
void complete_from_original(const SweepConfig& config, TuningRequest& request, const TuningState& original);

/// The state of one end as the results file keeps it: MTU and the active state of every feature the
/// device lets us change (fixed ones are in hosts.*.interface.original and cannot differ between cells).
EndSettings effective_settings(const LinkState& original, uint32_t mtu, const std::map<std::string, bool>& active);
/// The same for a state as read.
EndSettings end_settings(const LinkState& state);
/// The same with the tuning kinds of the sweep's axes.
EndSettings end_settings(const LinkState& state, const SweepConfig& config);

/// An interface as hosts.*.interface describes it, with its state as the sweep found it.
InterfaceInfo interface_info(const LinkState& state);

/// Why requested settings did not hold, in ethtool's words: "nm-a: tso fixed, mtu 9000 -> 1500".
std::string infeasible_reason(const ApplyReport& report);

/// "nm-a", or "nm-a (netns lab-a)".
std::string end_label(const std::string& ifname, const std::string& netns);

}  // namespace nm
