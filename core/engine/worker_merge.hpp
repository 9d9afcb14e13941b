#pragma once
// Merging what an end's worker threads measured, after join(), into the end's per-stream results and
// per-interval samples. Pure; unit tested.
#include <memory>
#include <vector>

#include "core/traffic/traffic_types.hpp"
#include "core/workers/worker.hpp"

namespace nm {

/// One result per stream id, in id order, with throughput over `duration_s` (0 when it is 0). A UDP
/// stream that two receiver sockets saw (a reuseport rehash) is summed: bytes, packets and LossStats add.
std::vector<StreamResult> merge_streams(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double duration_s);

/// A last interval shorter than this fraction of the interval joins the one before it.
inline constexpr double kIntervalSliver = 0.1;

/// The workers' interval counts summed per interval of `interval_s` seconds, with rates; the last interval
/// ends at `duration_s` (it may be shorter; one shorter than kIntervalSliver of an interval is folded into
/// the interval before it, which then ends at `duration_s`). Empty when `interval_s` <= 0.
std::vector<IntervalSample> merge_intervals(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s, double duration_s);

/// A request/response end's counts over its workers: transactions, lost and late add, the latency
/// histograms merge, and the intervals are the workers' window.interval_packets (transactions by request
/// time) summed as merge_intervals does.
RrEndCounts merge_rr(const std::vector<std::unique_ptr<WorkerOutput>>& outs, double interval_s, double duration_s);

/// An end's socket knobs: the first read-back among `outs` (senders first, as given), with every worker's
/// zerocopy and --rx-spin counts added and `skip_rx_copy` as the end applied it.
SocketKnobs merge_knobs(const std::vector<const std::vector<std::unique_ptr<WorkerOutput>>*>& outs, bool skip_rx_copy);

}  // namespace nm
