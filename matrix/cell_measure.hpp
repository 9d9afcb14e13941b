#pragma once
// Measuring a cell once its settings stand: the test it runs, a quiet machine before each repetition,
// one repetition (or a frame-size table) into the cell's result, the cell's summaries, the cooldown.
#include <functional>
#include <optional>
#include <stop_token>
#include <vector>

#include "core/traffic/rfc2544_types.hpp"
#include "core/traffic/traffic_types.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

struct SweepTarget;
struct SweepServices;

class CellMeasure {
public:
    CellMeasure(const SweepConfig& config, const SweepTarget& target, SweepServices& services, std::stop_token stop);

    /// The test of `cell` as it runs here: the cell's traffic, the target's host, port, bind and
    /// interface, the config's affinity, duration, omit and profile (streams only).
    TestSpec test_spec(const CellSpec& cell) const;
    /// One repetition into `result`, after a quiet machine; the first run after a change carries `link`
    /// (what the change did to the links; taken). False when the cell must not go on (a stop, or the run
    /// failed: the cell's status says why).
    bool measure_one(const TestSpec& spec, CellResult& result, std::optional<ChangeLink>& link);
    /// A frame-size table: one measurement per cell (its trials are its repetitions). The line rate comes
    /// from `local_link_bps` (the sending interface's link speed as the cell leaves it; may throw), unless
    /// the entry sets one; `interfaces` are recorded with the table.
    void measure_rfc2544(const CellSpec& cell, const TestSpec& base, CellResult& result, const std::function<std::optional<double>()>& local_link_bps,
                         std::vector<InterfaceCoalesce> interfaces);
    /// The cell's summaries, modes and whether its precision is met, from its runs.
    void finish_summary(CellResult& result) const;
    /// Waits the config's cooldown (a stop cuts it short).
    void cooldown();

private:
    std::optional<BackgroundLoad> wait_for_quiet(bool& disturbed);
    double confidence() const { return config_.precision ? config_.precision->confidence : 95; }

    const SweepConfig& config_;
    const SweepTarget& target_;
    SweepServices& s_;
    std::stop_token stop_;
};

}  // namespace nm
