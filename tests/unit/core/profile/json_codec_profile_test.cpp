#include <catch2/catch.hpp>

#include "core/profile/profile_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

namespace {

nm::CpuProfile profile() {
    nm::CpuProfile p;
    p.host = "vm";
    p.samples = 4000;
    p.lost = 2;
    p.hz = 1000;
    p.cpus = 2;
    p.window_s = 2.0;
    p.start_monotonic_s = 100.5;
    p.end_monotonic_s = 102.5;
    p.table = "built-in";
    p.categories = {{"copy", 31.0}, {"user", 9.0}, {"idle", 60.0}};
    p.by_cpu = {{0, 2000, {{"copy", 62.0}, {"idle", 38.0}}}, {1, 2000, {{"user", 18.0}, {"idle", 82.0}}}};
    p.by_task["sender"] = {40.0, 1600, {{"copy", 77.5}, {"user", 22.5}}};
    p.by_task["idle"] = {60.0, 2400, {{"idle", 100.0}}};
    p.other_tasks = {{"cc1plus", 0.5}};
    p.top = {{"rep_movs_alternative", 31.0, "copy"}, {"default_idle", 60.0, "idle"}};
    p.unmatched = {{"mystery", 0.1, "other"}};
    return p;
}

}  // namespace

TEST_CASE("profile JSON: cpu_profile round-trips per end and per run, a run without one reads as none", "[unit]") {
    nm::RunResult r;
    r.sender.profile = profile();
    r.sender.profile->shared_with = "receiver";
    r.receiver.profile = profile();
    r.receiver.profile->shared_with = "sender";
    const nm::Json j = r;
    REQUIRE(j.contains("cpu_profile"));
    CHECK(j.at("cpu_profile").at("sender").at("samples") == 4000);
    CHECK(j.at("cpu_profile").at("sender").at("shared_with") == "receiver");
    CHECK(j.at("cpu_profile").at("receiver").at("top").at(0).at("symbol") == "rep_movs_alternative");
    const auto back = j.get<nm::RunResult>();
    REQUIRE(back.sender.profile);
    REQUIRE(back.receiver.profile);
    CHECK(nm::Json(*back.sender.profile) == nm::Json(*r.sender.profile));
    CHECK(back.sender.profile->by_task.at("sender").categories.at("copy") == 77.5);
    CHECK(back.sender.profile->by_cpu.at(1).samples == 2000);
    CHECK(back.sender.profile->unmatched.at(0).category == "other");

    nm::Json old = j;
    old.erase("cpu_profile");
    const auto without = old.get<nm::RunResult>();
    CHECK_FALSE(without.sender.profile);
    CHECK(nm::Json(nm::RunResult{}).at("cpu_profile").at("sender").is_null());

    // Profile switches of a test round-trip too.
    nm::TestSpec s;
    s.profile = true;
    s.profile_hz = 499;
    s.profile_categories = "/tmp/t.json";
    const auto spec = nm::Json(s).get<nm::TestSpec>();
    CHECK(spec.profile);
    CHECK(spec.profile_hz == 499);
    CHECK(spec.profile_categories == "/tmp/t.json");
    CHECK(nm::TestSpec{}.profile_hz == 1000);
}
