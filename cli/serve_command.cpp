// `nicmatrix serve`: the traffic server and peer agent, its limits as flags, and one line per test it served.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_server.hpp"
#include "cli/commands.hpp"
#include "cli/human_units.hpp"
#include "cli/scaled_number.hpp"
#include "core/base/error.hpp"
#include "core/host/cidr.hpp"
#include "core/session/traffic_server.hpp"
#include "core/traffic/traffic_types.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"

namespace nm::cli {
namespace {

void print_server_record(const ServerTestRecord& t, bool json) {
    if (json) {
        std::cout << Json{{"client", t.client}, {"spec", t.spec}, {"report", t.report}}.dump() << std::endl;
        return;
    }
    const auto& r = t.report;
    const double d = r.measurement.duration_s;
    std::cout << "test from " << t.client << ": " << Json(t.spec.protocol).get<std::string>() << " ";
    if (r.rr) {
        std::cout << Json(t.spec.pattern).get<std::string>() << ", " << t.spec.streams << " flow(s): answered " << r.rr->transactions
                  << " requests = " << fixed(d > 0 ? static_cast<double>(r.rr->transactions) / d : 0, 1) << " trans/s";
    } else {
        std::cout << Json(t.spec.direction).get<std::string>() << ", " << t.spec.streams << " stream(s): ";
        if (r.received_bytes > 0 || r.sent_bytes == 0) {
            std::cout << "received " << human_bytes(static_cast<double>(r.received_bytes)) << " = "
                      << human_bits(d > 0 ? static_cast<double>(r.received_bytes) * 8 / d : 0);
        }
        if (r.sent_bytes > 0) {
            std::cout << (r.received_bytes > 0 ? ", " : "") << "sent " << human_bytes(static_cast<double>(r.sent_bytes)) << " = "
                      << human_bits(d > 0 ? static_cast<double>(r.sent_bytes) * 8 / d : 0);
        }
    }
    std::cout << " in " << fixed(d, 2) << " s; cpu user " << fixed(r.measurement.cpu.user_s, 2) << " s sys " << fixed(r.measurement.cpu.sys_s, 2)
              << " s" << (r.measurement.profile ? "; profile " + std::to_string(r.measurement.profile->samples) + " samples" : std::string())
              << (r.profile_shared ? "; profiled by the client (same host)" : "") << "; status " << Json(r.status).get<std::string>()
              << (r.error.empty() ? "" : " (" + r.error + ")") << std::endl;
}

const char* const kLimitsGroup = "Limits (no client can raise them)";

// `serve`'s limits (core/session/server_limits.hpp), as flags; server_limits() turns them into ServerLimits.
struct ServerLimitFlags {
    double max_duration_s = 300;
    double max_stall_timeout_s = 60;
    std::string max_test_memory = "1G";
    uint32_t max_threads = 0;
    std::vector<std::string> allow_from;
    uint32_t max_handshakes = 128;
    uint32_t max_handshakes_per_source = 16;
    double handshake_timeout_s = 2;
    uint32_t max_control = 64;
    uint32_t max_control_per_source = 8;
    unsigned ipv6_source_prefix = 64;
};

// A limit flag: in the limits group, its default shown in --help, inside `range`.
template <typename T>
void add_limit_flag(CLI::App& serve, const std::string& name, T& value, const std::string& help, const CLI::Validator& range) {
    serve.add_option(name, value, help)->check(range)->capture_default_str()->group(kLimitsGroup);
}

void add_server_limit_flags(CLI::App& serve, ServerLimitFlags& f) {
    add_limit_flag(serve, "--max-duration", f.max_duration_s,
                   "Seconds a test may last (omit included); longer timed tests are refused at hello, a byte count (-n) is "
                   "ended there with status limited",
                   CLI::Range(1.0, 90000.0));
    add_limit_flag(serve, "--max-stall-timeout", f.max_stall_timeout_s, "Longest stall timeout (run --stall-timeout) a client may ask, seconds",
                   CLI::Range(0.1, 3600.0));
    serve
        .add_option("--max-test-memory", f.max_test_memory,
                    "Engine buffers one test may make the server allocate (streams x threads x write size), K/M/G suffixes")
        ->capture_default_str()
        ->group(kLimitsGroup);
    serve.add_option("--max-threads", f.max_threads, "Worker threads per direction a test may use (default: the server's cores)")
        ->check(CLI::Range(1, 256))
        ->group(kLimitsGroup);
    serve
        .add_option("--allow-from", f.allow_from,
                    "Accept connections only from these addresses or CIDR blocks (IPv4 and IPv6, repeatable; default: any)")
        ->group(kLimitsGroup);
    const CLI::Range connections(1, 100000);
    add_limit_flag(serve, "--max-handshakes", f.max_handshakes,
                   "Connections that have not sent their first message yet, in all; at the cap the oldest is closed", connections);
    add_limit_flag(serve, "--max-handshakes-per-source", f.max_handshakes_per_source, "The same, per source address", connections);
    add_limit_flag(serve, "--handshake-timeout", f.handshake_timeout_s,
                   "Seconds a new connection has to send its first message (and, with --key-file, a test its proof)", CLI::Range(0.1, 60.0));
    add_limit_flag(serve, "--max-control", f.max_control, "Settings-control connections (peer agent sessions) at once, in all", connections);
    add_limit_flag(serve, "--max-control-per-source", f.max_control_per_source, "The same, per source address", connections);
    add_limit_flag(serve, "--ipv6-source-prefix", f.ipv6_source_prefix,
                   "For the per-source caps, IPv6 clients count by this prefix (one host holds a /64; 128 = per address); "
                   "IPv4 clients count by address",
                   CLI::Range(1, 128));
}

ServerLimits server_limits(const ServerLimitFlags& f) {
    ServerLimits l;
    l.max_duration = std::chrono::seconds(static_cast<int64_t>(std::ceil(f.max_duration_s)));
    l.max_stall_timeout_s = f.max_stall_timeout_s;
    const double memory = parse_scaled(f.max_test_memory, "--max-test-memory", true);
    if (memory < 1024 * 1024 || memory > 1e15) throw usage_error("--max-test-memory: \"" + f.max_test_memory + "\": give 1M..1000T");
    l.max_test_memory_bytes = static_cast<uint64_t>(memory);
    l.max_threads = f.max_threads;
    for (const auto& a : f.allow_from) l.allow_from.push_back(Cidr::parse(a));
    l.max_handshakes = f.max_handshakes;
    l.max_handshakes_per_source = f.max_handshakes_per_source;
    l.handshake_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.handshake_timeout_s * 1000));
    l.max_control = f.max_control;
    l.max_control_per_source = f.max_control_per_source;
    l.ipv6_source_prefix = f.ipv6_source_prefix;
    return l;
}

struct ServeOptions {
    std::string bind;
    uint16_t port = kDefaultPort;
    bool once = false;
    bool json = false;
    bool allow_profile = false;
    std::vector<std::string> allow_control;
    std::vector<std::string> allow_kinds;
    std::string key_file;
    std::string journal = FileSettingsJournal::default_agent_path();
    double heartbeat_timeout_s = 10;
    ServerLimitFlags limits;
};

// The flags of the server itself and of the agent's settings control (the limits: add_server_limit_flags).
void add_serve_flags(CLI::App& serve, ServeOptions& so) {
    serve.add_option("--bind", so.bind, "Local address to listen on (default: every address, IPv4 and IPv6)");
    serve.add_option("-p,--port", so.port, "TCP port for control and data (UDP data uses the same number when free)")->capture_default_str();
    serve.add_flag("-1,--once", so.once, "Exit after one test");
    serve.add_flag("--json", so.json, "Print one JSON line per test (the server's own measurements)");
    serve.add_option("--allow-control", so.allow_control,
                     "Let an authenticated client change settings of this interface (repeatable): the kinds --allow-kinds names "
                     "(by default the MTU, the offloads a sweep sweeps - checksums, sg, tso/gso and other segmentation offloads, "
                     "gro, lro - channels, rings, coalescing, RPS, XPS, NAPI and the root qdisc); needs --key-file");
    std::string kinds_help =
        "Kinds of setting an authenticated client may change on the --allow-control interfaces (comma list, repeatable; "
        "\"default\" = the kinds marked *, \"all\" = every kind; default: the kinds marked *). Kinds:";
    for (const auto& k : kAgentSettingKinds) {
        kinds_help += std::string("\n  ") + std::string(k.name) + (k.by_default ? " *" : "") + " - " + std::string(k.what);
    }
    serve.add_option("--allow-kinds", so.allow_kinds, kinds_help)->delimiter(',');
    serve.add_option("--key-file", so.key_file,
                     "Pre-shared key that clients must prove they hold, for settings changes and for every test (default "
                     "$NICMATRIX_KEY_FILE): a regular file of 32 to 4096 bytes, readable by its owner only (head -c 32 "
                     "/dev/urandom > key; chmod 600 key); without one, settings changes are refused and tests need no key");
    serve.add_flag("--allow-profile", so.allow_profile,
                   "Sample this host's kernel for a client's `run --profile` without the key (a profile shows what runs "
                   "here); with --key-file, clients holding the key may always ask for one");
    serve
        .add_option("--journal", so.journal,
                    "Where the agent journals the originals of the interfaces it changes (`nicmatrix restore` also looks "
                    "at the default); at start it restores the entries of an agent that is gone, never those of one that runs")
        ->capture_default_str();
    serve
        .add_option("--heartbeat-timeout", so.heartbeat_timeout_s,
                    "Seconds without a message from the controlling client after which the agent restores its interfaces "
                    "(never inside a change's confirm window: an unconfirmed change is rolled back first)")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
}

void serve_command(const ServeOptions& so, std::stop_token stop) {
    std::mutex print;
    AgentServerOptions opts;
    opts.server.bind = so.bind;
    opts.server.port = so.port;
    opts.server.once = so.once;
    opts.server.limits = server_limits(so.limits);
    opts.server.allow_profile = so.allow_profile;
    const bool json = so.json;
    opts.server.on_test = [&print, json](const ServerTestRecord& t) {
        std::lock_guard lock(print);
        print_server_record(t, json);
    };
    opts.allow_control = so.allow_control;
    opts.allow_kinds = so.allow_kinds;
    opts.key_file = so.key_file;
    opts.journal = so.journal;
    opts.heartbeat_timeout = std::chrono::milliseconds(static_cast<int64_t>(so.heartbeat_timeout_s * 1000));
    opts.log = [](const std::string& line) { std::cerr << "nicmatrix serve: " << line << std::endl; };
    AgentServer server(std::move(opts));
    if (json) {
        std::cout << Json{{"listening", server.port()}}.dump() << std::endl;
    } else {
        std::cout << "Server listening on port " << server.port() << std::endl;
    }
    server.serve(stop);
}

}  // namespace

void add_serve_command(CLI::App& app, std::stop_token stop) {
    auto so = std::make_shared<ServeOptions>();
    auto* serve = app.add_subcommand("serve", "Run the traffic server: answers `nicmatrix run` clients, one test at a time");
    add_serve_flags(*serve, *so);
    add_server_limit_flags(*serve, so->limits);
    serve->callback([so, stop] { serve_command(*so, stop); });
}

}  // namespace nm::cli
