// The stream-set skeleton on real sockets: AF_UNIX socket pairs (no network), the far end of each pair
// held by the test.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/workers/stream_set.hpp"

using namespace std::chrono_literals;
using nm::Step;
using nm::Stream;
using nm::StreamSet;

namespace {

struct Pair {
    nm::DataStream near;  // goes into the set
    nm::UniqueFd far;     // the test's end
};

Pair socket_pair(uint32_t id) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    return {nm::DataStream{nm::UniqueFd(fds[0]), id}, nm::UniqueFd(fds[1])};
}

void write_all(int fd, const std::string& s) { REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size())); }

// Reads what is there: again() after data, wait() on EAGAIN, done() at EOF.
Step read_some(Stream& s, std::vector<std::string>& got) {
    char buf[4];
    const ssize_t r = ::read(s.fd(), buf, sizeof buf);
    if (r > 0) {
        got[s.index()].append(buf, static_cast<size_t>(r));
        return Step::again();
    }
    if (r < 0 && errno == EAGAIN) return Step::wait();
    return Step::done();
}

}  // namespace

TEST_CASE("StreamSet serves each ready stream until EOF and ends when every stream is done", "[unit]") {
    auto a = socket_pair(7);
    auto b = socket_pair(9);
    write_all(a.far.get(), "hello, ");
    write_all(b.far.get(), "world and more");
    a.far.reset();  // EOF after the data
    b.far.reset();
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    streams.push_back(std::move(b.near));
    std::vector<std::string> got(2);
    StreamSet set(std::move(streams), {.events = EPOLLIN, .on_stop = nm::OnStop::End, .on_turn = {}, .on_ready = [&](Stream& s, nm::TimePoint) {
                                           return read_some(s, got);
                                       }});
    REQUIRE(set.size() == 2);
    CHECK(set[0].id() == 7);
    CHECK(set[1].id() == 9);
    CHECK(set[1].index() == 1);
    set.run({});
    CHECK(got[0] == "hello, ");
    CHECK(got[1] == "world and more");
    CHECK(set.open() == 0);
    CHECK(set[0].finished());
    CHECK(set[0].fd() >= 0);  // sockets stay open after the loop (TCP_INFO, shutdown)
}

TEST_CASE("StreamSet serves a stream that stays ready at most kCallsPerWake times per loop turn", "[unit]") {
    auto a = socket_pair(0);
    write_all(a.far.get(), "x");  // stays readable: the callback never reads
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    int turns = 0, calls = 0;
    StreamSet set(std::move(streams), {.events = EPOLLIN,
                                       .on_stop = nm::OnStop::End,
                                       .on_turn = [&](StreamSet&, nm::TimePoint) { return ++turns <= 3; },
                                       .on_ready =
                                           [&](Stream&, nm::TimePoint) {
                                               ++calls;
                                               return Step::again();
                                           }});
    set.run({});
    CHECK(turns == 4);  // the fourth turn said stop
    CHECK(calls == 3 * StreamSet::kCallsPerWake);
}

TEST_CASE("StreamSet: a stream postponed with later() is not served before its time, though ready", "[unit]") {
    auto a = socket_pair(0);
    write_all(a.far.get(), "x");
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    std::vector<std::chrono::steady_clock::time_point> calls;
    const auto postponement = 30ms;
    StreamSet set(std::move(streams), {.events = EPOLLIN, .on_stop = nm::OnStop::End, .on_turn = {}, .on_ready = [&](Stream&, nm::TimePoint) {
                                           calls.push_back(std::chrono::steady_clock::now());
                                           if (calls.size() == 1) return Step::later(calls[0] + postponement);
                                           return Step::done();
                                       }});
    set.run({});
    REQUIRE(calls.size() == 2);
    CHECK(calls[1] - calls[0] >= postponement);
}

TEST_CASE("StreamSet: a callback after a wait gets the time the wait ended, not the turn's", "[unit]") {
    // The data is written after the turn's time was taken (the writer starts in on_turn): a receiver that
    // counted it with the turn's time would put it into an earlier interval than the one it arrived in.
    auto a = socket_pair(0);
    const int far = a.far.get();
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    std::vector<std::string> got(1);
    nm::TimePoint written{}, stamp{};
    const auto deadline = std::chrono::steady_clock::now() + 10s;  // a lost write ends the loop, not the test run
    std::jthread writer;
    StreamSet set(std::move(streams), {.events = EPOLLIN,
                                       .on_stop = nm::OnStop::End,
                                       .on_turn =
                                           [&](StreamSet&, nm::TimePoint) {
                                               if (!writer.joinable()) {
                                                   writer = std::jthread([&] {
                                                       written = std::chrono::steady_clock::now();
                                                       (void)::write(far, "late", 4);  // no REQUIRE off the test's thread
                                                   });
                                               }
                                               return std::chrono::steady_clock::now() < deadline;
                                           },
                                       .on_ready =
                                           [&](Stream& s, nm::TimePoint now) {
                                               if (got[0].empty()) stamp = now;
                                               const Step step = read_some(s, got);
                                               return got[0] == "late" ? Step::done() : step;
                                           }});
    set.run({});
    writer.join();
    CHECK(got[0] == "late");
    CHECK(stamp >= written);
}

TEST_CASE("StreamSet: watch() changes the readiness a stream waits for", "[unit]") {
    auto a = socket_pair(0);
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    std::vector<std::string> got(1);
    int turns = 0, calls_before_data = 0;
    bool data_sent = false;
    StreamSet* self = nullptr;
    StreamSet set(std::move(streams), {.events = EPOLLOUT,
                                       .on_stop = nm::OnStop::End,
                                       .on_turn =
                                           [&](StreamSet&, nm::TimePoint) {
                                               if (++turns == 4) {  // a few idle turns first
                                                   write_all(a.far.get(), "ping");
                                                   a.far.reset();
                                                   data_sent = true;
                                               }
                                               return true;
                                           },
                                       .on_ready =
                                           [&](Stream& s, nm::TimePoint) {
                                               if (!data_sent) {
                                                   ++calls_before_data;  // writable: from now on wait for data
                                                   self->watch(s, EPOLLIN);
                                                   return Step::wait();
                                               }
                                               return read_some(s, got);
                                           }});
    self = &set;
    set.run({});
    CHECK(calls_before_data == 1);  // the writable socket called back once, then never while idle
    CHECK(got[0] == "ping");
}

TEST_CASE("StreamSet: on stop, End leaves at once and Drain takes what is queued first", "[unit]") {
    for (const auto mode : {nm::OnStop::End, nm::OnStop::Drain}) {
        auto a = socket_pair(0);
        write_all(a.far.get(), "queued data");  // the far end stays open: no EOF ends the loop
        std::vector<nm::DataStream> streams;
        streams.push_back(std::move(a.near));
        std::vector<std::string> got(1);
        std::stop_source stop;
        stop.request_stop();
        StreamSet set(std::move(streams),
                      {.events = EPOLLIN, .on_stop = mode, .on_turn = {}, .on_ready = [&](Stream& s, nm::TimePoint) { return read_some(s, got); }});
        set.run(stop.get_token());
        CHECK(got[0] == (mode == nm::OnStop::Drain ? "queued data" : ""));
        CHECK(set.open() == 1);
    }
}

TEST_CASE("StreamSet: finish() from on_turn ends the loop when no stream is left", "[unit]") {
    auto a = socket_pair(0);
    auto b = socket_pair(1);
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    streams.push_back(std::move(b.near));
    int turns = 0;
    StreamSet set(std::move(streams), {.events = EPOLLIN,
                                       .on_stop = nm::OnStop::End,
                                       .on_turn =
                                           [&](StreamSet& all, nm::TimePoint) {
                                               all.finish(all[static_cast<size_t>(turns++)]);
                                               return true;
                                           },
                                       .on_ready = [](Stream&, nm::TimePoint) { return Step::wait(); }});
    set.run({});
    CHECK(turns == 2);
    CHECK(set.open() == 0);
    CHECK(set[1].finished());
}

TEST_CASE("StreamSet: reconnect() swaps a stream's socket, keeping its id and index", "[unit]") {
    auto first = socket_pair(3);
    auto second = socket_pair(99);  // only its socket is used
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(first.near));
    std::vector<std::string> got(1);
    int reconnects = 0;
    StreamSet* self = nullptr;
    write_all(first.far.get(), "one");
    first.far.reset();
    write_all(second.far.get(), "two");
    second.far.reset();
    StreamSet set(std::move(streams), {.events = EPOLLIN, .on_stop = nm::OnStop::End, .on_turn = {}, .on_ready = [&](Stream& s, nm::TimePoint) {
                                           const Step step = read_some(s, got);
                                           if (step.kind() != Step::Kind::Done || reconnects > 0) return step;
                                           ++reconnects;  // the first connection ended: the next one
                                           self->reconnect(s, std::move(second.near.fd), EPOLLIN);
                                           return Step::wait();
                                       }});
    self = &set;
    set.run({});
    CHECK(reconnects == 1);
    CHECK(got[0] == "onetwo");
    CHECK(set[0].id() == 3);
    CHECK(set[0].finished());
}

TEST_CASE("StreamSet spin: with nothing to read each wait spins its whole time first, and none is caught", "[unit]") {
    auto a = socket_pair(0);
    std::vector<nm::DataStream> streams;
    streams.push_back(std::move(a.near));
    std::vector<std::string> got(1);
    int turns = 0;
    const auto start = std::chrono::steady_clock::now();
    StreamSet set(std::move(streams), {.events = EPOLLIN,
                                       .on_stop = nm::OnStop::End,
                                       .on_turn = [&](StreamSet&, nm::TimePoint) { return ++turns <= 2; },
                                       .on_ready = [&](Stream& s, nm::TimePoint) { return read_some(s, got); },
                                       .spin = 3ms});
    CHECK(set.spin_stats().us == 3000);
    set.run({});
    // Two turns waited (the third ended the loop): each spun 3 ms, then slept its kPollTime.
    CHECK(set.spin_stats().spins == 2);
    CHECK(set.spin_stats().caught == 0);
    CHECK(std::chrono::steady_clock::now() - start >= 2 * (3ms + StreamSet::kPollTime));
}

TEST_CASE("StreamSet spin: data that comes while it spins ends the spin and counts as caught, and no spin counts nothing", "[unit]") {
    for (const auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(10s)}) {
        auto a = socket_pair(0);
        const int far = a.far.get();
        std::vector<nm::DataStream> streams;
        streams.push_back(std::move(a.near));
        std::vector<std::string> got(1);
        std::jthread writer;
        StreamSet set(std::move(streams), {.events = EPOLLIN,
                                           .on_stop = nm::OnStop::End,
                                           .on_turn =
                                               [&](StreamSet&, nm::TimePoint) {
                                                   if (!writer.joinable()) writer = std::jthread([&] { (void)::write(far, "late", 4); });
                                                   return true;
                                               },
                                           .on_ready =
                                               [&](Stream& s, nm::TimePoint) {
                                                   const Step step = read_some(s, got);
                                                   return got[0] == "late" ? Step::done() : step;
                                               },
                                           .spin = spin});
        set.run({});
        writer.join();
        INFO("spin " << spin.count() << " us");
        CHECK(got[0] == "late");
        // The writer may win the race to the first poll (then nothing spun); a spin that ran was ended by
        // the data, long before its 10 s.
        CHECK(set.spin_stats().spins <= 1);
        CHECK(set.spin_stats().caught == set.spin_stats().spins);
        if (spin.count() == 0) CHECK(set.spin_stats().spins == 0);
    }
}
