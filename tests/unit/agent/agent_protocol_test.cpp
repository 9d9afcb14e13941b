#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "agent/agent_protocol.hpp"
#include "agent/log_line.hpp"
#include "core/base/error.hpp"
#include "matrix/model/sweep_types.hpp"

namespace {

nm::AgentRefusal refusal(const nm::Json& message) {
    try {
        nm::parse_agent_request(message);
    } catch (const nm::AgentRefusal& r) {
        return r;
    }
    FAIL("the request was accepted: " << message.dump());
    return {};
}

const nm::Json kApply{{"type", "request"}, {"seq", 3},
                      {"mac", "ab"},       {"op", "apply"},
                      {"ifname", "nm-b"},  {"settings", {{"mtu", 9000}, {"features", {{"tso", false}, {"tx-udp-segmentation", true}}}}},
                      {"confirm_ms", 3000}};

}  // namespace

TEST_CASE("Agent messages: each has one name on the wire, none a test's, and the name reads back as the type", "[unit]") {
    std::set<std::string> names;
    for (int i = 0; i <= static_cast<int>(nm::AgentMsg::RolledBack); ++i) {
        const auto m = static_cast<nm::AgentMsg>(i);
        const std::string name(nm::msg_name(m));
        CHECK(names.insert(name).second);
        CHECK_FALSE(nm::msg_from_name(name));  // not one of core's Msg
        CHECK(nm::agent_msg_type(nm::Json{{"type", name}}) == m);
        CHECK(nm::is(nm::Json{{"type", name}}, m));
    }
    CHECK(nm::msg_name(nm::AgentMsg::ControlHello) == "control_hello");
    CHECK(nm::msg_name(nm::AgentMsg::RolledBack) == "rolled_back");
    CHECK_FALSE(nm::agent_msg_type(nm::Json{{"type", "hello"}}));
    CHECK_FALSE(nm::agent_msg_type(nm::Json{{"type", 3}}));
    CHECK_FALSE(nm::agent_msg_type(nm::Json::array()));
}

TEST_CASE("Agent requests: every op and its fields decode", "[unit]") {
    const auto apply = nm::parse_agent_request(kApply);
    CHECK(apply.op == nm::AgentOp::Apply);
    CHECK(apply.ifname == "nm-b");
    CHECK(apply.settings.mtu == 9000u);
    CHECK(apply.settings.features == std::map<std::string, bool>{{"tso", false}, {"tx-udp-segmentation", true}});
    CHECK(apply.confirm_window == std::chrono::milliseconds(3000));
    CHECK(apply.link_wait == nm::kDefaultLinkWait);  // optional: 10 s when not asked
    nm::Json waiting = kApply;
    waiting["link_wait_ms"] = 2500;
    CHECK(nm::parse_agent_request(waiting).link_wait == std::chrono::milliseconds(2500));
    waiting["link_wait_ms"] = 600001;
    CHECK(refusal(waiting).message == "bad request: \"link_wait_ms\" must be an integer from 0 to 600000, got 600001");
    CHECK(nm::parse_agent_request(nm::Json{{"op", "confirm"}, {"change", 7}}).change == 7);
    CHECK(nm::parse_agent_request(nm::Json{{"op", "ping"}}).op == nm::AgentOp::Ping);
    CHECK(nm::parse_agent_request(nm::Json{{"op", "restore"}}).op == nm::AgentOp::Restore);
    CHECK(nm::parse_agent_request(nm::Json{{"op", "read"}, {"ifname", "eth0"}}).ifname == "eth0");
    CHECK(nm::takes_control(nm::AgentOp::Apply));
    CHECK(nm::takes_control(nm::AgentOp::Confirm));
    CHECK(nm::takes_control(nm::AgentOp::Restore));
    CHECK_FALSE(nm::takes_control(nm::AgentOp::Read));
    CHECK_FALSE(nm::takes_control(nm::AgentOp::Validate));
    CHECK_FALSE(nm::takes_control(nm::AgentOp::Ping));
    CHECK_FALSE(nm::takes_control(nm::AgentOp::Describe));
    CHECK(nm::parse_agent_request(nm::Json{{"op", "describe"}, {"ifname", "eth1"}}).ifname == "eth1");
    CHECK_THROWS(nm::parse_agent_request(nm::Json{{"op", "describe"}}));  // needs the interface
    for (auto op : {nm::AgentOp::Ping, nm::AgentOp::Read, nm::AgentOp::Validate, nm::AgentOp::Apply, nm::AgentOp::Confirm, nm::AgentOp::Restore,
                    nm::AgentOp::Describe}) {
        CHECK(nm::op_from_name(nm::op_name(op)) == op);
    }
}

TEST_CASE("Agent requests: every field is checked before anything is done", "[unit]") {
    auto with = [](const char* key, nm::Json value) {
        nm::Json m = kApply;
        m[key] = std::move(value);
        return m;
    };
    auto without = [](const char* key) {
        nm::Json m = kApply;
        m.erase(key);
        return m;
    };
    CHECK(refusal(with("confirm_ms", 99)).message == "bad request: \"confirm_ms\" must be an integer from 100 to 60000, got 99");
    CHECK(refusal(with("confirm_ms", 60001)).kind == nm::WireError::Usage);
    CHECK(refusal(with("confirm_ms", -5)).kind == nm::WireError::Usage);
    CHECK(refusal(with("confirm_ms", 3000.5)).kind == nm::WireError::Usage);
    CHECK(refusal(with("confirm_ms", "3000")).kind == nm::WireError::Usage);
    CHECK(refusal(with("confirm_ms", 18446744073709551615ULL)).kind == nm::WireError::Usage);
    CHECK(refusal(without("confirm_ms")).message == "bad request: apply needs \"confirm_ms\"");
    CHECK(refusal(without("settings")).message == "bad request: apply needs \"settings\"");
    CHECK(refusal(with("extra", 1)).message == "bad request: apply takes no field \"extra\"");
    CHECK(refusal(with("ifname", "")).kind == nm::WireError::Usage);
    CHECK(refusal(with("ifname", "a-name-longer-than-15")).kind == nm::WireError::Usage);
    CHECK(refusal(with("ifname", 7)).kind == nm::WireError::Usage);
    CHECK(refusal(with("settings", nm::Json::object())).message == "bad request: \"settings\" asks for nothing");
    CHECK(refusal(with("settings", {{"mtu", -1}})).kind == nm::WireError::Usage);
    CHECK(refusal(with("settings", {{"mtu", 1.5}})).kind == nm::WireError::Usage);
    CHECK(refusal(with("settings", {{"mtu", 4294967296ULL}})).kind == nm::WireError::Usage);
    CHECK(refusal(with("settings", {{"features", {{"tso", "off"}}}})).message == "bad request: feature \"tso\" must be true or false, got \"off\"");
    CHECK(refusal(with("settings", {{"speed", 10}})).message == "bad request: unknown field \"settings.speed\"");
    CHECK(refusal(nm::Json{{"op", "confirm"}, {"change", 0}}).kind == nm::WireError::Usage);
    CHECK(refusal(nm::Json{{"op", "confirm"}}).message == "bad request: confirm needs \"change\"");
    CHECK(refusal(nm::Json{{"op", "reboot"}}).message == "unknown operation \"reboot\"");
    CHECK(refusal(nm::Json{{"op", "x\nrestored eth1"}}).message == "unknown operation \"x\\nrestored eth1\"");
    CHECK(refusal(nm::Json{{"nop", 1}}).message == "bad request: no \"op\"");
    CHECK(refusal(nm::Json{{"op", "ping"}, {"ifname", "eth0"}}).message == "bad request: ping takes no field \"ifname\"");
}

TEST_CASE("Agent requests: only the offloads a sweep sweeps and the MTU may be changed", "[unit]") {
    for (const char* ok : {"tso",
                           "tx",
                           "rx",
                           "sg",
                           "gso",
                           "gro",
                           "lro",
                           "tcp-segmentation-offload",
                           "tx-checksumming",
                           "rx-checksum",
                           "tx-checksum-ip-generic",
                           "tx-scatter-gather",
                           "tx-tcp-segmentation",
                           "tx-tcp6-segmentation",
                           "tx-udp-segmentation",
                           "tx-gre-segmentation",
                           "rx-gro",
                           "rx-gro-list",
                           "rx-udp-gro-forwarding",
                           "rx-lro"}) {
        INFO(ok);
        CHECK(nm::agent_allows_feature(ok));
    }
    for (const char* bad : {"loopback", "rx-fcs", "rx-all", "rx-vlan-filter", "rxvlan", "txvlan", "ntuple", "rxhash", "hw-tc-offload",
                            "rx-ntuple-filter", "highdma", "tx-nocache-copy", "tx-vlan-hw-insert", ""}) {
        INFO(bad);
        CHECK_FALSE(nm::agent_allows_feature(bad));
    }
    const auto r = refusal(nm::Json{{"op", "apply"}, {"ifname", "nm-b"}, {"settings", {{"features", {{"loopback", true}}}}}, {"confirm_ms", 3000}});
    CHECK(r.kind == nm::WireError::Refused);
    CHECK(r.message == "settings control refused: feature \"loopback\" is not an offload the agent lets a client change");
}

TEST_CASE("Agent requests: the tuning kinds decode, every field checked", "[unit]") {
    const auto settings = [](nm::Json tuning) {
        return nm::Json{{"op", "apply"}, {"ifname", "nm-b"}, {"settings", {{"tuning", std::move(tuning)}}}, {"confirm_ms", 3000}};
    };
    const auto req = nm::parse_agent_request(settings({{"channels", {{"rx", 1}, {"tx", 1}}},
                                                       {"rps", {{"*", "0-1"}}},
                                                       {"napi", {{"gro_flush_timeout", 20000}}},
                                                       {"sysctl", {{"net.ipv4.tcp_rmem", "4096 131072 8388608"}}},
                                                       {"qdisc", {{"kind", "tbf"}, {"rate_bps", 1000000000}, {"burst", 32768}}}}));
    const nm::TuningRequest& t = req.settings.tuning;
    CHECK(t.channels == std::map<std::string, uint32_t>{{"rx", 1}, {"tx", 1}});
    CHECK(t.rps == std::map<std::string, std::string>{{"*", "0-1"}});
    CHECK(t.napi.at("gro_flush_timeout") == 20000u);
    CHECK(t.sysctl.at("net.ipv4.tcp_rmem") == "4096 131072 8388608");
    REQUIRE(t.qdisc);
    CHECK(t.qdisc->kind == "tbf");
    CHECK(t.qdisc->rate_bps == 1000000000u);
    CHECK(nm::setting_kinds(req.settings) == std::vector<std::string>{"channels", "rps", "napi", "qdisc", "sysctl"});

    CHECK(refusal(settings({{"channels", {{"rx", -1}}}})).message ==
          "bad request: \"settings.tuning.channels.rx\" must be an integer from 0 to 4294967295, got -1");
    CHECK(refusal(settings({{"channels", {{"rx", 4294967296ULL}}}})).kind == nm::WireError::Usage);
    CHECK(refusal(settings({{"rps", {{"rx-0", 3}}}})).message == "bad request: \"settings.tuning.rps.rx-0\" must be a string, got 3");
    CHECK(refusal(settings({{"xps", "all"}})).kind == nm::WireError::Usage);
    CHECK(refusal(settings({{"qdisc", {{"rate_bps", 1}}}})).kind == nm::WireError::Usage);  // no kind
    // Qdisc kinds from the allow-list only (no module autoload), and never a tree or raw options from a client.
    const auto netem = refusal(settings({{"qdisc", {{"kind", "netem"}}}}));
    CHECK(netem.kind == nm::WireError::Refused);
    CHECK(netem.message ==
          "settings control refused: qdisc kind \"netem\" is not on the allow-list (noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel)");
    const auto original = refusal(settings({{"qdisc_original", {{"kind", "netem"}, {"handle", 65536}, {"options_hex", "00"}}}}));
    CHECK(original.kind == nm::WireError::Refused);
    CHECK_THAT(original.message, Catch::Contains("qdisc_original") && Catch::Contains("not taken from clients"));
    CHECK(refusal(settings({{"qdisc_original", {{"qdiscs", nm::Json::array()}}}})).kind == nm::WireError::Refused);
    CHECK(refusal(settings({{"speed", 1}})).message == "bad request: unknown field \"settings.tuning.speed\"");
    CHECK(refusal(settings("channels")).kind == nm::WireError::Usage);
    const auto sysctl = refusal(settings({{"sysctl", {{"kernel.core_pattern", "|/bin/sh"}}}}));
    CHECK(sysctl.kind == nm::WireError::Refused);
    CHECK(sysctl.message == "settings control refused: sysctl \"kernel.core_pattern\" is not on the allow-list of network sysctls");
}

TEST_CASE("Agent setting kinds: one table, sysctls and IRQ affinity off by default, --allow-kinds words checked", "[unit]") {
    CHECK(nm::default_agent_kinds() == std::vector<std::string>{"mtu", "offloads", "channels", "rings", "coalesce", "rps", "xps", "napi", "qdisc"});
    CHECK(nm::parse_agent_kinds({"channels,rps"}) == std::vector<std::string>{"channels", "rps"});
    CHECK(nm::parse_agent_kinds({"rps", "mtu"}) == std::vector<std::string>{"mtu", "rps"});  // table order
    auto with_sysctl = nm::default_agent_kinds();
    with_sysctl.push_back("sysctl");
    CHECK(nm::parse_agent_kinds({"default,sysctl"}) == with_sysctl);
    CHECK(nm::parse_agent_kinds({"all"}).size() == nm::kAgentSettingKinds.size());
    CHECK_THROWS_WITH(nm::parse_agent_kinds({"mtu", "ring"}),  // as CLI11 hands it over, split at the commas
                      "--allow-kinds mtu,ring: unknown kind \"ring\"; expected default, all or kinds of mtu, offloads, channels, rings, coalesce, "
                      "rps, xps, napi, qdisc, irq_affinity, sysctl");
    try {
        nm::parse_agent_kinds({"x"});
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
    }
    nm::LinkSettings s;
    CHECK(nm::setting_kinds(s).empty());
    s.mtu = 1400;
    s.features["tso"] = false;
    s.tuning.irq_affinity.emplace("*", std::string("0"));
    s.tuning.qdisc_original = nm::QdiscTree{};
    CHECK(nm::setting_kinds(s) == std::vector<std::string>{"mtu", "offloads", "qdisc", "irq_affinity"});
    // Every tuning axis of a sweep is a kind the agent can name.
    for (const char* axis : nm::kTuningAxes) {
        INFO(axis);
        CHECK(std::any_of(nm::kAgentSettingKinds.begin(), nm::kAgentSettingKinds.end(), [&](const auto& k) { return k.name == axis; }));
    }
}

TEST_CASE("Log lines cannot be forged or flooded by a client's bytes", "[unit]") {
    CHECK(nm::safe_log_line("refused 198.18.0.1: x\nnicmatrix serve: restored nm-b") == "refused 198.18.0.1: x\\x0anicmatrix serve: restored nm-b");
    CHECK(nm::safe_log_line("tab\there") == "tab\\x09here");
    CHECK(nm::safe_log_line("\xff\x1b[31m") == "\\xff\\x1b[31m");
    const auto long_line = nm::safe_log_line(std::string(100000, 'a'));
    CHECK(long_line.size() == nm::kMaxLogLine);
    CHECK(long_line.substr(long_line.size() - 3) == "...");
    CHECK(nm::quoted_value(nm::Json(std::string(200, 'b'))).size() == 80);
    CHECK(nm::quoted_value(nm::Json("a\nb")) == "\"a\\nb\"");
}
