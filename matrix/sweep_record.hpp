#pragma once
// What a sweep records: the results file's header (tool, run, order, hosts), its cells in the plan's
// order, saved atomically after every change, and the effective settings already measured (a later cell
// with the same ones is a duplicate).
#include <map>
#include <optional>
#include <string>

#include "matrix/model/sweep_types.hpp"
#include "matrix/sweep_plan.hpp"

namespace nm {

class SweepObserver;
struct SweepOptions;

/// Now, as the results file writes its times: "2026-11-30T02:00:01Z".
std::string utc_now();

/// The key by which two cells' effective settings are the same: both ends' and the DUT's settings as
/// applied, and the traffic.
std::string settings_fingerprint(const CellResult& result);

class SweepRecord {
public:
    SweepRecord(const SweepPlan& plan, const SweepOptions& options, SweepObserver* observer, ResultsFile& results);

    /// Starts the results: a resumed file as it is (its cells' specs from the plan, a note when another
    /// build continues it) or a new header; the order (with `seed` when shuffled), the budget and both
    /// hosts (a note when the peer's agent is another build).
    void begin(std::optional<uint64_t> seed, const HostInfo& local, const HostInfo& remote);
    /// The results' cell `key`; null when it has none yet.
    CellResult* recorded(const std::string& key);
    const CellResult* recorded(const std::string& key) const;
    /// Adds a cell's first result in the plan's order and saves.
    void record(CellResult result);
    /// Writes the results file (with what the observer's stream has lost); nothing without an output path.
    void save();

    /// The key of a cell measured before with the same effective settings as `result`, if any; else
    /// remembers `result`'s as cell `key`'s.
    std::optional<std::string> duplicate_of(const CellResult& result, const std::string& key);
    /// Forgets the settings remembered for cell `key` (a first visit that is run again).
    void forget(const std::string& key);

private:
    void note(const std::string& text);

    const SweepPlan& plan_;
    const SweepOptions& options_;
    SweepObserver* observer_;
    ResultsFile& results_;
    std::map<std::string, std::string> measured_;  // fingerprint -> key of the first cell with it
};

}  // namespace nm
