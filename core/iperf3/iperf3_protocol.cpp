#include "core/iperf3/iperf3_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "core/base/error.hpp"
#include "core/control/control_channel.hpp"
#include "core/session/traffic_session.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm::iperf3 {
namespace {

struct StateName {
    int8_t value;
    const char* name;
};

constexpr StateName kStates[] = {
    {1, "TEST_START"},        {2, "TEST_RUNNING"},      {4, "TEST_END"},          {9, "PARAM_EXCHANGE"},   {10, "CREATE_STREAMS"},
    {11, "SERVER_TERMINATE"}, {12, "CLIENT_TERMINATE"}, {13, "EXCHANGE_RESULTS"}, {14, "DISPLAY_RESULTS"}, {15, "IPERF_START"},
    {16, "IPERF_DONE"},       {-1, "ACCESS_DENIED"},    {-2, "SERVER_ERROR"},
};

// iperf3's error numbers a server is likely to send back to a client of ours (iperf_api.h).
constexpr std::pair<int32_t, const char*> kServerErrors[] = {
    {114, "unable to receive parameters from client"},
    {117, "unable to receive results from client"},
    {121, "the server is busy running a test"},
    {122, "unable to set TCP_NODELAY"},
    {123, "unable to set TCP MSS"},
    {124, "unable to set socket buffer size"},
    {125, "unable to set IP TOS"},
    {130, "unable to set socket window size"},
    {134, "unable to set TCP_CONGESTION"},
    {142, "test authorization failed (the server wants a username and password)"},
    {200, "unable to create a new stream"},
    {203, "unable to connect stream"},
    {204, "unable to accept stream connection"},
    {205, "unable to write to stream socket"},
    {206, "unable to read from stream"},
    {207, "stream has closed unexpectedly"},
    {208, "stream has an invalid id"},
};

// A number of a message from outside: finite, not negative, at most `max`; else the field is named.
double number_field(const Json& j, const char* key, const std::string& where) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) throw Error(ErrorKind::Failed, where + ": \"" + key + "\" missing or not a number");
    const double v = it->get<double>();
    if (!std::isfinite(v)) throw Error(ErrorKind::Failed, where + ": \"" + key + "\" is not finite");
    return v;
}

uint64_t count_field(const Json& j, const char* key, const std::string& where) {
    const double v = number_field(j, key, where);
    if (v < 0 || v > 1.8e19) throw Error(ErrorKind::Failed, where + ": \"" + key + "\" out of range");
    return static_cast<uint64_t>(v);
}

std::string text_field(const Json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The version line a server's own output carries: "iperf 3.12" of server_output_json's start.version
// (a server run with --json); a text output tells none.
std::string version_of(const Json& results, std::string& system_info) {
    const auto out = results.find("server_output_json");
    if (out == results.end() || !out->is_object()) return {};
    const auto start = out->find("start");
    if (start == out->end() || !start->is_object()) return {};
    system_info = text_field(*start, "system_info");
    return text_field(*start, "version");
}

}  // namespace

std::string describe_state_byte(uint8_t byte) {
    const auto value = static_cast<int8_t>(byte);
    for (const auto& s : kStates) {
        if (s.value == value) return std::string(s.name) + " (" + std::to_string(value) + ")";
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", byte);
    std::string out = hex;
    if (byte >= 0x20 && byte < 0x7f) out += std::string(" ('") + static_cast<char>(byte) + "')";
    return out;
}

Json parse_message(std::string_view text, const std::string& what) {
    if (!nesting_within(text, kMaxJsonDepth))
        throw Error(ErrorKind::Failed, what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    try {
        return Json::parse(text);
    } catch (const Json::exception& e) {
        throw Error(ErrorKind::Failed, what + " is not JSON: " + e.what());
    }
}

std::string make_cookie() {
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    std::random_device rd;
    std::string cookie(kCookieSize, '\0');
    for (size_t i = 0; i + 1 < kCookieSize; ++i) cookie[i] = kAlphabet[rd() % 32];
    return cookie;
}

std::string length_prefix(uint32_t length) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i) out[static_cast<size_t>(i)] = static_cast<char>((length >> (24 - 8 * i)) & 0xff);
    return out;
}

uint32_t read_length(const unsigned char bytes[4]) {
    return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | uint32_t{bytes[3]};
}

uint32_t stream_id(uint32_t index) { return index == 0 ? 1 : index + 2; }

void check_supported(const TestSpec& spec) {
    const std::string why = " with --peer-kind iperf3";
    if (spec.protocol == Protocol::Udp) {
        throw usage_error("-u (UDP): not" + why +
                          ": a stock iperf3 counts loss and jitter from its own datagram header, which this engine does not write; use TCP");
    }
    if (spec.pattern != TrafficPattern::Stream) throw usage_error("--rr/--crr: not" + why + ": iperf3 has no request/response test");
    if (spec.bytes > 0) throw usage_error("-n (a byte count): not" + why + "; give a duration (-t)");
    if (!spec.server_cpus.empty()) throw usage_error("-A SERVER_CPUS: not" + why + ": pin the far end with its own `iperf3 -s -A N`");
    if (spec.profile) throw usage_error("--profile: not" + why + ": the far end cannot be profiled through iperf3");
    // -Z, --skip-rx-copy and --rx-spin act on this end's sockets only; iperf3 is not told of them.
}

Told told_times(const TestSpec& spec) {
    Told t;
    t.omit_s = static_cast<uint32_t>(std::floor(spec.omit_s));
    const double rest = spec.omit_s + spec.duration_s - t.omit_s;
    t.time_s = static_cast<uint32_t>(std::max(1.0, std::ceil(rest - 1e-9)));
    return t;
}

Json parameters(const TestSpec& spec, const Told& told, const std::string& client_version) {
    const uint32_t n = std::max<uint32_t>(1, spec.streams);
    Json p{{"tcp", true},
           {"omit", told.omit_s},
           {"time", told.time_s},
           {"num", 0},
           {"blockcount", 0},
           {"parallel", n},
           {"len", spec.write_size > 0 ? spec.write_size : kDefaultTcpWrite},
           {"pacing_timer", 1000},
           {"get_server_output", 1},
           {"client_version", client_version}};
    if (spec.direction == Direction::Reverse) p["reverse"] = 1;
    if (spec.direction == Direction::Bidir) p["bidirectional"] = true;
    if (spec.window > 0) p["window"] = spec.window;
    if (spec.socket.mss > 0) p["MSS"] = spec.socket.mss;
    if (spec.socket.nodelay) p["nodelay"] = true;
    if (!spec.socket.congestion.empty()) p["congestion"] = spec.socket.congestion;
    if (spec.socket.dscp >= 0) p["TOS"] = spec.socket.dscp << 2;
    // iperf3's rate is per stream, and only a sending server uses it (this end paces its own senders).
    if (spec.rate_bps > 0 && spec.direction != Direction::Forward) p["bandwidth"] = static_cast<uint64_t>(spec.rate_bps / n);
    return p;
}

Json client_results(const TestSpec& spec, const EndReport& mine) {
    const StreamLayout layout = StreamLayout::of(spec);
    const auto& m = mine.measurement;
    const double d = m.duration_s;
    const auto pct = [&](double s) { return d > 0 ? s * 100 / d : 0.0; };
    std::map<uint32_t, const StreamResult*> sent, received;
    for (const auto& s : mine.sent) sent[s.id] = &s;
    for (const auto& s : mine.received) received[s.id] = &s;
    Json streams = Json::array();
    for (uint32_t k = 0; k < layout.data_connections(); ++k) {
        const bool ours = layout.sender_of(k) == End::Client;
        const auto& from = ours ? sent : received;
        const auto it = from.find(k);
        const uint64_t bytes = it != from.end() ? it->second->bytes : 0;
        const int64_t retransmits = ours && it != from.end() ? static_cast<int64_t>(it->second->retransmits) : -1;
        streams.push_back(Json{{"id", stream_id(k)},
                               {"bytes", bytes},
                               {"retransmits", retransmits},
                               {"jitter", 0},
                               {"errors", 0},
                               {"packets", 0},
                               {"start_time", 0},
                               {"end_time", d}});
    }
    Json r{{"cpu_util_total", pct(m.cpu.user_s + m.cpu.sys_s)},
           {"cpu_util_user", pct(m.cpu.user_s)},
           {"cpu_util_system", pct(m.cpu.sys_s)},
           {"sender_has_retransmits", layout.sends(End::Client) ? 1 : 0},
           {"streams", streams}};
    if (!m.socket.congestion.empty()) r["congestion_used"] = m.socket.congestion;
    return r;
}

Iperf3PeerFigures parse_server_results(const Json& results, const TestSpec& spec, const Told& told) {
    const std::string where = "the iperf3 server's results";
    if (!results.is_object()) throw Error(ErrorKind::Failed, where + ": not a JSON object");
    Iperf3PeerFigures f;
    f.omit_s = told.omit_s;
    f.time_s = told.time_s;
    f.cpu_total_pct = number_field(results, "cpu_util_total", where);
    f.cpu_user_pct = number_field(results, "cpu_util_user", where);
    f.cpu_system_pct = number_field(results, "cpu_util_system", where);
    f.congestion = text_field(results, "congestion_used");
    f.version = version_of(results, f.system_info);
    const auto streams = results.find("streams");
    if (streams == results.end() || !streams->is_array()) throw Error(ErrorKind::Failed, where + ": \"streams\" missing or not an array");
    const StreamLayout layout = StreamLayout::of(spec);
    if (streams->size() != layout.data_connections()) {
        throw Error(ErrorKind::Failed,
                    where + ": " + std::to_string(streams->size()) + " streams, but the test has " + std::to_string(layout.data_connections()));
    }
    std::map<uint32_t, uint32_t> index_of;
    for (uint32_t k = 0; k < layout.data_connections(); ++k) index_of[stream_id(k)] = k;
    for (const auto& s : *streams) {
        const std::string at = where + ", a stream";
        if (!s.is_object()) throw Error(ErrorKind::Failed, at + ": not an object");
        Iperf3StreamFigures st;
        const uint64_t id = count_field(s, "id", at);
        const auto it = index_of.find(static_cast<uint32_t>(std::min<uint64_t>(id, UINT32_MAX)));
        if (it == index_of.end()) throw Error(ErrorKind::Failed, at + ": id " + std::to_string(id) + " is none of the test's streams");
        st.id = it->first;
        st.stream = it->second;
        st.peer_sent = layout.sender_of(st.stream) == End::Server;
        st.bytes = count_field(s, "bytes", at);
        // iperf3 writes -1 (as a huge unsigned number) for "not measured".
        const double retr = number_field(s, "retransmits", at);
        if (st.peer_sent && retr >= 0 && retr < 9.2e18) st.retransmits = static_cast<uint64_t>(retr);
        const double start = s.contains("start_time") ? number_field(s, "start_time", at) : 0;
        const double end = s.contains("end_time") ? number_field(s, "end_time", at) : 0;
        st.duration_s = std::max(0.0, end - start);
        f.duration_s = std::max(f.duration_s, st.duration_s);
        (st.peer_sent ? f.bytes_sent : f.bytes_received) += st.bytes;
        if (st.retransmits) f.retransmits = f.retransmits.value_or(0) + *st.retransmits;
        f.streams.push_back(st);
    }
    std::sort(f.streams.begin(), f.streams.end(), [](const auto& a, const auto& b) { return a.stream < b.stream; });
    f.received_bps = f.duration_s > 0 ? static_cast<double>(f.bytes_received) * 8 / f.duration_s : 0;
    f.sent_bps = f.duration_s > 0 ? static_cast<double>(f.bytes_sent) * 8 / f.duration_s : 0;
    return f;
}

std::string describe_server_error(int32_t i_errno, int32_t sys_errno) {
    std::string text = "iperf3 error " + std::to_string(i_errno);
    for (const auto& [number, name] : kServerErrors) {
        if (number == i_errno) text += " (" + std::string(name) + ")";
    }
    if (sys_errno > 0) text += ": " + std::string(std::strerror(sys_errno));
    return text;
}

}  // namespace nm::iperf3
