#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "core/engine/worker_merge.hpp"

namespace {

nm::StreamResult stream(uint32_t id, uint64_t bytes, uint64_t packets = 0) {
    nm::StreamResult s;
    s.id = id;
    s.bytes = bytes;
    s.packets = packets;
    return s;
}

std::vector<std::unique_ptr<nm::WorkerOutput>> outputs(size_t n) {
    std::vector<std::unique_ptr<nm::WorkerOutput>> v;
    for (size_t i = 0; i < n; ++i) v.push_back(std::make_unique<nm::WorkerOutput>());
    return v;
}

}  // namespace

TEST_CASE("merge_streams: one result per id in id order, throughput over the duration", "[unit]") {
    auto outs = outputs(2);
    outs[0]->streams = {stream(2, 2000), stream(0, 1000)};
    outs[1]->streams = {stream(1, 500)};
    const auto v = nm::merge_streams(outs, 2.0);
    REQUIRE(v.size() == 3);
    CHECK(v[0].id == 0);
    CHECK(v[1].id == 1);
    CHECK(v[2].id == 2);
    CHECK(v[0].throughput_bps == Approx(1000 * 8 / 2.0));
    CHECK(v[2].throughput_bps == Approx(2000 * 8 / 2.0));
    CHECK(nm::merge_streams(outs, 0)[0].throughput_bps == 0);
}

TEST_CASE("merge_streams: a UDP stream two receiver sockets saw is summed, jitter the worse", "[unit]") {
    auto outs = outputs(2);
    auto a = stream(3, 1800, 100);
    a.loss = nm::LossStats{0, 100, 0, 1, 2, 0, 0.5};
    auto b = stream(3, 180, 10);
    b.loss = nm::LossStats{0, 10, 0, 0, 1, 0, 0.25};
    outs[0]->streams = {a};
    outs[1]->streams = {b};
    const auto v = nm::merge_streams(outs, 1.0);
    REQUIRE(v.size() == 1);
    CHECK(v[0].bytes == 1980);
    CHECK(v[0].packets == 110);
    REQUIRE(v[0].loss);
    CHECK(v[0].loss->received == 110);
    CHECK(v[0].loss->duplicates == 1);
    CHECK(v[0].loss->reordered == 3);
    CHECK(v[0].loss->jitter_ms == 0.5);
}

TEST_CASE("merge_intervals sums the workers' intervals, the last one ends at the duration", "[unit]") {
    auto outs = outputs(2);
    outs[0]->window.interval_bytes = {100, 200, 300};
    outs[0]->window.interval_packets = {1, 2, 3};
    outs[1]->window.interval_bytes = {10, 20};
    outs[1]->window.interval_packets = {4, 5};
    const auto v = nm::merge_intervals(outs, 0.5, 1.25);
    REQUIRE(v.size() == 3);
    CHECK(v[0].bytes == 110);
    CHECK(v[1].packets == 7);
    CHECK(v[2].bytes == 300);
    CHECK(v[0].start_s == 0);
    CHECK(v[0].end_s == 0.5);
    CHECK(v[2].start_s == 1.0);
    CHECK(v[2].end_s == 1.25);  // a quarter-second interval
    CHECK(v[2].throughput_bps == Approx(300 * 8 / 0.25));
    CHECK(v[1].packets_per_s == Approx(7 / 0.5));
    CHECK(nm::merge_intervals(outs, 0, 1.25).empty());
}

TEST_CASE("merge_intervals folds a trailing sliver of the window into the interval before it", "[unit]") {
    auto outs = outputs(1);
    outs[0]->window.interval_bytes = {1000, 2000, 7};
    outs[0]->window.interval_packets = {10, 20, 1};
    // The window ended 0.4 ms after the second full interval: 0.0004 s is under a tenth of 0.5 s.
    const auto v = nm::merge_intervals(outs, 0.5, 1.0004);
    REQUIRE(v.size() == 2);
    CHECK(v[1].bytes == 2007);
    CHECK(v[1].packets == 21);
    CHECK(v[1].start_s == 0.5);
    CHECK(v[1].end_s == Approx(1.0004));
    CHECK(v[1].throughput_bps == Approx(2007 * 8 / 0.5004));
    CHECK(v[0].bytes + v[1].bytes == 3007);  // nothing lost
    // A tenth or more stays an interval of its own.
    const auto w = nm::merge_intervals(outs, 0.5, 1.06);
    REQUIRE(w.size() == 3);
    CHECK(w[2].end_s == Approx(1.06));
    // One interval alone is never folded away.
    auto one = outputs(1);
    one[0]->window.interval_bytes = {5};
    one[0]->window.interval_packets = {1};
    CHECK(nm::merge_intervals(one, 0.5, 0.0004).size() == 1);
    // A sliver in which nothing was counted (the receiver's window ran 3 ms past the sender's last byte):
    // no interval of its own, and the last one still ends at the window's end.
    auto quiet = outputs(1);
    quiet[0]->window.interval_bytes = {1000, 2000, 3000};
    quiet[0]->window.interval_packets = {1, 2, 3};
    const auto q = nm::merge_intervals(quiet, 0.5, 1.5034);
    REQUIRE(q.size() == 3);
    CHECK(q[2].end_s == Approx(1.5034));
    CHECK(q[2].throughput_bps == Approx(3000 * 8 / 0.5034));
    // A longer quiet tail is not a sliver: the last interval keeps its own edge.
    CHECK(nm::merge_intervals(quiet, 0.5, 1.6).back().end_s == 1.5);
}
