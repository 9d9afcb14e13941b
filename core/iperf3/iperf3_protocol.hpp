#pragma once
// iperf3's control protocol, as a stock `iperf3 -s` (3.x) speaks it, for a far end that runs nothing else
// (--peer-kind iperf3). Written from reading iperf3's protocol; pure functions here, the conversation in
// core/iperf3/iperf3_client.cpp.
//
// The conversation, client's view, on one TCP control connection to the server's port:
//   client: the 37-byte cookie (36 characters of [a-z2-7] and a NUL)
//   server: PARAM_EXCHANGE            client: the parameters (4-byte big-endian length, then JSON)
//   server: CREATE_STREAMS            client: one TCP connection per stream to the same port, each
//                                             opening with the cookie (--bidir: the client's streams first)
//   server: TEST_START, TEST_RUNNING  data flows
//   client: TEST_END (its window is over)
//   server: EXCHANGE_RESULTS          client: its results (length + JSON); server: its results
//   server: DISPLAY_RESULTS           client: IPERF_DONE, then closes
// Every state is one signed byte. A server that refuses sends ACCESS_DENIED (busy with another client)
// or SERVER_ERROR followed by its i_errno and errno (4-byte big-endian each). CLIENT_TERMINATE ends a
// test early.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/traffic/traffic_codec.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm::iperf3 {

/// The one-byte states of the control connection.
enum class State : int8_t {
    TestStart = 1,
    TestRunning = 2,
    TestEnd = 4,
    ParamExchange = 9,
    CreateStreams = 10,
    ServerTerminate = 11,
    ClientTerminate = 12,
    ExchangeResults = 13,
    DisplayResults = 14,
    IperfStart = 15,
    IperfDone = 16,
    AccessDenied = -1,
    ServerError = -2,
};

/// "PARAM_EXCHANGE (9)", or "0x7b ('{')" for a byte that is no state (what a JSON server would send).
std::string describe_state_byte(uint8_t byte);

inline constexpr size_t kCookieSize = 37;  ///< 36 characters and the terminating NUL
inline constexpr uint16_t kDefaultPort = 5201;
/// The most a JSON message of the server may be (its results with the server's own output, which grows
/// with streams and seconds); a length above it is refused as not iperf3's.
inline constexpr uint32_t kMaxJsonBytes = 16u << 20;

/// Arrays and objects in a server's message nest at most this deep (iperf3's results with its --json
/// output nest about 6 deep).
inline constexpr size_t kMaxJsonDepth = 32;

/// The JSON of a server's message (`what` names it in errors). Throws nm::Error (Failed) for text that
/// nests deeper than kMaxJsonDepth (counted before parsing) or is not JSON.
Json parse_message(std::string_view text, const std::string& what);

/// A fresh cookie: 36 random characters of iperf3's alphabet and a NUL, kCookieSize bytes.
std::string make_cookie();

/// The 4-byte big-endian length iperf3 puts before a JSON message, and its value.
std::string length_prefix(uint32_t length);
uint32_t read_length(const unsigned char bytes[4]);

/// iperf3's stream id of the engine's data connection `index` (0-based, in connection order): 1, 3, 4,
/// 5, ... (both of iperf3's ends skip 2).
uint32_t stream_id(uint32_t index);

/// Throws nm::Error (Usage) for what a stock iperf3 far end cannot do with this engine: UDP (iperf3's
/// datagrams carry its own header), request/response, a byte count (-n), a server-side CPU list, a
/// profile of the far end. Names the option.
void check_supported(const TestSpec& spec);

/// What the peer is told: whole seconds (iperf3 reads integers). omit_s: the whole seconds of the
/// spec's warm-up; time_s: the rest of the test, rounded up, so that the server's own timer
/// (time + omit + 5 s) never ends a test before the local end does.
struct Told {
    uint32_t omit_s = 0;
    uint32_t time_s = 0;
};
Told told_times(const TestSpec& spec);

/// The parameters message (JSON) for a resolved spec: tcp, omit, time, parallel, reverse/bidirectional,
/// len (the write size, or 128 KiB for whole units), window, MSS, nodelay, congestion, TOS, the rate per
/// stream of a sending server, get_server_output (the server's own output comes back with its results,
/// which is where a server run with --json tells its version), client_version.
Json parameters(const TestSpec& spec, const Told& told, const std::string& client_version);

/// The client's results message from its report: its engine's CPU (cpu_util_* in percent of one core
/// over the window), whether it reports retransmits, and per data connection (in connection order) the
/// bytes it sent or received over its window, with its retransmits where it sent.
Json client_results(const TestSpec& spec, const EndReport& mine);

/// Reads the server's results message: its CPU, per stream its bytes (sent or received, by the stream
/// layout of `spec`), retransmits and window, its congestion control, and its version when its output
/// (server_output_json / server_output_text) carries one. Throws nm::Error (Failed) naming the field of a
/// message that is not iperf3's results (a missing or mistyped field, a stream id it never had).
Iperf3PeerFigures parse_server_results(const Json& results, const TestSpec& spec, const Told& told);

/// The text of a SERVER_ERROR: iperf3's error number (named for the common ones) and the server's errno.
std::string describe_server_error(int32_t i_errno, int32_t sys_errno);

}  // namespace nm::iperf3
