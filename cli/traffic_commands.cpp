// `nicmatrix serve` and `nicmatrix run`: flags in, a TrafficServer / TrafficClient built, results printed.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/rfc2544.hpp"
#include "core/traffic_client.hpp"
#include "core/traffic_server.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "matrix/peer_agent.hpp"
#include "matrix/peer_auth.hpp"
#include "matrix/peer_client.hpp"
#include "matrix/frame_table.hpp"
#include "matrix/sweep_stream.hpp"

namespace nm::cli {
namespace {

// "100M" -> 100e6 (rates: powers of 1000) or 100 * 2^20 (sizes: powers of 1024).
double parse_scaled(const std::string& text, const std::string& flag, bool binary) {
    if (text.empty()) throw usage_error(flag + ": empty value");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw usage_error(flag + ": \"" + text + "\" is not a number");
    }
    const std::string suffix = text.substr(used);
    const double k = binary ? 1024.0 : 1000.0;
    double scale = 1;
    if (suffix == "k" || suffix == "K") scale = k;
    else if (suffix == "m" || suffix == "M") scale = k * k;
    else if (suffix == "g" || suffix == "G") scale = k * k * k;
    else if (!suffix.empty()) throw usage_error(flag + ": \"" + text + "\": unknown suffix (use K, M or G)");
    if (!(v >= 0) || !std::isfinite(v)) throw usage_error(flag + ": \"" + text + "\" must be >= 0");
    return v * scale;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string human_bytes(double b) {
    const char* units[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
    int u = 0;
    while (b >= 1024 * 0.995 && u < 4) {
        b /= 1024;
        ++u;
    }
    return fixed(b, b < 10 ? 2 : (b < 100 ? 1 : 0)) + " " + units[u];
}

std::string human_bits(double bps) {
    const char* units[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
    int u = 0;
    while (bps >= 1000 && u < 4) {
        bps /= 1000;
        ++u;
    }
    return fixed(bps, bps < 10 ? 2 : (bps < 100 ? 1 : 0)) + " " + units[u];
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    return s;
}

const char* arrow(Direction d) { return d == Direction::Reverse ? "<-" : "->"; }

std::string cpu_line(const char* role, const char* who, const EndMeasurement& m) {
    std::ostringstream o;
    o << "CPU " << role << " (" << who << (m.iface.empty() ? "" : ", " + m.iface) << "): user " << fixed(m.cpu.user_s, 2)
      << " s  sys " << fixed(m.cpu.sys_s, 2) << " s  util " << fixed(m.cpu.util_pct, 1) << "%  | system busy "
      << fixed(m.system.busy_pct, 1) << "%  usr " << fixed(m.system.user_pct, 1) << "%  sys " << fixed(m.system.sys_pct, 1)
      << "%  irq " << fixed(m.system.irq_pct, 1) << "%  softirq " << fixed(m.system.softirq_pct, 1) << "%";
    return o.str();
}

void print_result(const RunResult& r, std::ostream& o) {
    const bool udp = r.spec.protocol == Protocol::Udp;
    const std::string span = "0.00-" + fixed(r.duration_s, 2) + " sec";
    if (!r.intervals.empty()) {
        o << "Intervals (receiver):\n";
        for (const auto& iv : r.intervals) {
            o << "[SUM] " << pad(fixed(iv.start_s, 2), 6) << "-" << fixed(iv.end_s, 2) << " sec  " << pad(human_bytes(static_cast<double>(iv.bytes)), 12)
              << "  " << pad(human_bits(iv.throughput_bps), 15);
            if (udp) o << "  " << pad(fixed(iv.packets_per_s, 0), 10) << " datagrams/s";
            o << '\n';
        }
    }
    if (udp) {
        o << "[ ID] Dir Interval           Transfer       Bitrate          Datagrams/s  Lost/Sent            Jitter\n";
    } else {
        o << "[ ID] Dir Interval           Transfer       Bitrate          Retr   Cwnd     RTT        PMTU\n";
    }
    for (const auto& s : r.streams) {
        o << "[" << pad(std::to_string(s.id), 3) << "] " << arrow(s.direction) << "  " << span << "  "
          << pad(human_bytes(static_cast<double>(s.bytes)), 12) << "  " << pad(human_bits(s.throughput_bps), 15);
        if (udp && s.loss) {
            const double pps = r.duration_s > 0 ? static_cast<double>(s.packets) / r.duration_s : 0;
            o << "  " << pad(fixed(pps, 0), 11) << "  " << pad(std::to_string(s.loss->lost) + "/" + std::to_string(s.loss->sent), 18)
              << " (" << fixed(s.loss->percent, 2) << "%)  " << fixed(s.loss->jitter_ms, 3) << " ms";
        } else if (!udp) {
            o << "  " << pad(std::to_string(s.retransmits), 5) << "  " << pad(std::to_string(s.cwnd), 5) << " seg  " << pad(fixed(s.rtt_us, 0), 6)
              << " us  " << pad(std::to_string(s.pmtu), 6);
        }
        o << '\n';
    }
    o << "[SUM] " << (r.spec.direction == Direction::Bidir ? "<>" : arrow(r.spec.direction)) << "  " << span << "  "
      << pad(human_bytes(static_cast<double>(r.bytes)), 12) << "  " << pad(human_bits(r.throughput_bps), 15);
    if (udp) {
        o << "  " << pad(fixed(r.packets_per_s, 0), 11) << " datagrams/s";
    } else {
        o << "  " << pad(std::to_string(r.tcp_retransmits), 5) << " retransmits";
    }
    o << '\n';
    if (r.loss) {
        o << "Loss: " << r.loss->lost << "/" << r.loss->sent << " (" << fixed(r.loss->percent, 3) << "%)  received "
          << r.loss->received << "  duplicates " << r.loss->duplicates << "  reordered " << r.loss->reordered << "  jitter "
          << fixed(r.loss->jitter_ms, 3) << " ms\n";
    }
    const bool reverse = r.spec.direction == Direction::Reverse;
    o << cpu_line("sender  ", reverse ? "server" : "client", r.sender) << '\n';
    o << cpu_line("receiver", reverse ? "client" : "server", r.receiver) << '\n';
    o << "I/O: " << r.io_calls << " receive calls, " << fixed(r.calls_per_s, 0) << " calls/s, " << fixed(r.ms_per_call, 4)
      << " ms/call; service demand " << fixed(r.service_demand_us_per_kb, 3) << " us/KB (both ends)\n";
    // The cross-check: what the receiving interface saw next to what the engine counted into it (for
    // --bidir the server's interface and the client-to-server streams).
    const EndMeasurement& rx = r.receiver;
    uint64_t engine_bytes = 0, engine_packets = 0;
    for (const auto& s : r.streams) {
        if (r.spec.direction == Direction::Bidir && s.direction != Direction::Forward) continue;
        engine_bytes += s.bytes;
        engine_packets += s.packets;
    }
    if (!rx.iface.empty()) {
        o << "NIC " << rx.iface << " (receiver) rx: " << r.receiver_rx_bytes << " bytes, " << r.receiver_rx_packets
          << " packets; engine counted " << engine_bytes << " payload bytes" << (udp ? ", " + std::to_string(engine_packets) + " datagrams" : std::string())
          << "; softnet processed " << rx.napi.processed << ", dropped " << rx.napi.dropped << ", squeezed " << rx.napi.time_squeeze << '\n';
    }
    if (r.status != RunStatus::Ok) o << "status: " << Json(r.status).get<std::string>() << ": " << r.error << '\n';
}

void print_server_record(const ServerTestRecord& t, bool json) {
    if (json) {
        std::cout << Json{{"client", t.client}, {"spec", t.spec}, {"report", t.report}}.dump() << std::endl;
        return;
    }
    const auto& r = t.report;
    const double d = r.measurement.duration_s;
    std::cout << "test from " << t.client << ": " << Json(t.spec.protocol).get<std::string>() << " "
              << Json(t.spec.direction).get<std::string>() << ", " << t.spec.streams << " stream(s): ";
    if (r.received_bytes > 0 || r.sent_bytes == 0) {
        std::cout << "received " << human_bytes(static_cast<double>(r.received_bytes)) << " = "
                  << human_bits(d > 0 ? static_cast<double>(r.received_bytes) * 8 / d : 0);
    }
    if (r.sent_bytes > 0) {
        std::cout << (r.received_bytes > 0 ? ", " : "") << "sent " << human_bytes(static_cast<double>(r.sent_bytes)) << " = "
                  << human_bits(d > 0 ? static_cast<double>(r.sent_bytes) * 8 / d : 0);
    }
    std::cout << " in " << fixed(d, 2) << " s; cpu user " << fixed(r.measurement.cpu.user_s, 2) << " s sys "
              << fixed(r.measurement.cpu.sys_s, 2) << " s; status " << Json(r.status).get<std::string>()
              << (r.error.empty() ? "" : " (" + r.error + ")") << std::endl;
}

// Splits "64,128,imix" (imix:64x7/594x4 uses '/' between shares on the command line, where ',' separates sizes).
std::vector<std::string> split_frames(const std::string& text) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, ',')) {
        std::replace(item.begin(), item.end(), '/', ',');
        if (item.empty()) throw usage_error("--frames: empty frame size in \"" + text + "\"");
        out.push_back(item);
    }
    return out;
}

template <typename Options>
void run_rfc2544_command(const Options& ro, std::stop_token stop) {
    Rfc2544Spec table = ro.table;
    if (!ro.frames.empty()) table.frames = split_frames(ro.frames);
    if (!ro.line_rate.empty()) table.line_rate_bps = parse_scaled(ro.line_rate, "--line-rate", false);
    table.streams = ro.spec.streams;
    if (ro.udp || ro.reverse || ro.bidir || !ro.rate.empty() || !ro.pps.empty() || !ro.length.empty() || !ro.bytes.empty()) {
        throw usage_error("--rfc2544: sets its own UDP rate, sizes and direction; drop -u, -R, --bidir, -b, --pps, -l, -n");
    }
    validate_rfc2544(table);
    TestSpec base = ro.spec;
    if (!ro.window.empty()) base.window = static_cast<uint32_t>(parse_scaled(ro.window, "--window", true));
    const std::string iface = sending_iface(base);
    base.iface = iface;
    std::optional<double> link_bps;
    std::map<std::string, uint64_t> coalesce;
    if (!iface.empty()) {
        try {
            NetlinkDeviceControl device;
            const LinkState state = device.read(iface);
            if (state.speed_mbps) link_bps = *state.speed_mbps * 1e6;
            coalesce = state.coalesce;
        } catch (const Error&) {  // NOLINT(bugprone-empty-catch): no speed known; --line-rate is then required
        }
    }
    if (!ro.json) {
        std::cout << "RFC 2544 throughput to " << base.host << ":" << base.port << " from " << (iface.empty() ? "?" : iface) << std::endl;
    }
    TrafficClient client;
    const auto on_row = [&ro](const FrameRow& row) {
        if (ro.json) return;
        std::cout << "  " << row.frame << ": " << (row.found ? fixed(row.throughput_fps, 0) + " frames/s" : std::string("no rate passed"))
                  << " after " << row.trials << " trials" << (row.error.empty() ? "" : " (" + row.error + ")") << std::endl;
    };
    Rfc2544Result result = run_rfc2544(client, base, table, link_bps, stop, on_row);
    result.interfaces.push_back({"", iface, coalesce});
    if (ro.json) {
        std::cout << Json(result).dump(2) << '\n';
    } else {
        std::cout << '\n' << render_frame_table(build_frame_table(result), TableFormat::Text);
    }
    if (result.interrupted) throw Error(ErrorKind::Failed, "rfc2544 interrupted");
}

}  // namespace

void add_traffic_commands(CLI::App& app, std::stop_token stop) {
    struct ServeOptions {
        std::string bind;
        uint16_t port = kDefaultPort;
        bool once = false;
        bool json = false;
        std::vector<std::string> allow_control;
        std::string key_file;
        std::string journal = FileSettingsJournal::default_agent_path();
        double heartbeat_timeout_s = 10;
    };
    auto so = std::make_shared<ServeOptions>();
    auto* serve = app.add_subcommand("serve", "Run the traffic server: answers `nicmatrix run` clients, one test at a time");
    serve->add_option("--bind", so->bind, "Local address to listen on (default: every address, IPv4 and IPv6)");
    serve->add_option("-p,--port", so->port, "TCP port for control and data (UDP data uses the same number when free)")
        ->capture_default_str();
    serve->add_flag("-1,--once", so->once, "Exit after one test");
    serve->add_flag("--json", so->json, "Print one JSON line per test (the server's own measurements)");
    serve->add_option("--allow-control", so->allow_control,
                      "Let an authenticated client change MTU and offloads on this interface (repeatable); needs --key-file");
    serve->add_option("--key-file", so->key_file,
                      "Pre-shared key (at least 16 bytes; head -c 32 /dev/urandom > key) that clients must prove they hold "
                      "(default $NICMATRIX_KEY_FILE); without one, settings changes are refused");
    serve->add_option("--journal", so->journal,
                      "Where the agent journals the originals of the interfaces it changes (`nicmatrix restore` also looks "
                      "at the default); at start it restores the entries of an agent that is gone, never those of one that runs")
        ->capture_default_str();
    serve->add_option("--heartbeat-timeout", so->heartbeat_timeout_s,
                      "Seconds without a message from the controlling client after which the agent restores its interfaces")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    serve->callback([so, stop] {
        std::mutex print;
        ServerOptions opts;
        opts.bind = so->bind;
        opts.port = so->port;
        opts.once = so->once;
        const bool json = so->json;
        opts.on_test = [&print, json](const ServerTestRecord& t) {
            std::lock_guard lock(print);
            print_server_record(t, json);
        };
        const auto log = [](const std::string& line) { std::cerr << "nicmatrix serve: " << line << std::endl; };
        opts.on_refused = log;

        // The settings control (the peer agent): it journals before its first change and restores a
        // journal a crashed agent left before serving anyone.
        PeerAgentOptions agent_opts;
        agent_opts.allowed.insert(so->allow_control.begin(), so->allow_control.end());
        if (const auto key_file = key_file_from(so->key_file); !key_file.empty()) agent_opts.key = load_key(key_file);
        agent_opts.heartbeat_timeout = std::chrono::milliseconds(static_cast<int64_t>(so->heartbeat_timeout_s * 1000));
        agent_opts.log = log;
        NetlinkDeviceControl device;
        for (const auto& iface : agent_opts.allowed) {
            try {
                device.read(iface);
            } catch (const Error& e) {
                throw usage_error("--allow-control " + iface + ": " + e.what());
            }
        }
        // The journal is touched (its directory made, its file read) only by an agent that may change
        // settings; it creates what it needs and reports problems as nm::Error.
        FileSettingsJournal journal(so->journal);
        PeerAgent agent(device, journal, agent_opts);
        const auto caps = agent.capabilities();
        if (caps.control) {
            // Entries of an agent that is gone (crashed, killed) are restored; those of one that still
            // runs (another agent on this journal) are its own and left alone. Nothing serves yet.
            for (const auto& r : journal.restore(RestoreOptions{})) {
                log(r.action == JournalAction::Restored ? "restored " + r.ifname + " from the journal a previous agent left" +
                                                              (r.note.empty() ? "" : " (" + r.note + ")")
                                                        : r.ifname + ": " + r.note);
            }
        }
        if (caps.control) {
            std::string list;
            for (const auto& i : caps.interfaces) list += (list.empty() ? "" : ", ") + i;
            log("settings control allowed on " + list + " for clients holding the key");
        } else {
            log("settings changes refused: " + caps.why + "; traffic tests are served");
        }
        opts.control = &agent;
        TrafficServer server(opts);
        if (json) {
            std::cout << Json{{"listening", server.port()}}.dump() << std::endl;
        } else {
            std::cout << "Server listening on port " << server.port() << std::endl;
        }
        server.serve(stop);
        for (const auto& r : agent.restore_all()) log("restored " + r.ifname + " on stop");
    });

    struct RunOptions {
        TestSpec spec;
        std::string rate, pps, length, window, bytes, key_file;
        bool udp = false, reverse = false, bidir = false, json = false, json_stream = false;
        bool rfc2544 = false;
        std::string frames, line_rate;
        Rfc2544Spec table;
    };
    auto ro = std::make_shared<RunOptions>();
    auto* run = app.add_subcommand("run", "Run one test against a `nicmatrix serve` (iperf-like flags)");
    run->add_option("-c,--client", ro->spec.host, "Server address or name")->required();
    run->add_option("-p,--port", ro->spec.port, "Server port")->capture_default_str();
    run->add_option("-B,--bind", ro->spec.bind, "Local address to connect from");
    run->add_option("-P,--parallel", ro->spec.streams,
                    "Streams (default: 1; unlimited UDP: one per core, each with its own sender thread)");
    run->add_option("--threads", ro->spec.threads, "Worker threads per direction (default: one per core, at most one per stream)");
    run->add_option("-l,--length", ro->length, "TCP write size or UDP payload, K/M suffixes (default 128K TCP, 1472 UDP; UDP 18..65507)");
    run->add_option("-w,--window", ro->window, "Socket buffer size SO_SNDBUF/SO_RCVBUF, K/M suffixes (default: kernel autotuning)");
    run->add_option("-t,--time", ro->spec.duration_s, "Measured seconds (after --omit)")->capture_default_str();
    run->add_option("-n,--bytes", ro->bytes, "Bytes to send instead of a duration (ttcp's buflen x nbuf), K/M/G suffixes");
    run->add_flag("-R,--reverse", ro->reverse, "Server sends, client receives");
    run->add_flag("--bidir", ro->bidir, "Both directions at once");
    run->add_flag("-u,--udp", ro->udp, "UDP instead of TCP");
    run->add_option("-b,--bitrate", ro->rate, "Target payload bits/s, K/M/G suffixes (powers of 1000); 0 = unlimited");
    run->add_option("--pps", ro->pps, "Target UDP datagrams/s, K/M suffixes; 0 = unlimited");
    run->add_flag("--gso", ro->spec.udp_gso, "UDP: send with UDP_SEGMENT (GSO); a separate mode from plain sendmmsg");
    run->add_flag("--gro", ro->spec.udp_gro, "UDP: receive with UDP_GRO (datagrams are still counted one by one)");
    run->add_option("-O,--omit", ro->spec.omit_s, "Warm-up seconds, not counted")->capture_default_str();
    run->add_option("-i,--interval", ro->spec.interval_s, "Seconds per interval sample; 0 = none")->capture_default_str();
    run->add_option("--iface", ro->spec.iface, "Local interface for counters (default: the one holding the local address)");
    run->add_option("--stall-timeout", ro->spec.stall_timeout_s, "Seconds without data that end the run as stalled")->capture_default_str();
    auto* json_flag = run->add_flag("--json", ro->json, "Print the result as JSON");
    run->add_flag("--json-stream", ro->json_stream,
                  "Print JSON lines instead: run_start, each interval, run, run_end (results/STREAM.md, results/stream.schema.json)")
        ->excludes(json_flag);
    run->add_option("--key-file", ro->key_file,
                    "Pre-shared key: the server must prove it holds it before the test (default $NICMATRIX_KEY_FILE)");
    run->add_flag("--rfc2544", ro->rfc2544,
                  "Frame-size table: per frame size, the highest UDP rate with no loss (binary search over trials), "
                  "then a confirmation trial; prints frame size | % of line rate | frames/s | Mbit/s | CPU | loss | trials");
    run->add_option("--frames", ro->frames,
                    "--rfc2544 frame sizes, comma-separated: 64..9216, imix (64/594/1518 at 7:4:1) or imix:SIZExWEIGHT/...; "
                    "default 64,128,256,512,1024,1280,1518,imix");
    run->add_option("--trial", ro->table.trial_s, "--rfc2544 seconds per trial")->capture_default_str();
    run->add_option("--resolution", ro->table.resolution_pct, "--rfc2544 search resolution, percent of the bracket's top")->capture_default_str();
    run->add_option("--max-trials", ro->table.max_trials, "--rfc2544 search trials per frame size (plus one confirmation)")->capture_default_str();
    run->add_option("--loss-tolerance", ro->table.loss_tolerance_pct, "--rfc2544 loss (percent) a passing trial may have")->capture_default_str();
    run->add_option("--line-rate", ro->line_rate, "--rfc2544 line rate in bit/s, K/M/G suffixes (default: the sending interface's link speed)");
    run->callback([ro, stop] {
        if (ro->rfc2544) {
            run_rfc2544_command(*ro, stop);
            return;
        }
        TestSpec spec = ro->spec;
        spec.protocol = ro->udp ? Protocol::Udp : Protocol::Tcp;
        if (ro->reverse && ro->bidir) throw usage_error("-R and --bidir: choose one");
        spec.direction = ro->bidir ? Direction::Bidir : (ro->reverse ? Direction::Reverse : Direction::Forward);
        if (!ro->rate.empty()) spec.rate_bps = parse_scaled(ro->rate, "--bitrate", false);
        if (!ro->pps.empty()) spec.rate_pps = parse_scaled(ro->pps, "--pps", false);
        const auto size = [](const std::string& text, const std::string& flag, double max) {
            const double v = parse_scaled(text, flag, true);
            if (v > max) throw usage_error(flag + ": \"" + text + "\" is too large");
            return v;
        };
        if (!ro->length.empty()) spec.write_size = static_cast<uint32_t>(size(ro->length, "--length", 4294967295.0));
        if (!ro->window.empty()) spec.window = static_cast<uint32_t>(size(ro->window, "--window", 4294967295.0));
        if (!ro->bytes.empty()) spec.bytes = static_cast<uint64_t>(size(ro->bytes, "--bytes", 1e18));
        if (!ro->length.empty() && spec.write_size == 0) throw usage_error("--length: must be > 0");
        if (const auto key_file = key_file_from(ro->key_file); !key_file.empty()) {
            // The server must prove it holds the key (the agent's mutual challenge-response) before the test.
            PeerClientOptions po;
            po.host = spec.host;
            po.port = spec.port;
            po.bind = spec.bind;
            po.key = load_key(key_file);
            if (!PeerControlClient(po).authenticated()) {
                throw Error(ErrorKind::Refused, "server " + spec.host + ":" + std::to_string(spec.port) +
                                                    " does not authenticate (it was started without --key-file)");
            }
        }
        JsonLines lines(std::cout);
        if (ro->json_stream) stream_run_start(lines, spec);
        else if (!ro->json) std::cout << "Connecting to host " << spec.host << ", port " << spec.port << std::endl;
        TrafficClient client;
        const RunResult r = client.run(spec, stop);
        if (ro->json_stream) {
            stream_run_done(lines, r);
        } else if (ro->json) {
            std::cout << Json(r).dump(2) << '\n';
        } else {
            print_result(r, std::cout);
        }
        if (r.status != RunStatus::Ok) {
            throw Error(ErrorKind::Failed, "run " + Json(r.status).get<std::string>() + ": " + r.error);
        }
    });
}

}  // namespace nm::cli
