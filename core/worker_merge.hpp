#pragma once
// Merging what an end's worker threads measured, after join(), into the end's per-stream results and
// per-interval samples. Pure; unit tested.
#include <memory>
#include <vector>

#include "core/base/traffic_types.hpp"
#include "core/worker.hpp"

namespace nm {

/// One result per stream id, in id order, with throughput over `duration_s` (0 when it is 0). A UDP
/// stream that two receiver sockets saw (a reuseport rehash) is summed: bytes, packets and LossStats add.
std::vector<StreamResult> merge_streams(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double duration_s);

/// The workers' interval counts summed per interval of `interval_s` seconds, with rates; the last interval
/// ends at `duration_s` (it may be shorter). Empty when `interval_s` <= 0.
std::vector<IntervalSample> merge_intervals(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s,
                                            double duration_s);

}  // namespace nm
