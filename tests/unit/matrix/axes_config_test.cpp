// The tuning axes of a sweep config: parsed with named or derived values, expanded into the product with
// stable keys, excluded and applied per axis, and round-tripped through the codec.
#include <catch2/catch.hpp>

#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/runner.hpp"

namespace {

const char* kConfig = R"({"name": "t", "offloads": [{"name": "o", "features": {}}], "mtu": [1500],
  "channels": [{"name": "ch1", "rx": 1, "tx": 1}, {"rx": 2, "tx": 2}],
  "rps": ["none", {"name": "rps-all", "rps": "all"}, {"rps": {"rx-0": "0", "rx-1": "1"}}],
  "sysctl": [{"net.ipv4.tcp_congestion_control": "bbr"}],
  "qdisc": ["pfifo_fast", {"kind": "tbf", "rate": "1gbit", "burst": 32768, "latency_ms": 50}],
  "traffic": [{"name": "tcp", "protocol": "tcp"}],
  "apply_to": {"offloads": "both", "mtu": "both", "qdisc": "local"},
  "exclude": [{"rps": "rps-all", "qdisc": "tbf"}]})";

}  // namespace

TEST_CASE("Tuning axes: derived names, the product between MTU and traffic, exclusions by value name", "[unit]") {
    const auto c = nm::parse_sweep_config_text(kConfig, "t.json");
    REQUIRE(c.axes.at("channels").size() == 2);
    CHECK(c.axes.at("channels")[1].name == "rx2-tx2");
    CHECK(c.axes.at("rps")[0].name == "rps-none");
    CHECK(c.axes.at("rps")[2].name == "rps-rx-0=0-rx-1=1");
    CHECK(c.axes.at("sysctl")[0].name == "tcp_congestion_control=bbr");
    CHECK(c.axes.at("qdisc")[1].tuning.qdisc->rate_bps == 1000000000ULL);
    const auto cells = nm::expand_cells(c);
    CHECK(cells.size() == 2 * 3 * 1 * 2 - 2);  // the rule drops rps-all with tbf for both channel counts
    CHECK(cells.front().key == "o/mtu1500/ch1/rps-none/tcp_congestion_control=bbr/pfifo_fast/tcp");
    for (const auto& cell : cells) CHECK_FALSE((cell.axes.at("rps") == "rps-all" && cell.axes.at("qdisc") == "tbf"));
    // apply_to per axis: the qdisc goes to the local end only.
    const auto local = nm::cell_settings(c, cells.front(), nm::EndRole::Local);
    const auto peer = nm::cell_settings(c, cells.front(), nm::EndRole::Remote);
    CHECK(local.tuning.qdisc);
    CHECK_FALSE(peer.tuning.qdisc);
    CHECK(peer.tuning.channels.at("rx") == 1);
    CHECK(peer.tuning.rps.at("*") == "none");
    CHECK(peer.tuning.sysctl.at("net.ipv4.tcp_congestion_control") == "bbr");
    // The config round-trips: what a results file keeps of it reads back the same.
    const auto again = nm::parse_sweep_config(nm::Json(c));
    CHECK(nm::Json(again) == nm::Json(c));
    CHECK(nm::expand_cells(again).size() == cells.size());
}

TEST_CASE("Tuning axes: bad values name their JSON pointer", "[unit]") {
    const auto bad = [](const std::string& axes) {
        return std::string(R"({"offloads": [{"name": "o", "features": {}}], "mtu": [1500], "traffic": [{"protocol": "tcp"}], )") + axes + "}";
    };
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("rps": ["0-"])"), "x"), Catch::StartsWith("x: /rps/0: expected a CPU list"));
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("channels": [{"rx": 1, "queues": 2}])"), "x"),
                      Catch::StartsWith("x: /channels/0/queues: unknown key"));
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("sysctl": [{"kernel.panic": "1"}])"), "x"),
                      "x: /sysctl/0/kernel.panic: sysctl \"kernel.panic\" is not on the allow-list (nicmatrix sweep --help prints it)");
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("napi": [{"gro_flush_timeout": 1}, {"name": "gft1", "napi_defer_hard_irqs": 1}])"), "x"),
                      Catch::Contains("is used twice"));
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("qdisc": [{"kind": "tbf", "rate": "fast"}])"), "x"),
                      Catch::StartsWith("x: /qdisc/0/rate: expected a rate"));
    CHECK_THROWS_WITH(nm::parse_sweep_config_text(bad(R"("rps": ["none"], "exclude": [{"rps": "rps-all"}])"), "x"),
                      Catch::StartsWith("x: /exclude/0/rps: expected one of the rps value names"));
}

TEST_CASE("Tuning state round-trips through the codec, and old journals without it read back empty", "[unit]") {
    nm::LinkState s;
    s.name = "nm-a";
    s.mtu = 1500;
    s.tuning.channels = {{"rx", 2}, {"tx", 2}};
    s.tuning.rps = {{"rx-0", "0-1"}};
    s.tuning.sysctl = {{"net.ipv4.tcp_congestion_control", "bbr"}};
    s.tuning.qdisc = nm::QdiscState{"tbf", 0x80010000, {{"rate_bps", 1000000000}}};
    s.tuning.unsupported = {{"rings", "Operation not supported"}};
    const nm::Json j = s;
    const auto back = j.get<nm::LinkState>();
    CHECK(nm::Json(back) == j);
    CHECK(back.tuning.qdisc->handle == 0x80010000);
    nm::Json old = j;
    old.erase("tuning");
    CHECK(old.get<nm::LinkState>().tuning.rps.empty());
}
