#pragma once
// What a request/response test measured (`run --rr`, `--crr`, `-u --rr`): transactions, their latency
// and its histogram, per interval, per end. Plain values; JSON in json_codec_traffic.cpp.
#include <cstdint>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/traffic/latency_histogram.hpp"

namespace nm {

/// Latency percentiles of the transactions, microseconds (from a LatencyHistogram: mean and max exact,
/// the percentiles within LatencyHistogram::kRelativeError of the exact nearest-rank values).
struct LatencySummary {
    double mean = 0;
    double p50 = 0;
    double p90 = 0;
    double p99 = 0;
    double p999 = 0;
    double max = 0;
};

constexpr auto json_fields(const LatencySummary*) {
    using S = LatencySummary;
    return field_list(field("mean", &S::mean), field("p50", &S::p50), field("p90", &S::p90), field("p99", &S::p99), field("p999", &S::p999),
                      field("max", &S::max));
}

/// The summary of a histogram, in microseconds.
LatencySummary summarize_latency(const LatencyHistogram& h);

/// Transactions in one interval of the measured window (counted by when their request went out).
struct RrInterval {
    double start_s = 0;
    double end_s = 0;
    uint64_t transactions = 0;
    double transactions_per_s = 0;
};

constexpr auto json_fields(const RrInterval*) {
    using S = RrInterval;
    return field_list(field("start_s", &S::start_s), field("end_s", &S::end_s), field("transactions", &S::transactions),
                      field("transactions_per_s", &S::transactions_per_s));
}

/// What one end counted (the server sends its own in EndReport). The end that starts transactions (the
/// client) times them; the responding end counts the responses it sent and has no latencies.
struct RrEndCounts {
    uint64_t transactions = 0;          ///< initiator: requests sent in the window and answered; responder: responses sent
    uint64_t lost = 0;                  ///< UDP initiator: requests without a response within the timeout
    uint64_t late = 0;                  ///< UDP initiator: responses that came after their request was counted lost
    LatencyHistogram latency;           ///< initiator only: request sent -> response received (CRR: from connect())
    std::vector<RrInterval> intervals;  ///< initiator only
};

constexpr auto json_fields(const RrEndCounts*) {
    using S = RrEndCounts;
    return field_list(field("transactions", &S::transactions), field("lost", &S::lost), field("late", &S::late), field("latency", &S::latency),
                      field("intervals", &S::intervals));
}

/// A request/response run, both ends merged (RunResult::rr).
struct RrStats {
    uint64_t transactions = 0;            ///< the initiator's count: requests sent in its window and answered
    double transactions_per_s = 0;        ///< transactions / the initiator's window
    uint64_t responder_transactions = 0;  ///< what the responding end counted (the same with --omit 0)
    uint64_t lost = 0;                    ///< UDP: requests (or their responses) lost
    uint64_t late = 0;                    ///< UDP: responses after their timeout
    LatencySummary latency_us;
    LatencyHistogram histogram;  ///< the latencies the summary is from, mergeable across runs
    std::vector<RrInterval> intervals;
    /// CPU µs of each end's engine threads (user + sys) per transaction.
    double cpu_us_per_transaction_sender = 0;    ///< the initiator (client)
    double cpu_us_per_transaction_receiver = 0;  ///< the responder (server)
};

constexpr auto json_fields(const RrStats*) {
    using S = RrStats;
    return field_list(field("transactions", &S::transactions), field("transactions_per_s", &S::transactions_per_s),
                      field("responder_transactions", &S::responder_transactions), field("lost", &S::lost), field("late", &S::late),
                      field("latency_us", &S::latency_us), field("histogram", &S::histogram), field("intervals", &S::intervals),
                      field_group("cpu_us_per_transaction", field("sender", &S::cpu_us_per_transaction_sender),
                                  field("receiver", &S::cpu_us_per_transaction_receiver)));
}

}  // namespace nm
