#include <catch2/catch.hpp>

#include "core/workers/window_meter.hpp"

using namespace std::chrono_literals;

namespace {

// A thread CPU reading the test controls: each reading returns the next value of `g_cpu`.
nm::ThreadCpu g_cpu;
nm::ThreadCpu fake_cpu() { return g_cpu; }

nm::Timeline timeline(nm::TimePoint t0) {
    nm::Timeline tl;
    tl.start = t0;
    tl.window_start = t0 + 1s;
    tl.window_end = t0 + 3s;
    tl.interval = 500ms;
    return tl;
}

/// A meter of timeline(t0) that counts into `out` and reads the thread CPU from g_cpu.
struct Meter {
    const nm::TimePoint t0{};
    const nm::Timeline tl = timeline(t0);
    nm::WindowCounts out;
    nm::WindowMeter m{tl, out, fake_cpu};
};

}  // namespace

TEST_CASE_METHOD(Meter, "WindowMeter: before, in and after the window, began() only on the entering tick", "[unit]") {
    CHECK_FALSE(m.tick(t0 + 500ms));
    CHECK_FALSE(m.began());
    CHECK(m.tick(t0 + 1s));
    CHECK(m.began());
    CHECK(m.in());
    CHECK(m.tick(t0 + 2s));
    CHECK_FALSE(m.began());
    CHECK_FALSE(m.tick(t0 + 3s));  // window_end is outside
    CHECK_FALSE(m.in());
    CHECK_FALSE(m.tick(t0 + 1s));  // a closed window stays closed
}

TEST_CASE_METHOD(Meter, "WindowMeter: the CPU figure is the thread CPU between entering and closing the window", "[unit]") {
    g_cpu = {5.0, 7.0};
    m.tick(t0);  // before the window: not read
    g_cpu = {10.0, 20.0};
    m.tick(t0 + 1s);  // enters: start reading
    g_cpu = {10.5, 21.25};
    m.tick(t0 + 3s);  // leaves: end reading
    CHECK(out.cpu.user_s == Approx(0.5));
    CHECK(out.cpu.sys_s == Approx(1.25));
    g_cpu = {99, 99};
    m.close();  // idempotent: already closed
    CHECK(out.cpu.user_s == Approx(0.5));
}

TEST_CASE_METHOD(Meter, "WindowMeter: close() before window_end ends the window early (a worker stopped)", "[unit]") {
    g_cpu = {1, 1};
    m.tick(t0 + 1s);
    g_cpu = {2, 4};
    m.close();
    CHECK_FALSE(m.in());
    CHECK(out.cpu.user_s == Approx(1));
    CHECK(out.cpu.sys_s == Approx(3));
}

TEST_CASE_METHOD(Meter, "WindowMeter: counts land in the interval of their time after window_start", "[unit]") {
    m.count(t0 + 1s, 100, 1);         // interval 0 starts at window_start
    m.count(t0 + 1s + 499ms, 50, 2);  // still interval 0
    m.count(t0 + 1s + 500ms, 7, 3);   // interval 1
    m.count(t0 + 2s + 600ms, 9, 4);   // interval 3; interval 2 stays 0
    CHECK(out.interval_bytes == std::vector<uint64_t>{150, 7, 0, 9});
    CHECK(out.interval_packets == std::vector<uint64_t>{3, 3, 0, 4});
}

TEST_CASE("WindowMeter: a timeline without intervals counts nothing per interval", "[unit]") {
    nm::Timeline tl = timeline({});
    tl.interval = 0s;
    nm::WindowCounts out;
    nm::WindowMeter m(tl, out, fake_cpu);
    m.count(tl.window_start + 1s, 100, 1);
    CHECK(out.interval_bytes.empty());
}

namespace {
int g_cpu_id = 0;
int fake_cpu_id() { return g_cpu_id; }
}  // namespace

TEST_CASE("WindowMeter: the CPUs the thread was on inside the window, ascending, each once", "[unit]") {
    const nm::TimePoint t0{};
    const auto tl = timeline(t0);
    nm::WindowCounts out;
    nm::WindowMeter m(tl, out, fake_cpu, fake_cpu_id);
    g_cpu_id = 7;
    m.tick(t0 + 500ms);  // before the window: not noted
    g_cpu_id = 3;
    m.tick(t0 + 1s);
    m.tick(t0 + 1100ms);
    g_cpu_id = 1;
    m.tick(t0 + 1200ms);
    g_cpu_id = 3;
    m.tick(t0 + 1300ms);
    g_cpu_id = -1;  // sched_getcpu failed: nothing noted
    m.tick(t0 + 1400ms);
    g_cpu_id = 5;
    m.tick(t0 + 3s);  // window_end is outside
    CHECK(out.cpus == std::vector<uint32_t>{1, 3});
}
