// JSON of the latency histogram (sparse buckets) and of the socket knobs' keys that are not one member
// each. The summary, per-interval transactions, each end's counts, a run's RrStats and the zerocopy and
// rx-spin counts are their field lists' (rr_types.hpp, socket_types.hpp). Readers are tolerant: missing
// keys keep their defaults, so files from before these keys still load.
#include <stdexcept>

#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/traffic/rr_codec.hpp"

namespace nm {

using codec::opt;

void to_json(Json& j, const LatencyHistogram& v) {
    Json buckets = Json::array();
    for (const auto& [index, count] : v.buckets()) buckets.push_back(Json::array({index, count}));
    j = Json{{"unit", "ns"},       {"sub_bucket_bits", LatencyHistogram::kSubBucketBits},
             {"count", v.count()}, {"sum", v.sum_ns()},
             {"min", v.min_ns()},  {"max", v.max_ns()},
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
        buckets.emplace_back(codec::read<size_t>(b.at(0), "rr.histogram.buckets index"),
                             codec::read<uint64_t>(b.at(1), "rr.histogram.buckets count"));
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

// The listed knobs (socket_types.hpp) and "dscp" beside "tos", written for the reader, not read.
void to_json(Json& j, const SocketKnobs& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["dscp"] = v.tos >= 0 ? Json(v.tos >> 2) : Json(nullptr);
}

void from_json(const Json& j, SocketKnobs& v) { read_fields(j, v, json_fields_and_more(&v)); }

}  // namespace nm
