// A sweep config's traffic entries: the keys each kind of test takes (from the field table,
// test_spec_fields.hpp, and those coded here by hand), their checks with the JSON pointer of each value, the
// name an entry without one is given, and the fields an entry is written with.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/traffic/dscp.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/socket_types.hpp"
#include "core/traffic/test_spec_fields.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/json_node.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_config_parts.hpp"

namespace nm {
namespace sweep_json {

namespace {

// A traffic entry's keys: the table's sweep axes (test_spec_fields.hpp) and those coded here by hand.
std::vector<std::string> axis_keys(std::initializer_list<FieldAxis> axes, std::vector<std::string> keys) {
    for (const auto& f : kTestSpecFields) {
        if (std::find(axes.begin(), axes.end(), f.axis) != axes.end()) keys.emplace_back(f.key);
    }
    return keys;
}
// In the table's order, each key coded by hand after the field it goes with (errors list them so).
std::vector<std::string> traffic_keys() {
    std::vector<std::string> keys = {"name", "test"};
    for (const auto& f : kTestSpecFields) {
        if (f.axis == FieldAxis::None) continue;
        keys.emplace_back(f.key);
        const std::string key = f.key;
        if (key == "write_size") keys.emplace_back("length");
        if (key == "burst") keys.emplace_back("connect_per_transaction");
        if (key == "mss") keys.emplace_back("dscp");
    }
    return keys;
}
const std::vector<std::string> kTrafficKeys = traffic_keys();
// Keys of a stream test that a request/response entry does not take, and the other way round.
const std::vector<std::string> kStreamOnlyKeys = axis_keys({FieldAxis::Stream}, {"length"});
const std::vector<std::string> kRrOnlyKeys = axis_keys({FieldAxis::Rr}, {"connect_per_transaction"});
// Fields of the table a traffic entry checks by hand: their rules depend on other fields.
const std::vector<std::string> kHandParsedKeys = {"protocol", "direction", "write_size", "request_size", "response_size", "congestion", "bind_dev"};

// Reads the table's fields a traffic entry has (but those of kHandParsedKeys), each checked against its range.
void parse_table_fields(const Node& n, TestSpec& t) {
    for_each_test_spec_field(t, [&](const TestSpecField& f, auto& member) {
        using T = std::decay_t<decltype(member)>;
        if (f.axis == FieldAxis::None || !n.has(f.key)) return;
        if (std::find(kHandParsedKeys.begin(), kHandParsedKeys.end(), f.key) != kHandParsedKeys.end()) return;
        const Node v = n.child(f.key);
        if constexpr (std::is_same_v<T, bool>) {
            member = v.boolean();
        } else if constexpr (std::is_integral_v<T>) {
            const uint64_t max = f.max > 0 ? static_cast<uint64_t>(f.max) : std::numeric_limits<T>::max();
            member = static_cast<T>(v.integer(static_cast<uint64_t>(f.min), max, f.help));
        } else if constexpr (std::is_floating_point_v<T>) {
            member = v.number(f.min, f.max, false, f.help);
        } else {
            v.fail_message("not read by the table (add it to kHandParsedKeys's code)");
        }
    });
}

const std::vector<std::string> kRfc2544Keys = {"name",           "test",       "protocol",           "direction",     "frames", "trial_s",
                                               "resolution_pct", "max_trials", "loss_tolerance_pct", "line_rate_bps", "streams"};

std::string format_rate(double v) {
    std::ostringstream out;
    if (v >= 1e9 && std::fmod(v, 1e9) == 0) out << v / 1e9 << "G";
    else if (v >= 1e6 && std::fmod(v, 1e6) == 0) out << v / 1e6 << "M";
    else if (v >= 1e3 && std::fmod(v, 1e3) == 0) out << v / 1e3 << "k";
    else out << v;
    return out.str();
}

// What a name says about the socket knobs that differ from the defaults.
std::string knob_suffix(const SocketOptions& o) {
    std::string name;
    if (!o.congestion.empty()) name += "-C" + o.congestion;
    if (o.nodelay) name += "-N";
    if (o.mss != 0) name += "-M" + std::to_string(o.mss);
    if (o.dscp >= 0) name += "-dscp" + std::to_string(o.dscp);
    if (o.zerocopy) name += "-Z";
    if (o.skip_rx_copy) name += "-skiprx";
    if (!o.bind_dev.empty()) name += "-dev" + o.bind_dev;
    if (o.rx_spin_us != 0) name += "-spin" + std::to_string(o.rx_spin_us);
    return name;
}

// The name of a traffic entry without one: protocol, streams, then what differs from the defaults, in the
// spirit of the flags (-P, -l, -w, -b, -R) people know from iperf. A request/response entry is named as
// netperf's tests with its sizes: "tcp-rr-1x1", "udp-rr-64x1024", "tcp-crr-1x1-p4".
std::string derived_name(const TestSpec& t) {
    if (t.pattern != TrafficPattern::Stream) {
        std::string name = std::string(t.protocol == Protocol::Tcp ? "tcp" : "udp") + (t.pattern == TrafficPattern::Crr ? "-crr-" : "-rr-") +
                           std::to_string(t.request_size) + "x" + std::to_string(t.response_size);
        if (t.streams != 1) name += "-p" + std::to_string(t.streams);
        if (t.rr_burst != 1) name += "-burst" + std::to_string(t.rr_burst);
        if (t.window != 0) name += "-w" + std::to_string(t.window);
        if (t.threads != 0) name += "-T" + std::to_string(t.threads);
        return name + knob_suffix(t.socket);
    }
    std::string name = (t.protocol == Protocol::Tcp ? "tcp-p" : "udp-p") + std::to_string(t.streams);
    if (t.protocol == Protocol::Udp && t.streams == 1) name = "udp";
    if (t.write_size != 0) name += "-l" + std::to_string(t.write_size);
    if (t.window != 0) name += "-w" + std::to_string(t.window);
    if (t.bytes != 0) name += "-n" + std::to_string(t.bytes);
    if (t.rate_bps != 0) name += "-b" + format_rate(t.rate_bps);
    if (t.rate_pps != 0) name += "-pps" + format_rate(t.rate_pps);
    if (t.threads != 0) name += "-T" + std::to_string(t.threads);
    if (t.udp_gso) name += "-gso";
    if (t.udp_gro) name += "-gro";
    if (t.direction == Direction::Reverse) name += "-R";
    if (t.direction == Direction::Bidir) name += "-bidir";
    return name + knob_suffix(t.socket);
}

// The socket knobs of an entry; which protocol and test each belongs to is checked here, with the pointer.
void parse_knobs(const Node& n, TestSpec& t) {
    auto& o = t.socket;
    if (n.has("congestion")) {
        o.congestion = n.child("congestion").string("a congestion control name (\"cubic\", \"bbr\", ...)");
        const bool ok = !o.congestion.empty() && o.congestion.size() < 16 && std::all_of(o.congestion.begin(), o.congestion.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        });
        if (!ok) n.child("congestion").fail("a congestion control name (\"cubic\", \"bbr\", ...)");
    }
    if (n.has("dscp")) {
        const auto d = n.child("dscp");
        if (d.json().is_string()) {
            o.dscp = parse_dscp(d.json().get<std::string>(), d.pointer());
        } else {
            o.dscp = static_cast<int>(d.integer(0, 63, "a DSCP code point 0..63 or a name (\"EF\", \"AF41\", \"CS1\", ...)"));
        }
    }
    if (n.has("bind_dev")) {
        o.bind_dev = n.child("bind_dev").string("an interface name");
        if (o.bind_dev.empty() || o.bind_dev.size() >= 16) n.child("bind_dev").fail("an interface name of 1 to 15 characters");
    }
    if (t.protocol == Protocol::Udp) {
        for (const char* key : {"congestion", "nodelay", "mss", "zerocopy", "skip_rx_copy"}) {
            if (n.has(key)) n.child(key).fail_message("a TCP socket option; only for \"protocol\": \"tcp\"");
        }
    }
    if (t.pattern != TrafficPattern::Stream && o.zerocopy) n.child("zerocopy").fail_message("MSG_ZEROCOPY is for stream tests");
    if (t.pattern != TrafficPattern::Stream && o.rx_spin_us != 0) {
        n.child("rx_spin_us").fail_message("a stream receiver's spin; a request/response flow already waits for its own answer");
    }
}

// `{"test": "rr", "protocol": "tcp"|"udp", "request_size", "response_size", "burst", "streams",
// "connect_per_transaction"}`: a request/response test (TCP_RR, UDP_RR, TCP_CRR).
void parse_rr_fields(const Node& n, TrafficEntry& e) {
    auto& t = e.test;
    for (const auto& key : kStreamOnlyKeys) {
        if (n.has(key)) n.child(key).fail_message("a stream test's field; a request/response test has request_size and response_size");
    }
    if (n.has("direction") && n.json().at("direction") != "forward") {
        n.child("direction").fail("\"forward\" (the client starts every transaction)");
    }
    const bool udp = t.protocol == Protocol::Udp;
    const uint64_t max = udp ? 65507 : 16u << 20;
    const std::string expected = udp ? "a message size in bytes from 1 to 65507 (one UDP datagram)" : "a message size in bytes from 1 to 16777216";
    if (n.has("request_size")) t.request_size = static_cast<uint32_t>(n.child("request_size").integer(1, max, expected));
    if (n.has("response_size")) t.response_size = static_cast<uint32_t>(n.child("response_size").integer(1, max, expected));
    t.pattern = TrafficPattern::Rr;
    if (n.has("connect_per_transaction") && n.child("connect_per_transaction").boolean()) {
        if (udp) n.child("connect_per_transaction").fail_message("a connection per transaction is TCP; only for \"protocol\": \"tcp\"");
        if (t.rr_burst != 1) n.child("burst").fail_message("a connection per transaction carries one transaction; drop \"burst\"");
        t.pattern = TrafficPattern::Crr;
    }
}

bool is_rfc2544_entry(const Node& n) {
    return n.json().is_object() &&
           ((n.has("test") && n.json().at("test") == "rfc2544") || (n.has("protocol") && n.json().at("protocol") == "rfc2544"));
}

// `{"test": "rfc2544", "frames": [64, 128, "imix"], "trial_s": 1, ...}` (or "protocol": "rfc2544"): a
// frame-size table. Frames are kept as text; their grammar is checked here, their sizes by core when the
// config is loaded (matrix/config.cpp), so the error still names the pointer.
TrafficEntry parse_rfc2544(const Node& n) {
    n.expect_object(kRfc2544Keys, "an rfc2544 test {\"test\": \"rfc2544\", \"frames\": [...], \"trial_s\": ...}");

    TrafficEntry e;
    e.test.protocol = Protocol::Udp;
    e.test.streams = 1;
    Rfc2544Spec r;
    if (n.has("frames")) {
        const std::string expected = "a frame size in bytes (64..9216), \"imix\" or \"imix:SIZExWEIGHT,...\"";
        for (const auto& f : n.child("frames").array("a non-empty array of frame sizes", true)) {
            if (f.json().is_number()) {
                r.frames.push_back(std::to_string(f.integer(64, 9216, expected)));
            } else {
                const auto text = f.string(expected);
                if (text.rfind("imix", 0) != 0 &&
                    (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))) {
                    f.fail(expected);
                }
                r.frames.push_back(text);
            }
        }
    }
    if (n.has("trial_s")) r.trial_s = n.child("trial_s").number(0, 3600, true, "a trial length in seconds (> 0)");
    if (n.has("resolution_pct")) r.resolution_pct = n.child("resolution_pct").number(0, 100, true, "a search resolution in percent (0 < x < 100)");
    if (r.resolution_pct >= 100) n.child("resolution_pct").fail("a search resolution in percent (0 < x < 100)");
    if (n.has("max_trials")) r.max_trials = static_cast<uint32_t>(n.child("max_trials").integer(1, 1000, "a number of trials from 1 to 1000"));
    if (n.has("loss_tolerance_pct"))
        r.loss_tolerance_pct = n.child("loss_tolerance_pct").number(0, 99.999, false, "a loss tolerance in percent (0 <= x < 100)");
    if (n.has("line_rate_bps")) r.line_rate_bps = n.child("line_rate_bps").number(0, 1e13, false, "a line rate in bits/s (0 = the link speed)");
    if (n.has("streams"))
        r.streams = static_cast<uint32_t>(
            n.child("streams").integer(0, kMaxStreams, "a number of generator streams from 0 (auto) to " + std::to_string(kMaxStreams)));
    if (n.has("direction") && n.json().at("direction") != "forward") n.child("direction").fail("\"forward\" (the table measures one direction)");
    e.test.streams = r.streams;
    e.rfc2544 = r;
    e.name = n.has("name") ? n.child("name").name() : "rfc2544";
    return e;
}

}  // namespace

TrafficEntry parse_traffic(const Node& n) {
    if (is_rfc2544_entry(n)) return parse_rfc2544(n);
    n.expect_object(kTrafficKeys, "an object describing a test (protocol, streams, write_size, ...)");
    TrafficEntry e;
    auto& t = e.test;
    // A cell names its streams: no engine "auto" (one per core for UDP), so a results file says what ran.
    t.streams = 1;
    if (n.has("protocol")) {
        const auto s = n.child("protocol").string("\"tcp\" or \"udp\"");
        if (s == "tcp") t.protocol = Protocol::Tcp;
        else if (s == "udp") t.protocol = Protocol::Udp;
        else n.child("protocol").fail("\"tcp\" or \"udp\"");
    }
    if (n.has("direction")) {
        const auto d = n.child("direction");
        const auto s = d.string("\"forward\", \"reverse\" or \"bidir\"");
        if (s == "forward") t.direction = Direction::Forward;
        else if (s == "reverse") t.direction = Direction::Reverse;
        else if (s == "bidir") t.direction = Direction::Bidir;
        else d.fail("\"forward\", \"reverse\" or \"bidir\"");
    }
    parse_table_fields(n, t);
    if (n.has("write_size") && n.has("length")) n.child("length").fail_message("give write_size or its alias length, not both");
    for (const char* key : {"write_size", "length"}) {
        if (n.has(key)) {
            t.write_size = static_cast<uint32_t>(n.child(key).integer(0, 16u << 20, "a size in bytes from 0 (default) to 16777216"));
        }
    }
    if (t.protocol == Protocol::Udp && t.write_size != 0 && (t.write_size < 18 || t.write_size > 65507)) {
        n.child(n.has("write_size") ? "write_size" : "length").fail("a UDP payload size from 18 to 65507 bytes");
    }
    const std::string test = n.has("test") ? n.child("test").string("\"stream\", \"rr\" or \"rfc2544\"") : "stream";
    if (test == "rr") {
        parse_rr_fields(n, e);
    } else if (test != "stream") {
        n.child("test").fail("\"stream\", \"rr\" or \"rfc2544\"");
    } else {
        for (const auto& key : kRrOnlyKeys) {
            if (n.has(key)) n.child(key).fail_message("a request/response field; only for \"test\": \"rr\"");
        }
    }
    parse_knobs(n, t);
    if (t.protocol == Protocol::Tcp) {
        for (const char* key : {"udp_gso", "udp_gro", "rate_pps"}) {
            if (n.has(key) && n.json().at(key) != Json(false) && n.json().at(key) != Json(0)) {
                n.child(key).fail_message(std::string("only for \"protocol\": \"udp\""));
            }
        }
    }
    e.name = n.has("name") ? n.child("name").name() : derived_name(t);
    return e;
}

std::vector<std::string> traffic_match_keys() {
    std::vector<std::string> keys = kTrafficKeys;
    keys.insert(keys.end(), kRfc2544Keys.begin(), kRfc2544Keys.end());
    return keys;
}

namespace {

// Which test fields a traffic entry (and an exclude rule's `traffic` match) carries.
Json traffic_fields(const TrafficEntry& v) {
    const auto& t = v.test;
    if (v.rfc2544) {
        Json j = *v.rfc2544;
        j["name"] = v.name;
        j["test"] = "rfc2544";
        j["protocol"] = "rfc2544";
        j["direction"] = t.direction;
        return j;
    }
    // The table's axes of this kind of entry; knobs only when set: an entry without them reads as before
    // they existed.
    const bool stream = t.pattern == TrafficPattern::Stream;
    const TestSpec defaults;
    Json j = Json{{"name", v.name}, {"test", stream ? "stream" : "rr"}};
    for_each_test_spec_field(t, defaults, [&](const TestSpecField& f, const auto& member, const auto& fallback) {
        if (f.axis == FieldAxis::Both || f.axis == (stream ? FieldAxis::Stream : FieldAxis::Rr) ||
            ((f.axis == FieldAxis::Knob || f.axis == FieldAxis::StreamKnob) && member != fallback)) {
            j[f.key] = member;
        }
    });
    if (!stream) j["connect_per_transaction"] = t.pattern == TrafficPattern::Crr;
    if (t.socket.dscp >= 0) j["dscp"] = t.socket.dscp;
    return j;
}

}  // namespace
}  // namespace sweep_json

void to_json(Json& j, const TrafficEntry& v) { j = sweep_json::traffic_fields(v); }

}  // namespace nm
