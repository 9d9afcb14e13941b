#include <catch2/catch.hpp>

#include <stdexcept>

#include "core/workers/worker.hpp"

namespace {

// Everything a WorkerJob refers to, for one worker.
struct Harness {
    nm::EnginePlan plan;
    nm::Timeline timeline;
    nm::WorkerProgress progress;
    nm::WorkerOutput out;
    nm::WorkerJob job{{}, plan, timeline, progress, {}, out};
};

void throws_runtime_error(nm::WorkerJob&) { throw std::runtime_error("boom"); }
void throws_int(nm::WorkerJob&) { throw 42; }
void records_then_throws(nm::WorkerJob& job) {
    job.out.error = "stream 1: send: Broken pipe";
    throw std::runtime_error("later");
}
void ends_normally(nm::WorkerJob& job) { job.out.calls = 3; }

}  // namespace

TEST_CASE("run_worker turns any exception into the worker's error and always sets done", "[unit]") {
    Harness a;
    nm::run_worker(throws_runtime_error, a.job);
    CHECK(a.out.error == "boom");
    CHECK(a.progress.done.load());

    Harness b;
    nm::run_worker(throws_int, b.job);  // not a std::exception: still caught, still an error
    CHECK_FALSE(b.out.error.empty());
    CHECK(b.progress.done.load());

    Harness c;
    nm::run_worker(records_then_throws, c.job);  // the first error is the one that explains
    CHECK(c.out.error == "stream 1: send: Broken pipe");

    Harness d;
    nm::run_worker(ends_normally, d.job);
    CHECK(d.out.error.empty());
    CHECK(d.out.calls == 3);
    CHECK(d.progress.done.load());
}

TEST_CASE("until_peer_done keeps the window's start and removes its end", "[unit]") {
    nm::Timeline tl;
    tl.window_start = nm::TimePoint{} + std::chrono::seconds(1);
    tl.window_end = nm::TimePoint{} + std::chrono::seconds(3);
    const auto r = nm::until_peer_done(tl);
    CHECK(r.window_start == tl.window_start);
    CHECK(r.window_end == nm::TimePoint::max());
}

TEST_CASE("stream_results names each stream's id and direction, stream_error names the stream", "[unit]") {
    std::vector<nm::DataStream> streams;
    streams.push_back(nm::DataStream{nm::UniqueFd(), 4});
    streams.push_back(nm::DataStream{nm::UniqueFd(), 5});
    const auto v = nm::stream_results(streams, nm::Direction::Reverse);
    REQUIRE(v.size() == 2);
    CHECK(v[1].id == 5);
    CHECK(v[1].direction == nm::Direction::Reverse);
    CHECK(v[1].bytes == 0);
    CHECK(nm::stream_error(3, "send", EPIPE) == "stream 3: send: Broken pipe");
}
