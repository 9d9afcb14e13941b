// The sweep's interference check on the real /proc/stat: a CPU this test keeps busy shows in the probe's
// busy figure, which agrees with /proc/stat read here independently around the same window.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/base/clock.hpp"
#include "matrix/load_probe.hpp"

namespace {

// The aggregate cpu line, parsed here without the code under test: busy = everything but idle and iowait.
struct Ticks {
    double busy = 0, total = 0, steal = 0;
};
Ticks read_ticks() {
    std::ifstream in("/proc/stat");
    std::string label;
    in >> label;
    REQUIRE(label == "cpu");
    std::vector<double> f;
    for (int i = 0; i < 8; ++i) {
        double v = 0;
        in >> v;
        f.push_back(v);
    }
    Ticks t;
    for (double v : f) t.total += v;
    t.busy = t.total - f[3] - f[4];
    t.steal = f[7];
    return t;
}

}  // namespace

TEST_CASE("ProcStatLoadProbe sees a CPU kept busy, as /proc/stat read independently around it does", "[integration]") {
    std::atomic<bool> stop{false};
    std::thread burner([&] {
        volatile uint64_t x = 0;
        while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
    nm::SteadyClock clock;
    nm::ProcStatLoadProbe probe(clock);
    const Ticks before = read_ticks();
    const auto sample = probe.sample(std::chrono::milliseconds(500), {});
    const Ticks after = read_ticks();
    stop = true;
    burner.join();
    const double cpus = std::thread::hardware_concurrency();
    const double outside = 100.0 * (after.busy - before.busy) / (after.total - before.total);
    INFO("probe busy " << sample.busy_pct << "%, around it " << outside << "%, " << cpus << " CPUs");
    CHECK(sample.window_s == Catch::Detail::Approx(0.5).margin(0.1));
    // One spinning thread is a whole CPU of the machine's (others' load only adds to it); ticks are
    // 10 ms, so allow two ticks per CPU of rounding.
    CHECK(sample.busy_pct >= 100.0 / cpus - 2 * 100.0 / (50 * cpus));
    // The window inside the independent one: the same figure within the ticks either end adds.
    CHECK(sample.busy_pct == Catch::Detail::Approx(outside).margin(15));
    CHECK(sample.steal_pct >= 0);
    CHECK(sample.steal_pct <= sample.busy_pct);
    // A stop ends the window early.
    std::stop_source stopped;
    stopped.request_stop();
    const auto t0 = std::chrono::steady_clock::now();
    probe.sample(std::chrono::milliseconds(2000), stopped.get_token());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1000));
}
