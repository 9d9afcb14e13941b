#pragma once
// What `nicmatrix serve` allows one client, whatever the client asks: how long a test may run, how long
// its stall timeout may be, how much memory and how many threads it may take, who may connect and how
// many connections each source may hold. A test over a limit is refused at hello with a "limit" error
// that names the limit and the flag that raises it; no client can raise them.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/host/cidr.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

/// The server's limits (serve's flags in parentheses).
struct ServerLimits {
    /// omit + duration of a timed test at most; a byte-count test is ended here (status "limited").
    /// (--max-duration)
    std::chrono::seconds max_duration{300};
    /// The longest stall timeout a client may ask (--max-stall-timeout).
    double max_stall_timeout_s = 60;
    /// Engine buffers the server allocates for one test at most, bytes (--max-test-memory).
    uint64_t max_test_memory_bytes = uint64_t{1} << 30;
    /// Worker threads per direction at most; 0 = the server's cores (--max-threads).
    uint32_t max_threads = 0;
    /// Who may connect; empty = everyone (--allow-from).
    std::vector<Cidr> allow_from;
    /// Connections that have not yet sent their first message, in all (--max-handshakes) and from one
    /// source (--max-handshakes-per-source; see ipv6_source_prefix). At the cap the oldest such
    /// connection is closed.
    uint32_t max_handshakes = 128;
    uint32_t max_handshakes_per_source = 16;
    /// How long a new connection may take to send its first message (a test's authentication included)
    /// (--handshake-timeout).
    std::chrono::milliseconds handshake_timeout{2000};
    /// Settings-control connections (the peer agent's sessions) at once, in all (--max-control) and from
    /// one source (--max-control-per-source); over the cap a new one is refused.
    uint32_t max_control = 64;
    uint32_t max_control_per_source = 8;
    /// What "one source" is for the per-source caps above: an IPv4 address, or an IPv6 block of this many
    /// bits (--ipv6-source-prefix; 128 = one address). A host holds a /64, so counting IPv6 addresses
    /// would let it take every slot.
    unsigned ipv6_source_prefix = 64;
};

/// Bytes of engine buffers the server would allocate for `spec` (resolved): every worker thread of the
/// plan it builds (worker_memory_bytes()).
uint64_t server_test_memory(const TestSpec& spec);

/// Why the server refuses `spec` (resolved with the server's `cores`): every limit it is over, each
/// naming the flag that raises it, e.g. "threads: 256 per direction; this server allows 2 (its cores;
/// raise with serve --max-threads)". nullopt when it is within all of them.
std::optional<std::string> over_server_limits(const TestSpec& spec, const ServerLimits& limits, unsigned cores);

/// "1.5 GiB", "64 MiB", "512 KiB", "100 bytes".
std::string format_bytes(uint64_t bytes);

}  // namespace nm
