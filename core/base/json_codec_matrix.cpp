// JSON of sweeps and results. A sweep config is what users write by hand, so it is read field by field
// with the JSON pointer of every value at hand: each error says where (`/traffic/1/streams`), what was
// expected and what was found, and unknown keys are errors (a typo must not silently become a default).
// Results files are written by nicmatrix and read back tolerantly (fields added later get defaults).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/base/cpu_list.hpp"
#include "core/base/dscp.hpp"
#include "core/base/error.hpp"
#include "core/base/setting_rules.hpp"
#include "core/base/sysctl_allow_list.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/json_integer.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/base/test_spec_fields.hpp"

namespace nm {

using codec::opt;
using codec::req;

namespace {

std::string describe(const Json& j) {
    switch (j.type()) {
        case Json::value_t::object: return "an object";
        case Json::value_t::array: return "an array";
        case Json::value_t::null: return "null";
        case Json::value_t::discarded: return "nothing";
        default: return j.dump();
    }
}

std::string join_quoted(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
    return out;
}

// A value in the config together with its JSON pointer, so every error can say where it is.
class Node {
public:
    Node(const Json& j, std::string pointer) : j_(j), pointer_(std::move(pointer)) {}

    const Json& json() const { return j_; }
    const std::string& pointer() const { return pointer_; }

    [[noreturn]] void fail(const std::string& expected) const {
        throw usage_error((pointer_.empty() ? "/" : pointer_) + ": expected " + expected + ", got " + describe(j_));
    }
    [[noreturn]] void fail_message(const std::string& message) const {
        throw usage_error((pointer_.empty() ? "/" : pointer_) + ": " + message);
    }

    // An object whose keys must all be in `allowed`.
    void expect_object(const std::vector<std::string>& allowed, const std::string& what) const {
        if (!j_.is_object()) fail(what);
        for (const auto& [key, value] : j_.items()) {
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                child(key).fail_message("unknown key; expected one of " + join_quoted(allowed));
            }
        }
    }
    bool has(const std::string& key) const { return j_.contains(key); }
    Node child(const std::string& key) const { return Node(j_.at(key), pointer_ + "/" + escape(key)); }
    Node child(size_t index) const { return Node(j_.at(index), pointer_ + "/" + std::to_string(index)); }
    Node required(const std::string& key, const std::string& expected) const {
        if (!j_.contains(key)) {
            throw usage_error(pointer_ + "/" + escape(key) + ": missing; expected " + expected);
        }
        return child(key);
    }

    std::vector<Node> array(const std::string& expected, bool non_empty) const {
        if (!j_.is_array() || (non_empty && j_.empty())) fail(expected);
        std::vector<Node> out;
        for (size_t i = 0; i < j_.size(); ++i) out.push_back(child(i));
        return out;
    }

    std::string string(const std::string& expected = "a string") const {
        if (!j_.is_string()) fail(expected);
        return j_.get<std::string>();
    }

    // A name that can be part of a cell key: letters, digits, '.', '_', '-', '+', '='.
    std::string name() const {
        const std::string expected = "a non-empty name of letters, digits, '.', '_', '-', '+', '='";
        const auto s = string(expected);
        const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '=';
        });
        if (!ok) fail(expected);
        return s;
    }

    // Integers are read exactly: a JSON integer as itself, a whole float (people write 1e9) only when it
    // is below 2^64, so the conversion is defined; the range check is on the integer, not on a double.
    uint64_t integer(uint64_t min, uint64_t max, const std::string& expected) const {
        uint64_t v = 0;
        if (j_.is_number_unsigned()) {
            v = j_.get<uint64_t>();
        } else if (j_.is_number_float()) {
            const double d = j_.get<double>();
            if (!(d >= 0) || d >= 18446744073709551616.0 || std::floor(d) != d) fail(expected);
            v = static_cast<uint64_t>(d);
        } else {
            fail(expected);   // a negative integer, a string, ...
        }
        if (v < min || v > max) fail(expected);
        return v;
    }

    double number(double min, double max, bool min_exclusive, const std::string& expected) const {
        if (!j_.is_number()) fail(expected);
        const double d = j_.get<double>();
        if (!std::isfinite(d) || d < min || (min_exclusive && d == min) || d > max) fail(expected);
        return d;
    }

    bool boolean() const {
        if (!j_.is_boolean()) fail("true or false");
        return j_.get<bool>();
    }

    // "on"/"off" as ethtool -K takes them, or a JSON boolean.
    bool on_off() const {
        if (j_.is_boolean()) return j_.get<bool>();
        if (j_.is_string() && j_ == "on") return true;
        if (j_.is_string() && j_ == "off") return false;
        fail("\"on\", \"off\", true or false");
    }

private:
    static std::string escape(const std::string& key) {
        std::string out;
        for (char c : key) {
            if (c == '~') out += "~0";
            else if (c == '/') out += "~1";
            else out += c;
        }
        return out;
    }

    const Json& j_;
    std::string pointer_;
};

constexpr uint32_t kMinMtu = 68;      // IPv4's minimum (RFC 791)
constexpr uint32_t kMaxMtu = 65535;

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

const std::vector<std::string> kRfc2544Keys = {"name", "test", "protocol", "direction", "frames",
                                               "trial_s",   "resolution_pct", "max_trials", "loss_tolerance_pct",
                                               "line_rate_bps", "streams"};

constexpr std::pair<ApplyTo, const char*> kApplyTo[] = {
    {ApplyTo::Local, "local"}, {ApplyTo::Peer, "peer"}, {ApplyTo::Both, "both"}, {ApplyTo::Dut, "dut"}};
constexpr std::pair<SweepOrder, const char*> kSweepOrders[] = {{SweepOrder::Shuffled, "shuffled"}, {SweepOrder::Sequential, "sequential"}};
constexpr std::pair<RatioVerdict, const char*> kVerdicts[] = {{RatioVerdict::Significant, "significant"},
                                                              {RatioVerdict::NotSignificant, "not_significant"},
                                                              {RatioVerdict::TooFew, "too_few"},
                                                              {RatioVerdict::NotTestable, "not_testable"},
                                                              {RatioVerdict::Equivalent, "equivalent"}};
constexpr std::pair<PAdjustment, const char*> kAdjustments[] = {
    {PAdjustment::Holm, "holm"}, {PAdjustment::BenjaminiHochberg, "bh"}, {PAdjustment::None, "none"}};
constexpr std::pair<CellStatus, const char*> kCellStatuses[] = {{CellStatus::Ok, "ok"},
                                                                {CellStatus::Infeasible, "infeasible"},
                                                                {CellStatus::Duplicate, "duplicate"},
                                                                {CellStatus::Failed, "failed"},
                                                                {CellStatus::Stalled, "stalled"},
                                                                {CellStatus::PathMtuBlackhole, "path_mtu_blackhole"},
                                                                {CellStatus::UnreachableAfterChange, "unreachable_after_change"},
                                                                {CellStatus::LinkLost, "link_lost"}};

template <typename E, size_t N>
std::vector<std::string> enum_names(const std::pair<E, const char*> (&names)[N]) {
    std::vector<std::string> out;
    for (const auto& [value, name] : names) out.emplace_back(name);
    return out;
}

template <typename E, size_t N>
E enum_value(const Node& n, const std::pair<E, const char*> (&names)[N]) {
    const std::string expected = "one of " + join_quoted(enum_names(names));
    const auto s = n.string(expected);
    for (const auto& [value, name] : names) {
        if (s == name) return value;
    }
    n.fail(expected);
}

template <typename E, size_t N>
const char* enum_name(E v, const std::pair<E, const char*> (&names)[N]) {
    for (const auto& [value, name] : names) {
        if (value == v) return name;
    }
    return "unknown";
}

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
    return n.json().is_object() && ((n.has("test") && n.json().at("test") == "rfc2544") ||
                                    (n.has("protocol") && n.json().at("protocol") == "rfc2544"));
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
                if (text.rfind("imix", 0) != 0 && (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))) {
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
    if (n.has("loss_tolerance_pct")) r.loss_tolerance_pct = n.child("loss_tolerance_pct").number(0, 99.999, false, "a loss tolerance in percent (0 <= x < 100)");
    if (n.has("line_rate_bps")) r.line_rate_bps = n.child("line_rate_bps").number(0, 1e13, false, "a line rate in bits/s (0 = the link speed)");
    if (n.has("streams")) r.streams = static_cast<uint32_t>(n.child("streams").integer(0, kMaxStreams, "a number of generator streams from 0 (auto) to " + std::to_string(kMaxStreams)));
    if (n.has("direction") && n.json().at("direction") != "forward") n.child("direction").fail("\"forward\" (the table measures one direction)");
    e.test.streams = r.streams;
    e.rfc2544 = r;
    e.name = n.has("name") ? n.child("name").name() : "rfc2544";
    return e;
}

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

PrecisionSpec parse_precision(const Node& n) {
    n.expect_object({"ci_pct", "confidence", "min_repetitions", "max_repetitions", "metric"},
                    "a precision {\"ci_pct\": 5, \"confidence\": 95, \"min_repetitions\": 3, \"max_repetitions\": 12, \"metric\": ...}");
    PrecisionSpec p;
    p.ci_pct = n.required("ci_pct", "the wanted half-width of the median's interval, in percent of the median")
                   .number(0, 100, true, "a half-width in percent of the median (0 < x <= 100)");
    if (n.has("confidence")) p.confidence = n.child("confidence").number(50, 99.9, false, "a confidence in percent from 50 to 99.9");
    if (n.has("min_repetitions")) p.min_repetitions = static_cast<uint32_t>(n.child("min_repetitions").integer(1, 1000, "a number of repetitions from 1 to 1000"));
    if (n.has("max_repetitions")) p.max_repetitions = static_cast<uint32_t>(n.child("max_repetitions").integer(1, 1000, "a number of repetitions from 1 to 1000"));
    if (p.max_repetitions < p.min_repetitions) {
        (n.has("max_repetitions") ? n.child("max_repetitions") : n.child("min_repetitions"))
            .fail_message("max_repetitions (" + std::to_string(p.max_repetitions) + ") is below min_repetitions (" +
                          std::to_string(p.min_repetitions) + ")");
    }
    // The name is checked against the metrics the sweep summarizes by matrix/config.cpp.
    if (n.has("metric")) p.metric = n.child("metric").string("a metric name such as \"throughput_bps\"");
    // The engines' CPU per KB was called service_demand_us_per_kb before netperf's per-end figures came.
    if (p.metric == "service_demand_us_per_kb") p.metric = "engine_service_demand_us_per_kb";
    return p;
}

InterferenceSpec parse_interference(const Node& n) {
    n.expect_object({"max_busy_pct", "max_steal_pct", "sample_ms", "max_wait_s"},
                    "an interference check {\"max_busy_pct\": 20, \"max_steal_pct\": 5, \"sample_ms\": 200, \"max_wait_s\": 2}");
    InterferenceSpec f;
    if (n.has("max_busy_pct")) f.max_busy_pct = n.child("max_busy_pct").number(0, 100, false, "a percentage of all CPUs from 0 to 100");
    if (n.has("max_steal_pct")) f.max_steal_pct = n.child("max_steal_pct").number(0, 100, false, "a percentage of all CPUs from 0 to 100");
    if (n.has("sample_ms")) f.sample_ms = static_cast<uint32_t>(n.child("sample_ms").integer(0, 5000, "milliseconds from 0 (no check) to 5000"));
    if (n.has("max_wait_s")) f.max_wait_s = n.child("max_wait_s").number(0, 3600, false, "a number of seconds, 0 or more");
    return f;
}


// --- Tuning axes (issue 15): each a list of values, a value a plain form or {"name": ..., <fields>}. ---

std::string key_safe(std::string s) {
    for (char& c : s) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '=')) c = '+';
    }
    return s;
}

std::string cpu_list_at(const Node& n) {
    const auto text = n.string("a CPU list such as \"0-1\", \"0,2\", \"all\" or \"none\"");
    try {
        return canonical_cpu_list(text);
    } catch (const Error& e) {
        n.fail_message(e.what());
    }
}

// "1gbit", "100mbit", "64kbit", "1000000" (bits/s), as tc takes rates.
uint64_t rate_at(const Node& n) {
    if (n.json().is_number()) return n.integer(1, UINT64_MAX / 2, "a rate in bits/s or a string such as \"1gbit\"");
    const auto text = n.string("a rate in bits/s or a string such as \"1gbit\"");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        n.fail("a rate such as \"1gbit\", \"100mbit\", \"64kbit\" or \"1000000bit\"");
    }
    const std::string unit = text.substr(used);
    const std::pair<const char*, double> units[] = {{"", 1}, {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12}};
    for (const auto& [u, f] : units) {
        if (unit == u && v > 0) return static_cast<uint64_t>(v * f);
    }
    n.fail("a rate such as \"1gbit\", \"100mbit\", \"64kbit\" or \"1000000bit\"");
}

std::string derived_counts(const std::map<std::string, uint32_t>& m) {
    std::string out;
    for (const auto& [k, v] : m) out += (out.empty() ? "" : "-") + k + std::to_string(v);
    return out;
}

TuningProfile parse_axis_value(const std::string& axis, const Node& n) {
    TuningProfile p;
    TuningRequest& t = p.tuning;
    const bool object = n.json().is_object();
    const auto counts = [&](const std::vector<std::string>& fields, std::map<std::string, uint32_t>& out, const std::string& what) {
        std::vector<std::string> allowed = fields;
        allowed.push_back("name");
        n.expect_object(allowed, what);
        for (const auto& [key, value] : n.json().items()) {
            if (key == "name") continue;
            std::string k = key;
            std::replace(k.begin(), k.end(), '_', '-');
            const auto c = n.child(key);
            if (c.json().is_boolean()) out[k] = c.json().get<bool>() ? 1 : 0;
            else if (c.json().is_string()) out[k] = c.on_off() ? 1 : 0;
            else out[k] = static_cast<uint32_t>(c.integer(0, UINT32_MAX, "a non-negative integer"));
        }
        if (out.empty()) n.fail(what + " with at least one field");
    };
    if (axis == "channels") {
        counts({"rx", "tx", "other", "combined"}, t.channels, "channel counts {\"rx\": 2, \"tx\": 2} (ethtool -L)");
        p.name = derived_counts(t.channels);
    } else if (axis == "rings") {
        counts({"rx", "tx", "rx_jumbo", "rx_mini", "rx-jumbo", "rx-mini"}, t.rings, "ring sizes {\"rx\": 512, \"tx\": 512} (ethtool -G)");
        p.name = derived_counts(t.rings);
    } else if (axis == "coalesce") {
        counts({"rx-usecs", "rx-frames", "rx-usecs-irq", "rx-frames-irq", "tx-usecs", "tx-frames", "tx-usecs-irq", "tx-frames-irq",
                "stats-block-usecs", "adaptive-rx", "adaptive-tx", "pkt-rate-low", "pkt-rate-high", "sample-interval"},
               t.coalesce, "coalescing by ethtool -C names {\"rx-usecs\": 8, \"adaptive-rx\": \"off\"}");
        p.name = derived_counts(t.coalesce);
    } else if (axis == "rps" || axis == "xps" || axis == "irq_affinity") {
        auto& out = axis == "rps" ? t.rps : axis == "xps" ? t.xps : t.irq_affinity;
        const char* prefix = axis == "rps" ? "rx-" : axis == "xps" ? "tx-" : "";
        const std::string what = "a CPU list (\"0-1\", \"all\", \"none\") or {\"name\": ..., \"" + axis + "\": a CPU list or {queue: CPU list}}";
        const auto value = [&](const Node& v) {
            if (v.json().is_string()) {
                out["*"] = cpu_list_at(v);
                p.name = (axis == "irq_affinity" ? std::string("irq") : axis) + "-" + key_safe(out["*"]);
                return;
            }
            if (!v.json().is_object() || v.json().empty()) v.fail(what);
            for (const auto& [q, list] : v.json().items()) {
                const bool ok = axis == "irq_affinity" ? (q == "*" || (!q.empty() && q.find_first_not_of("0123456789") == std::string::npos))
                                                       : (q == "*" || (q.rfind(prefix, 0) == 0 && q.size() > 3 && q.find_first_not_of("0123456789", 3) == std::string::npos));
                if (!ok) v.child(q).fail_message(axis == "irq_affinity" ? "expected an IRQ number or \"*\"" : std::string("expected a queue name \"") + prefix + "N\" or \"*\"");
                out[q] = cpu_list_at(v.child(q));
                p.name += (p.name.empty() ? axis + "-" : "-") + key_safe(q + "=" + out[q]);
            }
        };
        if (object) {
            n.expect_object({"name", axis}, what);
            value(n.required(axis, what));
        } else {
            value(n);
        }
    } else if (axis == "napi") {
        n.expect_object({"name", "gro_flush_timeout", "napi_defer_hard_irqs"}, "NAPI settings {\"gro_flush_timeout\": 20000, \"napi_defer_hard_irqs\": 2}");
        if (n.has("gro_flush_timeout")) t.napi["gro_flush_timeout"] = n.child("gro_flush_timeout").integer(0, UINT32_MAX, "nanoseconds, 0 or more");
        if (n.has("napi_defer_hard_irqs")) t.napi["napi_defer_hard_irqs"] = n.child("napi_defer_hard_irqs").integer(0, INT32_MAX, "a count, 0 or more");
        if (t.napi.empty()) n.fail("NAPI settings with gro_flush_timeout or napi_defer_hard_irqs");
        for (const auto& [k, v] : t.napi) p.name += (p.name.empty() ? "" : "-") + std::string(k == "gro_flush_timeout" ? "gft" : "defer") + std::to_string(v);
    } else if (axis == "sysctl") {
        if (!n.json().is_object() || n.json().empty()) n.fail("a map of sysctl name -> value {\"net.ipv4.tcp_congestion_control\": \"bbr\"}");
        for (const auto& [key, value] : n.json().items()) {
            if (key == "name") continue;
            const auto c = n.child(key);
            if (find_sysctl(key) == nullptr) {
                c.fail_message("sysctl \"" + key + "\" is not on the allow-list (nicmatrix sweep --help prints it)");
            }
            std::string v;
            if (c.json().is_string()) v = c.json().get<std::string>();
            else if (c.json().is_number_integer()) v = c.json().dump();
            else c.fail("a value as sysctl takes it (a string or an integer)");
            if (v.empty() || v.find('\n') != std::string::npos) c.fail("a non-empty one-line value");
            t.sysctl[key] = normalize_sysctl_value(v);
            const auto dot = key.rfind('.');
            p.name += (p.name.empty() ? "" : "+") + key.substr(dot + 1) + "=" + key_safe(t.sysctl[key]);
        }
        if (t.sysctl.empty()) n.fail("a map of sysctl name -> value with at least one sysctl");
    } else if (axis == "qdisc") {
        QdiscSpec q;
        if (n.json().is_string()) {
            q.kind = n.string();
        } else {
            n.expect_object({"name", "kind", "rate", "burst", "latency_ms", "limit", "default"},
                            "a qdisc kind (\"pfifo_fast\") or {\"kind\": \"tbf\", \"rate\": \"1gbit\", \"burst\": 32768, \"latency_ms\": 50}");
            q.kind = n.required("kind", "a qdisc kind").string("a qdisc kind");
            if (n.has("rate")) q.rate_bps = rate_at(n.child("rate"));
            if (n.has("burst")) q.burst_bytes = static_cast<uint32_t>(n.child("burst").integer(1, UINT32_MAX, "bytes"));
            if (n.has("latency_ms")) q.latency_ms = n.child("latency_ms").number(0, 1e6, true, "milliseconds");
            if (n.has("limit")) q.limit = static_cast<uint32_t>(n.child("limit").integer(1, UINT32_MAX, "packets (pfifo) or bytes (tbf)"));
            if (n.has("default")) q.default_class = static_cast<uint32_t>(n.child("default").integer(0, 0xffff, "a class minor number"));
        }
        // The allow-list (qdisc_tree.hpp): only kinds whose trees restore can rebuild, and no module autoload.
        if (!qdisc_kind_allowed(q.kind)) (n.json().is_string() ? n : n.child("kind")).fail("a qdisc kind of noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel");
        p.name = q.kind;
        t.qdisc = q;
    }
    if (object && n.has("name")) p.name = n.child("name").name();
    if (p.name.size() > 64) p.name = p.name.substr(0, 64);
    // The checks every way in shares (core/base/setting_rules.hpp): queue shapes, allow-lists, qdisc kinds.
    try {
        check_tuning_request(t, "tuning");
    } catch (const Error& e) {
        n.fail_message(e.what());
    }
    return p;
}

std::vector<TuningProfile> parse_axis(const std::string& axis, const Node& n) {
    std::vector<TuningProfile> out;
    std::set<std::string> names;
    for (const auto& v : n.array("a non-empty array of " + axis + " values", true)) {
        auto p = parse_axis_value(axis, v);
        if (!names.insert(p.name).second) {
            (v.json().is_object() && v.has("name") ? v.child("name") : v)
                .fail_message("the " + axis + " value name \"" + p.name + "\" is used twice; give each value a unique \"name\"");
        }
        out.push_back(std::move(p));
    }
    return out;
}

Json axis_value_json(const std::string& axis, const TuningProfile& p) {
    Json j = Json{{"name", p.name}};
    const TuningRequest& t = p.tuning;
    const auto lists = [](const std::map<std::string, std::string>& m) {
        if (m.size() == 1 && m.count("*")) return Json(m.at("*"));
        return Json(m);
    };
    if (axis == "channels") for (const auto& [k, v] : t.channels) j[k] = v;
    if (axis == "rings") for (const auto& [k, v] : t.rings) j[k] = v;
    if (axis == "coalesce") for (const auto& [k, v] : t.coalesce) j[k] = v;
    if (axis == "rps") j["rps"] = lists(t.rps);
    if (axis == "xps") j["xps"] = lists(t.xps);
    if (axis == "irq_affinity") j["irq_affinity"] = lists(t.irq_affinity);
    if (axis == "napi") for (const auto& [k, v] : t.napi) j[k] = v;
    if (axis == "sysctl") for (const auto& [k, v] : t.sysctl) j[k] = v;
    if (axis == "qdisc" && t.qdisc) {
        const QdiscSpec& q = *t.qdisc;
        j["kind"] = q.kind;
        if (q.rate_bps) j["rate"] = *q.rate_bps;
        if (q.burst_bytes) j["burst"] = *q.burst_bytes;
        if (q.latency_ms) j["latency_ms"] = *q.latency_ms;
        if (q.limit) j["limit"] = *q.limit;
        if (q.default_class) j["default"] = *q.default_class;
    }
    return j;
}

// `"affinity": {"client": [0], "server": [1]}`: CPU numbers; whether they exist is checked on the host
// that pins them (matrix/sweep_request.cpp for this host, the server for its own).
AffinitySpec parse_affinity(const Node& n) {
    n.expect_object({"client", "server"}, "CPUs to pin the engine threads to {\"client\": [0], \"server\": [1]}");
    AffinitySpec a;
    const auto cpus = [](const Node& list) {
        std::vector<uint32_t> out;
        for (const auto& c : list.array("an array of CPU numbers", false)) {
            const auto cpu = static_cast<uint32_t>(c.integer(0, 8191, "a CPU number from 0 to 8191"));
            if (std::find(out.begin(), out.end(), cpu) != out.end()) c.fail("a CPU not listed before");
            out.push_back(cpu);
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    if (n.has("client")) a.client = cpus(n.child("client"));
    if (n.has("server")) a.server = cpus(n.child("server"));
    return a;
}

}  // namespace

void to_json(Json& j, const SweepOrder& v) { j = enum_name(v, kSweepOrders); }
void from_json(const Json& j, SweepOrder& v) { v = enum_value(Node(j, "/order"), kSweepOrders); }

void to_json(Json& j, const PrecisionSpec& v) {
    j = Json{{"ci_pct", v.ci_pct},
             {"confidence", v.confidence},
             {"min_repetitions", v.min_repetitions},
             {"max_repetitions", v.max_repetitions}};
    if (!v.metric.empty()) j["metric"] = v.metric;
}

void to_json(Json& j, const InterferenceSpec& v) {
    j = Json{{"max_busy_pct", v.max_busy_pct}, {"max_steal_pct", v.max_steal_pct}, {"sample_ms", v.sample_ms}, {"max_wait_s", v.max_wait_s}};
}

void to_json(Json& j, const ApplyTo& v) { j = enum_name(v, kApplyTo); }
void from_json(const Json& j, ApplyTo& v) { v = enum_value(Node(j, "/apply_to"), kApplyTo); }

void to_json(Json& j, const TrafficEntry& v) { j = traffic_fields(v); }

void to_json(Json& j, const SweepConfig& v) {
    Json profiles = Json::array();
    for (const auto& p : v.offloads) {
        Json features = Json::object();
        for (const auto& [name, on] : p.features) features[name] = on ? "on" : "off";
        profiles.push_back({{"name", p.name}, {"features", features}});
    }
    Json exclude = Json::array();
    for (const auto& r : v.exclude) {
        Json rule = Json::object();
        if (r.offloads) rule["offloads"] = *r.offloads;
        if (r.mtu) rule["mtu"] = *r.mtu;
        if (!r.traffic.empty()) rule["traffic"] = r.traffic;
        for (const auto& [axis, name] : r.axes) rule[axis] = name;
        exclude.push_back(rule);
    }
    j = Json{{"offloads", profiles},
             {"mtu", v.mtu},
             {"traffic", v.traffic},
             {"duration_s", v.duration_s},
             {"omit_s", v.omit_s},
             {"repetitions", v.repetitions},
             {"cooldown_s", v.cooldown_s},
             {"link_wait_s", v.link_wait_s},
             {"apply_to", {{"offloads", v.apply_offloads_to}, {"mtu", v.apply_mtu_to}}},
             {"exclude", exclude},
             {"order", v.order},
             {"interference", v.interference}};
    if (v.precision) j["precision"] = *v.precision;
    for (const auto& [axis, values] : v.axes) {
        Json list = Json::array();
        for (const auto& p : values) list.push_back(axis_value_json(axis, p));
        j[axis] = list;
    }
    for (const auto& [axis, to] : v.apply_axes) j["apply_to"][axis] = to;
    if (!v.affinity.client.empty() || !v.affinity.server.empty()) {
        j["affinity"] = Json{{"client", v.affinity.client}, {"server", v.affinity.server}};
    }
    // A config read from a file without a name is named after the file later; "" is not a valid name.
    if (!v.name.empty()) j["name"] = v.name;
    if (!v.description.empty()) j["description"] = v.description;
    if (v.profile) {
        j["profile"] = true;
        j["profile_hz"] = v.profile_hz;
    }
}

SweepConfig parse_sweep_config(const Json& j) {
    const Node root(j, "");
    root.expect_object({"$schema", "name", "description", "offloads", "mtu", "traffic", "duration_s", "omit_s",
                        "repetitions", "cooldown_s", "link_wait_s", "apply_to", "exclude", "precision", "order", "interference", "affinity",
                        "profile", "profile_hz", "channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc"},
                       "a sweep config object");
    SweepConfig c;
    if (root.has("$schema")) root.child("$schema").string();
    if (root.has("name")) c.name = root.child("name").name();
    if (root.has("description")) c.description = root.child("description").string();

    std::set<std::string> profile_names;
    for (const auto& p : root.required("offloads", "a non-empty array of offload profiles")
                             .array("a non-empty array of offload profiles ({\"name\": ..., \"features\": {...}})", true)) {
        p.expect_object({"name", "features"}, "an offload profile {\"name\": ..., \"features\": {\"tso\": \"off\", ...}}");
        OffloadProfile profile;
        profile.name = p.required("name", "a profile name").name();
        if (!profile_names.insert(profile.name).second) p.child("name").fail("a profile name not used before");
        const auto features = p.required("features", "an object of feature name -> \"on\"/\"off\"");
        if (!features.json().is_object()) features.fail("an object of feature name -> \"on\"/\"off\"");
        for (const auto& [name, value] : features.json().items()) {
            const auto f = features.child(name);
            if (name.empty()) f.fail_message("a feature name must not be empty");
            profile.features[name] = f.on_off();
        }
        c.offloads.push_back(std::move(profile));
    }

    for (const auto& m : root.required("mtu", "a non-empty array of MTUs").array("a non-empty array of MTUs in bytes", true)) {
        const auto mtu = static_cast<uint32_t>(m.integer(kMinMtu, kMaxMtu, "an MTU in bytes from 68 to 65535"));
        if (std::find(c.mtu.begin(), c.mtu.end(), mtu) != c.mtu.end()) m.fail("an MTU not listed before");
        c.mtu.push_back(mtu);
    }

    std::map<std::string, std::string> traffic_names;   // name -> pointer of its entry
    for (const auto& t : root.required("traffic", "a non-empty array of tests").array("a non-empty array of tests", true)) {
        auto entry = parse_traffic(t);
        if (const auto [it, fresh] = traffic_names.emplace(entry.name, t.pointer()); !fresh) {
            (t.has("name") ? t.child("name") : t)
                .fail_message("the test name \"" + entry.name + "\" is already used by " + it->second + "; give each test a unique \"name\"");
        }
        c.traffic.push_back(std::move(entry));
    }

    for (const char* axis : kTuningAxes) {
        if (root.has(axis)) c.axes[axis] = parse_axis(axis, root.child(axis));
    }

    if (root.has("duration_s")) c.duration_s = root.child("duration_s").number(0, 86400, true, "a positive number of seconds");
    if (root.has("omit_s")) c.omit_s = root.child("omit_s").number(0, 3600, false, "a number of seconds, 0 or more");
    if (root.has("repetitions")) c.repetitions = static_cast<uint32_t>(root.child("repetitions").integer(1, 1000, "a positive integer"));
    if (root.has("cooldown_s")) c.cooldown_s = root.child("cooldown_s").number(0, 3600, false, "a number of seconds, 0 or more");
    if (root.has("link_wait_s")) c.link_wait_s = root.child("link_wait_s").number(0, 600, false, "a number of seconds from 0 to 600");
    if (root.has("profile")) c.profile = root.child("profile").boolean();
    if (root.has("profile_hz")) {
        c.profile_hz = static_cast<uint32_t>(root.child("profile_hz").integer(1, 10000, "samples per second per CPU from 1 to 10000"));
    }

    if (root.has("precision")) c.precision = parse_precision(root.child("precision"));
    if (root.has("order")) c.order = enum_value(root.child("order"), kSweepOrders);
    if (root.has("interference")) c.interference = parse_interference(root.child("interference"));
    if (root.has("affinity")) c.affinity = parse_affinity(root.child("affinity"));

    if (root.has("apply_to")) {
        const auto a = root.child("apply_to");
        if (a.json().is_string()) {
            c.apply_offloads_to = c.apply_mtu_to = enum_value(a, kApplyTo);
            for (const auto& [axis, values] : c.axes) c.apply_axes[axis] = c.apply_offloads_to;
        } else {
            std::vector<std::string> keys = {"offloads", "mtu"};
            keys.insert(keys.end(), std::begin(kTuningAxes), std::end(kTuningAxes));
            a.expect_object(keys, "\"local\", \"peer\", \"both\" or {\"offloads\": ..., \"mtu\": ..., \"rps\": ...}");
            if (a.has("offloads")) c.apply_offloads_to = enum_value(a.child("offloads"), kApplyTo);
            if (a.has("mtu")) c.apply_mtu_to = enum_value(a.child("mtu"), kApplyTo);
            for (const char* axis : kTuningAxes) {
                if (a.has(axis)) c.apply_axes[axis] = enum_value(a.child(axis), kApplyTo);
            }
        }
    }

    if (root.has("exclude")) {
        for (const auto& r : root.child("exclude").array("an array of exclusion rules", false)) {
            std::vector<std::string> rule_keys = {"offloads", "mtu", "traffic"};
            rule_keys.insert(rule_keys.end(), std::begin(kTuningAxes), std::end(kTuningAxes));
            r.expect_object(rule_keys, "an exclusion rule {\"offloads\", \"mtu\", \"traffic\", or a tuning axis: value name} (any of them)");
            if (r.json().empty()) r.fail("at least one of \"offloads\", \"mtu\", \"traffic\"");
            ExcludeRule rule;
            if (r.has("offloads")) {
                rule.offloads = r.child("offloads").string();
                if (!profile_names.count(*rule.offloads)) {
                    r.child("offloads").fail("one of the profile names " + join_quoted({profile_names.begin(), profile_names.end()}));
                }
            }
            if (r.has("mtu")) {
                rule.mtu = static_cast<uint32_t>(r.child("mtu").integer(kMinMtu, kMaxMtu, "an MTU from the mtu axis"));
                if (std::find(c.mtu.begin(), c.mtu.end(), *rule.mtu) == c.mtu.end()) r.child("mtu").fail("an MTU from the mtu axis");
            }
            for (const char* axis : kTuningAxes) {
                if (!r.has(axis)) continue;
                const auto v = r.child(axis);
                const std::string name = v.string("a value name of the " + std::string(axis) + " axis");
                const auto it = c.axes.find(axis);
                std::vector<std::string> names;
                if (it != c.axes.end()) {
                    for (const auto& p : it->second) names.push_back(p.name);
                }
                if (std::find(names.begin(), names.end(), name) == names.end()) v.fail("one of the " + std::string(axis) + " value names " + join_quoted(names));
                rule.axes[axis] = name;
            }
            if (r.has("traffic")) {
                const auto t = r.child("traffic");
                std::vector<std::string> keys = kTrafficKeys;
                keys.insert(keys.end(), kRfc2544Keys.begin(), kRfc2544Keys.end());
                t.expect_object(keys, "an object with some of a test's fields");
                for (const auto& [key, value] : t.json().items()) rule.traffic[key == "length" ? "write_size" : key] = value;
            }
            c.exclude.push_back(std::move(rule));
        }
    }
    return c;
}

void from_json(const Json& j, SweepConfig& v) { v = parse_sweep_config(j); }

void to_json(Json& j, const CellStatus& v) { j = enum_name(v, kCellStatuses); }
void from_json(const Json& j, CellStatus& v) { v = enum_value(Node(j, "/status"), kCellStatuses); }

void to_json(Json& j, const EndSettings& v) {
    j = Json{{"mtu", v.mtu}, {"features", v.features}};
    if (!v.tuning) return;
    // Only the kinds the sweep has axes of are kept; an empty kind is left out.
    Json t = *v.tuning;
    for (auto it = t.begin(); it != t.end();) {
        if (it->is_null() || (it->is_object() && it->empty())) {
            it = t.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& [key, value] : t.items()) j[key] = value;
}

void from_json(const Json& j, EndSettings& v) {
    req(j, "mtu", v.mtu);
    j.at("features").get_to(v.features);
    bool any = false;
    for (const char* key : {"channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc", "unsupported"}) any = any || j.contains(key);
    if (any) v.tuning = j.get<TuningState>();
}

void to_json(Json& j, const MetricSummary& v) {
    const auto maybe = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
    j = Json{{"n", v.n},
             {"median", v.median},
             {"median_ci_low", maybe(v.median_ci_low)},
             {"median_ci_high", maybe(v.median_ci_high)},
             {"median_ci_confidence", maybe(v.median_ci_confidence)},
             {"mean", v.mean},
             {"stddev", v.stddev},
             {"min", v.min},
             {"max", v.max},
             {"ci95", v.ci95}};
}

void from_json(const Json& j, MetricSummary& v) {
    opt(j, "n", v.n);
    j.at("median").get_to(v.median);
    j.at("mean").get_to(v.mean);
    j.at("stddev").get_to(v.stddev);
    j.at("min").get_to(v.min);
    j.at("max").get_to(v.max);
    j.at("ci95").get_to(v.ci95);
    // Files written before the median's interval was recorded have none: it reads back as unknown.
    const auto maybe = [&](const char* key, std::optional<double>& out) {
        if (const auto it = j.find(key); it != j.end() && it->is_number()) out = it->get<double>();
    };
    maybe("median_ci_low", v.median_ci_low);
    maybe("median_ci_high", v.median_ci_high);
    maybe("median_ci_confidence", v.median_ci_confidence);
}

void to_json(Json& j, const CellResult& v) {
    Json applied = Json::object();
    if (v.applied_local) applied["local"] = *v.applied_local;
    if (v.applied_remote) applied["remote"] = *v.applied_remote;
    if (!v.applied_dut.empty()) applied["dut"] = v.applied_dut;
    j = Json{{"key", v.spec.key},
             {"params",
              {{"offloads", v.spec.offloads},
               {"features_requested", v.spec.features_requested},
               {"mtu", v.spec.mtu},
               {"traffic", v.spec.traffic.name},
               {"test", v.spec.traffic}}},
             {"applied", applied},
             {"status", v.status},
             {"error", v.error},
             {"duplicate_of", v.duplicate_of.empty() ? Json(nullptr) : Json(v.duplicate_of)},
             {"overhead_s", v.overhead_s},
             {"runs", v.runs},
             {"repetitions_run", v.runs.size()},
             {"precision_met", v.precision_met ? Json(*v.precision_met) : Json(nullptr)},
             {"summary", v.summary},
             {"modes", v.modes ? Json(*v.modes) : Json(nullptr)}};
    if (v.rfc2544) j["rfc2544"] = *v.rfc2544;
    for (const auto& [axis, name] : v.spec.axes) j["params"][axis] = name;
}

void from_json(const Json& j, CellResult& v) {
    j.at("key").get_to(v.spec.key);
    const auto& params = j.at("params");
    params.at("offloads").get_to(v.spec.offloads);
    params.at("features_requested").get_to(v.spec.features_requested);
    req(params, "mtu", v.spec.mtu);
    v.spec.traffic = TrafficEntry{};
    params.at("traffic").get_to(v.spec.traffic.name);
    for (const char* axis : kTuningAxes) {
        if (const auto it = params.find(axis); it != params.end() && it->is_string()) v.spec.axes[axis] = it->get<std::string>();
    }
    const auto& test = params.at("test");
    if (test.value("test", "") == "rfc2544") {
        v.spec.traffic.rfc2544 = test.get<Rfc2544Spec>();
        v.spec.traffic.test.protocol = Protocol::Udp;
        v.spec.traffic.test.streams = v.spec.traffic.rfc2544->streams;
    } else {
        test.get_to(v.spec.traffic.test);
    }
    const auto& applied = j.at("applied");
    if (applied.contains("local")) v.applied_local = applied.at("local").get<EndSettings>();
    if (applied.contains("remote")) v.applied_remote = applied.at("remote").get<EndSettings>();
    if (applied.contains("dut")) v.applied_dut = applied.at("dut").get<std::map<std::string, EndSettings>>();
    j.at("status").get_to(v.status);
    v.error = j.value("error", "");
    if (const auto it = j.find("duplicate_of"); it != j.end() && it->is_string()) v.duplicate_of = it->get<std::string>();
    v.overhead_s = j.value("overhead_s", 0.0);
    j.at("runs").get_to(v.runs);
    j.at("summary").get_to(v.summary);
    // Files written before the rename summarize the engines' CPU per KB as service_demand_us_per_kb.
    if (const auto old = v.summary.find("service_demand_us_per_kb"); old != v.summary.end()) {
        v.summary.try_emplace("engine_service_demand_us_per_kb", old->second);
        v.summary.erase(old);
    }
    if (const auto it = j.find("precision_met"); it != j.end() && it->is_boolean()) v.precision_met = it->get<bool>();
    if (const auto it = j.find("rfc2544"); it != j.end() && !it->is_null()) v.rfc2544 = it->get<Rfc2544Result>();
    if (const auto it = j.find("modes"); it != j.end() && it->is_object()) v.modes = it->get<CellModes>();
}

void to_json(Json& j, const CellModes& v) {
    Json modes = Json::array();
    for (const auto& m : v.modes) {
        Json mode = m.summary;
        mode["runs"] = m.runs;
        mode["precision_met"] = m.precision_met ? Json(*m.precision_met) : Json(nullptr);
        mode["placement"] = m.placement.empty() ? Json(nullptr) : Json(m.placement);
        mode["placement_runs"] = m.placement_runs;
        modes.push_back(std::move(mode));
    }
    j = Json{{"metric", v.metric},
             {"method", v.method},
             {"modes", std::move(modes)},
             {"placement_by", v.placement_by.empty() ? Json(nullptr) : Json(v.placement_by)},
             {"explanation", v.explanation}};
}

void from_json(const Json& j, CellModes& v) {
    j.at("metric").get_to(v.metric);
    v.method = j.value("method", "");
    for (const auto& m : j.at("modes")) {
        ValueMode mode;
        m.get_to(mode.summary);
        opt(m, "runs", mode.runs);
        if (const auto it = m.find("precision_met"); it != m.end() && it->is_boolean()) mode.precision_met = it->get<bool>();
        if (const auto it = m.find("placement"); it != m.end() && it->is_string()) mode.placement = it->get<std::string>();
        opt(m, "placement_runs", mode.placement_runs);
        v.modes.push_back(std::move(mode));
    }
    if (const auto it = j.find("placement_by"); it != j.end() && it->is_string()) v.placement_by = it->get<std::string>();
    v.explanation = j.value("explanation", "");
}

namespace {

template <typename T>
Json or_null(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

template <typename T>
std::optional<T> optional_of(const Json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return checked_integer<T>(*it, key);
    } else {
        return it->get<T>();
    }
}

Json masks_json(const std::vector<QueueMask>& masks) {
    Json out = Json::array();
    for (const auto& m : masks) out.push_back({{"queue", m.queue}, {"mask", or_null(m.mask)}});
    return out;
}

std::vector<QueueMask> masks_of(const Json& j, const char* key) {
    std::vector<QueueMask> out;
    if (const auto it = j.find(key); it != j.end() && it->is_array()) {
        for (const auto& m : *it) out.push_back({m.at("queue").get<std::string>(), optional_of<std::string>(m, "mask")});
    }
    return out;
}

}  // namespace

void to_json(Json& j, const InterfaceSystem& v) {
    Json irqs = Json::array();
    for (const auto& i : v.irqs) irqs.push_back({{"irq", i.irq}, {"affinity", i.affinity}});
    j = Json{{"qdisc", {{"kind", v.qdisc}, {"handle", v.qdisc_handle}}},
             {"irqs", std::move(irqs)},
             {"rps_cpus", masks_json(v.rps)},
             {"xps_cpus", masks_json(v.xps)},
             {"numa_node", or_null(v.numa_node)}};
}

void from_json(const Json& j, InterfaceSystem& v) {
    if (const auto it = j.find("qdisc"); it != j.end() && it->is_object()) {
        v.qdisc = it->value("kind", "");
        v.qdisc_handle = it->value("handle", "");
    }
    if (const auto it = j.find("irqs"); it != j.end() && it->is_array()) {
        for (const auto& i : *it) v.irqs.push_back({checked_integer<uint32_t>(i.at("irq"), "irq"), i.value("affinity", "")});
    }
    v.rps = masks_of(j, "rps_cpus");
    v.xps = masks_of(j, "xps_cpus");
    v.numa_node = optional_of<int>(j, "numa_node");
}

void to_json(Json& j, const CpuLayout& v) {
    Json cpus = Json::array();
    for (const auto& c : v.cpus) {
        cpus.push_back({{"cpu", c.cpu},
                        {"core", or_null(c.core)},
                        {"package", or_null(c.package)},
                        {"node", or_null(c.node)},
                        {"governor", or_null(c.governor)},
                        {"freq_khz", or_null(c.freq_khz)}});
    }
    Json nodes = Json::object();
    for (const auto& [node, list] : v.numa_nodes) nodes[std::to_string(node)] = list;
    j = Json{{"smt_active", or_null(v.smt_active)}, {"numa_nodes", std::move(nodes)}, {"cpus", std::move(cpus)}};
}

void from_json(const Json& j, CpuLayout& v) {
    v.smt_active = optional_of<bool>(j, "smt_active");
    if (const auto it = j.find("numa_nodes"); it != j.end() && it->is_object()) {
        for (const auto& [node, list] : it->items()) v.numa_nodes[std::stoi(node)] = list.get<std::string>();
    }
    if (const auto it = j.find("cpus"); it != j.end() && it->is_array()) {
        for (const auto& c : *it) {
            CpuTopology t;
            t.cpu = checked_integer<uint32_t>(c.at("cpu"), "cpu");
            t.core = optional_of<int>(c, "core");
            t.package = optional_of<int>(c, "package");
            t.node = optional_of<int>(c, "node");
            t.governor = optional_of<std::string>(c, "governor");
            t.freq_khz = optional_of<uint64_t>(c, "freq_khz");
            v.cpus.push_back(std::move(t));
        }
    }
}

void to_json(Json& j, const CpuIdle& v) {
    Json states = Json::array();
    for (const auto& s : v.states) {
        states.push_back({{"name", s.name}, {"latency_us", or_null(s.latency_us)}, {"disabled_cpus", s.disabled_cpus}});
    }
    j = Json{{"driver", v.driver}, {"governor", v.governor}, {"states", std::move(states)}, {"driver_parameters", v.driver_parameters}};
}

void from_json(const Json& j, CpuIdle& v) {
    v.driver = j.value("driver", "");
    v.governor = j.value("governor", "");
    if (const auto it = j.find("states"); it != j.end() && it->is_array()) {
        for (const auto& s : *it) {
            CpuIdleState state;
            state.name = s.value("name", "");
            state.latency_us = optional_of<uint32_t>(s, "latency_us");
            if (const auto cpus = s.find("disabled_cpus"); cpus != s.end() && cpus->is_array()) {
                for (const auto& cpu : *cpus) state.disabled_cpus.push_back(checked_integer<uint32_t>(cpu, "disabled_cpus"));
            }
            v.states.push_back(std::move(state));
        }
    }
    v.driver_parameters = j.value("driver_parameters", std::map<std::string, std::string>{});
}

void to_json(Json& j, const InterfaceInfo& v) {
    j = Json{{"name", v.name},
             {"netns", v.netns},
             {"driver", v.driver},
             {"firmware", v.firmware},
             {"driver_version", v.driver_version},
             {"bus_info", v.bus_info},
             {"speed_mbps", v.speed_mbps ? Json(*v.speed_mbps) : Json(nullptr)},
             {"mtu_min", v.mtu_min},
             {"mtu_max", v.mtu_max},
             {"original", v.original},
             {"rings", v.rings},
             {"coalesce", v.coalesce},
             {"channels", v.channels},
             {"system", or_null(v.system)}};
    if (v.tuning) j["tuning"] = *v.tuning;
    if (!v.emulator.empty()) j["emulator"] = v.emulator;
    if (!v.device_model.empty()) j["device_model"] = v.device_model;
}

void from_json(const Json& j, InterfaceInfo& v) {
    j.at("name").get_to(v.name);
    v.netns = j.value("netns", "");
    j.at("driver").get_to(v.driver);
    v.firmware = j.value("firmware", "");
    v.bus_info = j.value("bus_info", "");
    opt(j, "speed_mbps", v.speed_mbps);
    req(j, "mtu_min", v.mtu_min);
    req(j, "mtu_max", v.mtu_max);
    j.at("original").get_to(v.original);
    opt(j, "rings", v.rings);
    opt(j, "coalesce", v.coalesce);
    opt(j, "channels", v.channels);
    if (const auto it = j.find("tuning"); it != j.end() && it->is_object()) v.tuning = it->get<TuningState>();
    v.driver_version = j.value("driver_version", "");
    v.system = optional_of<InterfaceSystem>(j, "system");
    v.emulator = j.value("emulator", "");
    v.device_model = j.value("device_model", "");
}

void to_json(Json& j, const HostInfo& v) {
    j = Json{{"hostname", v.hostname},
             {"kernel", v.kernel},
             {"cpu", {{"model", v.cpu_model}, {"count", v.cpu_count}}},
             {"cpu_accounting", v.cpu_accounting},
             {"interface", v.interface ? Json(*v.interface) : Json(nullptr)}};
    if (!v.sysctls.empty()) j["sysctls"] = v.sysctls;
    if (!v.kernel_cmdline.empty()) j["kernel_cmdline"] = v.kernel_cmdline;
    if (!v.cpu_vulnerabilities.empty()) j["cpu_vulnerabilities"] = v.cpu_vulnerabilities;
    if (!v.cpu_layout.cpus.empty()) j["cpu_layout"] = v.cpu_layout;
    if (v.cpu_idle) j["cpu_idle"] = *v.cpu_idle;
    if (!v.tool.version.empty()) j["tool"] = v.tool;
    if (!v.virtualization.empty()) j["virtualization"] = v.virtualization;
}

void from_json(const Json& j, HostInfo& v) {
    v.hostname = j.value("hostname", "");
    v.kernel = j.value("kernel", "");
    if (const auto it = j.find("cpu"); it != j.end() && it->is_object()) {
        v.cpu_model = it->value("model", "");
        opt(*it, "count", v.cpu_count);
    }
    if (const auto it = j.find("cpu_accounting"); it != j.end() && it->is_object()) v.cpu_accounting = it->get<CpuAccounting>();
    if (const auto it = j.find("interface"); it != j.end() && !it->is_null()) v.interface = it->get<InterfaceInfo>();
    v.sysctls = j.value("sysctls", std::map<std::string, std::string>{});
    v.kernel_cmdline = j.value("kernel_cmdline", "");
    v.cpu_vulnerabilities = j.value("cpu_vulnerabilities", std::map<std::string, std::string>{});
    if (const auto it = j.find("cpu_layout"); it != j.end() && it->is_object()) v.cpu_layout = it->get<CpuLayout>();
    if (const auto it = j.find("cpu_idle"); it != j.end() && it->is_object()) v.cpu_idle = it->get<CpuIdle>();
    if (const auto it = j.find("tool"); it != j.end() && it->is_object()) it->get_to(v.tool);
    v.virtualization = j.value("virtualization", "");
}

void to_json(Json& j, const ToolInfo& v) {
    j = Json{{"name", v.name}, {"version", v.version}};
    if (!v.commit.empty()) j["commit"] = v.commit;
}

void from_json(const Json& j, ToolInfo& v) {
    v.name = j.value("name", "nicmatrix");
    v.version = j.value("version", "");
    v.commit = j.value("commit", "");
}

void to_json(Json& j, const ResumeInfo& v) { j = Json{{"started", v.started}, {"command", v.command}, {"tool", v.tool}}; }

void from_json(const Json& j, ResumeInfo& v) {
    j.at("started").get_to(v.started);
    v.command = j.value("command", "");
    if (const auto it = j.find("tool"); it != j.end() && it->is_object()) it->get_to(v.tool);
}

void to_json(Json& j, const ResultsFile& v) {
    j = Json{{"schema", v.schema},
             {"tool", v.tool},
             {"run",
              {{"started", v.run.started},
               {"finished", v.run.finished.empty() ? Json(nullptr) : Json(v.run.finished)},
               {"command", v.run.command},
               {"config_file", v.run.config_file},
               {"config", v.run.config},
               {"order", {{"mode", v.run.order.mode}, {"seed", v.run.order.seed ? Json(*v.run.order.seed) : Json(nullptr)}}},
               {"time_budget_s", v.run.time_budget_s ? Json(*v.run.time_budget_s) : Json(nullptr)},
               {"budget_reached", v.run.budget_reached}}},
             {"hosts", {{"local", v.local}, {"remote", v.remote}}},
             {"cells", v.cells}};
    if (!v.run.resumed.empty()) j["run"]["resumed"] = v.run.resumed;
    if (const auto& s = v.run.json_stream) {
        j["run"]["json_stream"] = Json{{"queue_lines", s->queue_lines},
                                       {"written_lines", s->written_lines},
                                       {"dropped_events", s->dropped_events},
                                       {"unwritten_lines", s->unwritten_lines},
                                       {"output_closed", s->output_closed}};
    }
}

void from_json(const Json& j, ResultsFile& v) {
    const auto schema = j.at("schema").get<std::string>();
    if (schema != kResultsSchema) {
        throw usage_error(std::string("/schema: expected \"") + kResultsSchema + "\", got \"" + schema + "\"");
    }
    v.schema = schema;
    j.at("tool").get_to(v.tool);
    const auto& run = j.at("run");
    run.at("started").get_to(v.run.started);
    if (const auto it = run.find("finished"); it != run.end() && it->is_string()) v.run.finished = it->get<std::string>();
    v.run.command = run.value("command", "");
    v.run.config_file = run.value("config_file", "");
    v.run.config = parse_sweep_config(run.at("config"));
    // Before the order was recorded every sweep ran its cells one after the other.
    v.run.order = OrderInfo{};
    if (const auto it = run.find("order"); it != run.end() && it->is_object()) {
        it->at("mode").get_to(v.run.order.mode);
        if (const auto seed = it->find("seed"); seed != it->end() && seed->is_number_unsigned()) v.run.order.seed = seed->get<uint64_t>();
    }
    if (const auto it = run.find("time_budget_s"); it != run.end() && it->is_number()) v.run.time_budget_s = it->get<double>();
    v.run.budget_reached = run.value("budget_reached", false);
    if (const auto it = run.find("resumed"); it != run.end() && it->is_array()) it->get_to(v.run.resumed);
    if (const auto it = run.find("json_stream"); it != run.end() && it->is_object()) {
        JsonStreamStats s;
        s.queue_lines = it->value("queue_lines", uint64_t{0});
        s.written_lines = it->value("written_lines", uint64_t{0});
        s.dropped_events = it->value("dropped_events", uint64_t{0});
        s.unwritten_lines = it->value("unwritten_lines", uint64_t{0});
        s.output_closed = it->value("output_closed", false);
        v.run.json_stream = s;
    }
    j.at("hosts").at("local").get_to(v.local);
    j.at("hosts").at("remote").get_to(v.remote);
    j.at("cells").get_to(v.cells);
}

void to_json(Json& j, const RatioVerdict& v) { j = enum_name(v, kVerdicts); }
void from_json(const Json& j, RatioVerdict& v) { v = enum_value(Node(j, "/verdict"), kVerdicts); }

void to_json(Json& j, const Comparison& v) {
    const auto maybe = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
    Json rows = Json::array();
    for (const auto& r : v.rows) {
        rows.push_back(Json{{"profile", r.profile},
                            {"traffic", r.traffic},
                            {"mtu", r.mtu},
                            {"key_a", r.key_a},
                            {"key_b", r.key_b},
                            {"features_requested", r.features_requested},
                            {"test", r.test},
                            {"status_a", r.status_a},
                            {"status_b", r.status_b},
                            {"a", r.a ? Json(*r.a) : Json(nullptr)},
                            {"b", r.b ? Json(*r.b) : Json(nullptr)},
                            {"precision_met_a", r.precision_met_a ? Json(*r.precision_met_a) : Json(nullptr)},
                            {"precision_met_b", r.precision_met_b ? Json(*r.precision_met_b) : Json(nullptr)},
                            {"disturbed_a", r.disturbed_a},
                            {"disturbed_b", r.disturbed_b},
                            {"ratio", maybe(r.ratio)},
                            {"ratio_ci_low", maybe(r.ratio_ci_low)},
                            {"ratio_ci_high", maybe(r.ratio_ci_high)},
                            {"ratio_ci_confidence", maybe(r.ratio_ci_confidence)},
                            {"verdict", r.verdict},
                            {"verdict_unadjusted", r.verdict_unadjusted},
                            {"significant", r.significant},
                            {"equivalent", r.equivalent},
                            {"p_value", maybe(r.p_value)},
                            {"p_adjusted", maybe(r.p_adjusted)},
                            {"equivalence_p_value", maybe(r.equivalence_p_value)},
                            {"equivalence_p_adjusted", maybe(r.equivalence_p_adjusted)},
                            {"why", r.why}});
    }
    j = Json{{"metric", v.metric},
             {"a", v.label_a},
             {"b", v.label_b},
             {"confidence", v.confidence},
             {"method", "Hodges-Lehmann/Mann-Whitney interval of the ratio of medians, exact, on log values"},
             {"adjustment", enum_name(v.adjustment, kAdjustments)},
             {"tested_cells", v.tested_cells},
             {"margin_pct", maybe(v.margin_pct)},
             {"reference", v.reference.empty() ? Json(nullptr) : Json(v.reference)},
             {"rows", rows},
             {"only_a", v.only_a},
             {"only_b", v.only_b},
             {"host_differences", v.host_differences}};
}

}  // namespace nm
