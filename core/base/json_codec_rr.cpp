// JSON of request/response results and socket knobs: the latency histogram (sparse buckets), its summary,
// per-interval transactions, each end's counts, a run's RrStats, and the knobs read back from sockets.
// Readers are tolerant: missing keys keep their defaults, so files from before these keys still load.
#include <stdexcept>

#include "core/base/error.hpp"
#include "core/base/rr_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;

void to_json(Json& j, const LatencyHistogram& v) {
    Json buckets = Json::array();
    for (const auto& [index, count] : v.buckets()) buckets.push_back(Json::array({index, count}));
    j = Json{{"unit", "ns"},
             {"sub_bucket_bits", LatencyHistogram::kSubBucketBits},
             {"count", v.count()},
             {"sum", v.sum_ns()},
             {"min", v.min_ns()},
             {"max", v.max_ns()},
             {"buckets", buckets}};
}

void from_json(const Json& j, LatencyHistogram& v) {
    int bits = LatencyHistogram::kSubBucketBits;
    opt(j, "sub_bucket_bits", bits);
    if (bits != LatencyHistogram::kSubBucketBits || j.value("unit", std::string("ns")) != "ns") {
        throw usage_error("rr.histogram: sub_bucket_bits " + std::to_string(bits) + ", unit " + j.value("unit", std::string("ns")) +
                          "; this build reads " + std::to_string(LatencyHistogram::kSubBucketBits) + " and ns");
    }
    std::vector<std::pair<size_t, uint64_t>> buckets;
    for (const auto& b : j.value("buckets", Json::array())) {
        buckets.emplace_back(codec::read<size_t>(b.at(0), "rr.histogram.buckets index"), codec::read<uint64_t>(b.at(1), "rr.histogram.buckets count"));
    }
    uint64_t count = 0, sum = 0, min = 0, max = 0;
    opt(j, "count", count);
    opt(j, "sum", sum);
    opt(j, "min", min);
    opt(j, "max", max);
    try {
        v = LatencyHistogram::from_parts(buckets, count, sum, min, max);
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("rr.") + e.what());
    }
}

void to_json(Json& j, const LatencySummary& v) {
    j = Json{{"mean", v.mean}, {"p50", v.p50}, {"p90", v.p90}, {"p99", v.p99}, {"p999", v.p999}, {"max", v.max}};
}

void from_json(const Json& j, LatencySummary& v) {
    opt(j, "mean", v.mean);
    opt(j, "p50", v.p50);
    opt(j, "p90", v.p90);
    opt(j, "p99", v.p99);
    opt(j, "p999", v.p999);
    opt(j, "max", v.max);
}

void to_json(Json& j, const RrInterval& v) {
    j = Json{{"start_s", v.start_s}, {"end_s", v.end_s}, {"transactions", v.transactions}, {"transactions_per_s", v.transactions_per_s}};
}

void from_json(const Json& j, RrInterval& v) {
    opt(j, "start_s", v.start_s);
    opt(j, "end_s", v.end_s);
    opt(j, "transactions", v.transactions);
    opt(j, "transactions_per_s", v.transactions_per_s);
}

void to_json(Json& j, const RrEndCounts& v) {
    j = Json{{"transactions", v.transactions}, {"lost", v.lost}, {"late", v.late}, {"latency", v.latency}, {"intervals", v.intervals}};
}

void from_json(const Json& j, RrEndCounts& v) {
    opt(j, "transactions", v.transactions);
    opt(j, "lost", v.lost);
    opt(j, "late", v.late);
    opt(j, "latency", v.latency);
    opt(j, "intervals", v.intervals);
}

void to_json(Json& j, const RrStats& v) {
    j = Json{{"transactions", v.transactions},
             {"transactions_per_s", v.transactions_per_s},
             {"responder_transactions", v.responder_transactions},
             {"lost", v.lost},
             {"late", v.late},
             {"latency_us", v.latency_us},
             {"histogram", v.histogram},
             {"intervals", v.intervals},
             {"cpu_us_per_transaction", {{"sender", v.cpu_us_per_transaction_sender}, {"receiver", v.cpu_us_per_transaction_receiver}}}};
}

void from_json(const Json& j, RrStats& v) {
    opt(j, "transactions", v.transactions);
    opt(j, "transactions_per_s", v.transactions_per_s);
    opt(j, "responder_transactions", v.responder_transactions);
    opt(j, "lost", v.lost);
    opt(j, "late", v.late);
    opt(j, "latency_us", v.latency_us);
    opt(j, "histogram", v.histogram);
    opt(j, "intervals", v.intervals);
    if (const auto it = j.find("cpu_us_per_transaction"); it != j.end() && it->is_object()) {
        opt(*it, "sender", v.cpu_us_per_transaction_sender);
        opt(*it, "receiver", v.cpu_us_per_transaction_receiver);
    }
}

void to_json(Json& j, const ZeroCopyStats& v) {
    j = Json{{"requested", v.requested}, {"sends", v.sends},         {"completions", v.completions},
             {"copied", v.copied},       {"fell_back", v.fell_back}, {"note", v.note}};
}

void from_json(const Json& j, ZeroCopyStats& v) {
    opt(j, "requested", v.requested);
    opt(j, "sends", v.sends);
    opt(j, "completions", v.completions);
    opt(j, "copied", v.copied);
    opt(j, "fell_back", v.fell_back);
    opt(j, "note", v.note);
}

void to_json(Json& j, const RxSpinStats& v) { j = Json{{"us", v.us}, {"spins", v.spins}, {"caught", v.caught}}; }

void from_json(const Json& j, RxSpinStats& v) {
    opt(j, "us", v.us);
    opt(j, "spins", v.spins);
    opt(j, "caught", v.caught);
}

void to_json(Json& j, const SocketKnobs& v) {
    j = Json{{"congestion", v.congestion},
             {"nodelay", v.nodelay},
             {"mss", v.mss},
             {"tos", v.tos >= 0 ? Json(v.tos) : Json(nullptr)},
             {"dscp", v.tos >= 0 ? Json(v.tos >> 2) : Json(nullptr)},
             {"zerocopy", v.zerocopy},
             {"skip_rx_copy", v.skip_rx_copy},
             {"bind_dev", v.bind_dev},
             {"rx_spin", v.rx_spin},
             {"write_size", v.write_size}};
}

void from_json(const Json& j, SocketKnobs& v) {
    opt(j, "congestion", v.congestion);
    opt(j, "nodelay", v.nodelay);
    opt(j, "mss", v.mss);
    opt(j, "tos", v.tos);
    opt(j, "zerocopy", v.zerocopy);
    opt(j, "skip_rx_copy", v.skip_rx_copy);
    opt(j, "bind_dev", v.bind_dev);
    opt(j, "rx_spin", v.rx_spin);
    opt(j, "write_size", v.write_size);
}

}  // namespace nm
