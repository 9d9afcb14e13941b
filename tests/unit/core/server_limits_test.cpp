// The arithmetic of the server's limits: what a test would make the server allocate, and which limit a
// spec is over, each named with the flag that raises it (review H3, H5).
#include <catch2/catch.hpp>

#include "core/engine/engine.hpp"
#include "core/session/server_limits.hpp"
#include "core/session/traffic_session.hpp"

using Catch::Contains;

namespace {

constexpr uint64_t kMiB = uint64_t{1024} * 1024;

nm::TestSpec resolved(nm::TestSpec s, unsigned cores = 2) {
    s.host = "198.18.0.2";
    return nm::resolve_spec(s, cores);
}

}  // namespace

TEST_CASE("The review's memory bomb (256 streams x 256 threads x 64 MiB, bidir) is 32 GiB, over two limits", "[unit]") {
    nm::TestSpec s;
    s.direction = nm::Direction::Bidir;
    s.streams = 256;
    s.threads = 256;
    s.write_size = 64 * kMiB;
    const auto spec = resolved(s);
    // 256 sender threads with a 64 MiB write buffer each, 256 receivers with a 64 MiB read buffer each.
    CHECK(static_cast<double>(nm::server_test_memory(spec)) == Approx(512.0 * 64 * kMiB).epsilon(0.001));
    const auto over = nm::over_server_limits(spec, nm::ServerLimits{}, 2);
    REQUIRE(over);
    CHECK_THAT(*over, Contains("threads: 256 per direction; this server allows 2, its cores, (raise with serve --max-threads)"));
    CHECK_THAT(*over, Contains("memory: the test needs 32 GiB of engine buffers on the server") &&
                          Contains("this server allows 1 GiB per test (raise with serve --max-test-memory)"));
    // Within the threads limit, the memory one alone still refuses it.
    nm::ServerLimits many_threads;
    many_threads.max_threads = 256;
    const auto memory_only = nm::over_server_limits(spec, many_threads, 2);
    REQUIRE(memory_only);
    CHECK_THAT(*memory_only, !Contains("threads:") && Contains("memory:"));
}

TEST_CASE("Ordinary tests are within the default limits, and their footprint follows the workers' buffers", "[unit]") {
    const nm::ServerLimits defaults;
    const auto tcp = resolved(nm::TestSpec{});
    CHECK_FALSE(nm::over_server_limits(tcp, defaults, 2));
    // One receiver thread reading 1 MiB at a time (the big-read buffer), plus per-stream state.
    CHECK(nm::server_test_memory(tcp) >= 1 * kMiB);
    CHECK(nm::server_test_memory(tcp) < 1 * kMiB + 4096);

    nm::TestSpec u;
    u.protocol = nm::Protocol::Udp;
    u.write_size = 18;
    const auto udp = resolved(u);  // unlimited: one stream and one receiver socket per core
    CHECK_FALSE(nm::over_server_limits(udp, defaults, 2));
    nm::EnginePlan plan = nm::plan_for(udp, nm::Direction::Reverse, "");
    CHECK(nm::server_test_memory(udp) == 2 * nm::worker_memory_bytes(plan, false, 1));

    nm::TestSpec r = u;
    r.direction = nm::Direction::Reverse;
    const auto reverse = resolved(r);  // the server only sends: two sender threads of one stream each
    plan = nm::plan_for(reverse, nm::Direction::Reverse, "");
    CHECK(nm::server_test_memory(reverse) == 2 * nm::worker_memory_bytes(plan, true, 1));

    nm::TestSpec big;
    big.streams = 256;
    big.write_size = 64 * kMiB;
    big.direction = nm::Direction::Bidir;
    // Two threads per direction on a two-core server: 2 x 64 MiB sending and 2 x 64 MiB receiving.
    CHECK(static_cast<double>(nm::server_test_memory(resolved(big))) == Approx(4.0 * 64 * kMiB).epsilon(0.01));
    CHECK_FALSE(nm::over_server_limits(resolved(big), defaults, 2));
}

TEST_CASE("Duration, stall timeout and threads limits name their flags, a byte count is not refused for length", "[unit]") {
    const nm::ServerLimits limits;  // 300 s, 60 s, the cores
    nm::TestSpec s;
    s.duration_s = 295;
    s.omit_s = 6;
    auto over = nm::over_server_limits(resolved(s), limits, 2);
    REQUIRE(over);
    CHECK_THAT(*over, Contains("duration: 301 s (omit included); this server allows 300 s per test (raise with serve --max-duration)"));
    s.omit_s = 5;
    CHECK_FALSE(nm::over_server_limits(resolved(s), limits, 2));

    nm::TestSpec bytes;
    bytes.bytes = 1'000'000'000'000;
    bytes.duration_s = 0;
    CHECK_FALSE(nm::over_server_limits(resolved(bytes), limits, 2));  // ended at the limit instead

    nm::TestSpec stall;
    stall.stall_timeout_s = 61;
    over = nm::over_server_limits(resolved(stall), limits, 2);
    REQUIRE(over);
    CHECK_THAT(*over, Contains("stall timeout: 61 s; this server allows 60 s (raise with serve --max-stall-timeout)"));

    nm::TestSpec threads;
    threads.streams = 8;
    threads.threads = 3;
    CHECK(nm::over_server_limits(resolved(threads), limits, 2));
    CHECK_FALSE(nm::over_server_limits(resolved(threads), limits, 4));
    nm::ServerLimits raised;
    raised.max_threads = 3;
    CHECK_FALSE(nm::over_server_limits(resolved(threads), raised, 2));
    raised.max_threads = 2;
    CHECK_THAT(*nm::over_server_limits(resolved(threads), raised, 8), Contains("this server allows 2 (raise with serve --max-threads)"));
}

TEST_CASE("format_bytes prints binary units", "[unit]") {
    CHECK(nm::format_bytes(100) == "100 bytes");
    CHECK(nm::format_bytes(64 * kMiB) == "64 MiB");
    CHECK(nm::format_bytes(uint64_t{3} << 29) == "1.5 GiB");
}
