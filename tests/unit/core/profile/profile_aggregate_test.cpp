// From named samples to a CpuProfile, on canned samples.
#include <catch2/catch.hpp>

#include <numeric>

#include "core/profile/categories.hpp"
#include "core/profile/host_profiler.hpp"
#include "core/profile/perf_sampler.hpp"
#include "core/profile/profile_access.hpp"
#include "core/profile/profile_aggregate.hpp"

namespace {

double sum(const std::map<std::string, double>& m) {
    return std::accumulate(m.begin(), m.end(), 0.0, [](double a, const auto& kv) { return a + kv.second; });
}

}  // namespace

TEST_CASE("profile aggregate: shares of all samples by category, CPU and task, top and unmatched lists", "[unit]") {
    using nm::profile::NamedSample;
    std::vector<NamedSample> s;
    s.reserve(21);
    // CPU 0: the sender thread (tid 11) copying 6 times, in TCP 2 times, in its user code 2 times.
    for (int i = 0; i < 6; ++i) s.push_back({0, 10, 11, false, "rep_movs_alternative"});
    for (int i = 0; i < 2; ++i) s.push_back({0, 10, 11, false, "tcp_sendmsg_locked"});
    for (int i = 0; i < 2; ++i) s.push_back({0, 10, 11, true, "nm::tcp_send"});
    // CPU 1: the receiver (tid 21) in GRO 3 times; ksoftirqd in veth 2 times; idle 4 times; an unknown
    // kernel symbol in a compiler 1 time; the idle task's interrupt work 1 time.
    for (int i = 0; i < 3; ++i) s.push_back({1, 20, 21, false, "napi_gro_receive"});
    for (int i = 0; i < 2; ++i) s.push_back({1, 15, 15, false, "veth_poll"});
    for (int i = 0; i < 4; ++i) s.push_back({1, 0, 0, false, "default_idle"});
    s.push_back({1, 30, 30, false, "mystery_function"});
    s.push_back({1, 0, 0, false, "tcp_v4_rcv"});
    REQUIRE(s.size() == 21);

    nm::profile::TaskClasses tasks{{11}, {21}, [](int32_t, int32_t tid) { return tid == 15 ? std::string("ksoftirqd/1") : std::string("cc1plus"); }};
    nm::profile::WindowFacts w{"h", 1000, {0, 1, 2}, 10.0, 12.0, 3};
    const auto p = nm::profile::aggregate_profile(s, nm::profile::builtin_category_table(), tasks, w);
    CHECK(p.samples == 21);
    CHECK(p.lost == 3);
    CHECK(p.hz == 1000);
    CHECK(p.cpus == 3);
    CHECK(p.window_s == Approx(2.0));
    CHECK(sum(p.categories) == Approx(100.0));
    CHECK(p.categories.at("copy") == Approx(100.0 * 6 / 21));
    CHECK(p.categories.at("tcp_ip") == Approx(100.0 * 3 / 21));
    CHECK(p.categories.at("user") == Approx(100.0 * 2 / 21));
    CHECK(p.categories.at("gro") == Approx(100.0 * 3 / 21));
    CHECK(p.categories.at("netdev") == Approx(100.0 * 2 / 21));
    CHECK(p.categories.at("idle") == Approx(100.0 * 4 / 21));
    CHECK(p.categories.at("other") == Approx(100.0 * 1 / 21));
    CHECK(p.categories.at("checksum") == 0);  // every category of the table appears

    REQUIRE(p.by_cpu.size() == 3);
    CHECK(p.by_cpu[0].samples == 10);
    CHECK(p.by_cpu[0].categories.at("copy") == Approx(60.0));
    CHECK(p.by_cpu[2].samples == 0);
    CHECK(sum(p.by_cpu[1].categories) == Approx(100.0));

    CHECK(p.by_task.at("sender").samples == 10);
    CHECK(p.by_task.at("sender").pct == Approx(100.0 * 10 / 21));
    CHECK(p.by_task.at("sender").categories.at("copy") == Approx(60.0));
    CHECK(p.by_task.at("receiver").samples == 3);
    CHECK(p.by_task.at("ksoftirqd").samples == 2);
    CHECK(p.by_task.at("idle").samples == 4);
    CHECK(p.by_task.at("other").samples == 2);  // the compiler, and the idle task's interrupt work
    REQUIRE(!p.other_tasks.empty());

    REQUIRE(p.top.size() == 8);
    CHECK(p.top[0].symbol == "rep_movs_alternative");
    CHECK(p.top[0].category == "copy");
    CHECK(p.top[0].pct == Approx(100.0 * 6 / 21));
    REQUIRE(p.unmatched.size() == 1);
    CHECK(p.unmatched[0].symbol == "mystery_function");
}

TEST_CASE("profile refusals: perf_event_paranoid and kptr_restrict are named with the value needed", "[unit]") {
    nm::profile::ProfileAccess a;
    a.perf_event_paranoid = 2;
    CHECK_THROWS_WITH(nm::profile::check_profile_access(a),
                      Catch::Contains("kernel.perf_event_paranoid <= 0; it is 2") && Catch::Contains("CAP_PERFMON"));
    a.cap_perfmon = true;
    CHECK_NOTHROW(nm::profile::check_profile_access(a));
    a.kallsyms_addresses = false;
    a.kptr_restrict = 2;
    CHECK_THROWS_WITH(nm::profile::check_profile_access(a),
                      Catch::Contains("kernel.kptr_restrict is 2") && Catch::Contains("set kernel.kptr_restrict to 0"));
    a = {};
    a.perf_event_paranoid = -1;
    CHECK_NOTHROW(nm::profile::check_profile_access(a));
    CHECK_THROWS_WITH(nm::profile::check_profile_hz(0), Catch::Contains("--profile-hz: 0") && Catch::Contains("1..10000"));
    CHECK_THROWS_WITH(nm::profile::check_profile_hz(20000), Catch::Contains("--profile-hz"));
    CHECK_NOTHROW(nm::profile::check_profile_hz(1000));
}

TEST_CASE("profile refusals: perf_event_open errors say what the kernel lacks or what to change", "[unit]") {
    CHECK_THAT(nm::profile::perf_open_error(EACCES, 3), Catch::Contains("kernel.perf_event_paranoid <= 0; it is 3"));
    CHECK_THAT(nm::profile::perf_open_error(ENOENT, 1), Catch::Contains("no software cpu-clock event"));
    CHECK_THAT(nm::profile::perf_open_error(ENOSYS, 1), Catch::Contains("without perf events"));
}
