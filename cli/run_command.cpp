// `nicmatrix run`: one test against a `nicmatrix serve` (or a stock iperf3), or an RFC 2544 frame-size
// table. The test spec's flags come from its field table (cli/test_spec_flags.hpp); the flags written here
// are those that are not one field (-R, --bidir, -u, --rr, --crr, --rr-size, -A, --dscp) and the run's own.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include "agent/key_file.hpp"
#include "cli/commands.hpp"
#include "cli/human_units.hpp"
#include "cli/run_printing.hpp"
#include "cli/scaled_number.hpp"
#include "cli/test_spec_flags.hpp"
#include "core/base/error.hpp"
#include "core/device/device_codec.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/iperf3/iperf3_client.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/rfc2544/rfc2544.hpp"
#include "core/session/traffic_client.hpp"
#include "core/session/traffic_session.hpp"
#include "core/traffic/dscp.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "matrix/report/frame_table.hpp"
#include "matrix/sweep_stream.hpp"

namespace nm::cli {
namespace {

struct RunOptions {
    TestSpec spec;
    std::unique_ptr<TestSpecFlags> fields;  ///< the flags of the field table, bound to spec
    std::string key_file, affinity;
    std::string peer_kind = "nicmatrix";
    bool udp = false, reverse = false, bidir = false, json = false, json_stream = false;
    bool rr = false, crr = false;
    std::string rr_size, dscp;
    bool rfc2544 = false;
    std::string frames, line_rate;
    Rfc2544Spec table;
};

// The test client's options from --key-file (or $NICMATRIX_KEY_FILE).
TrafficClientOptions client_options(const std::string& key_file_flag) {
    TrafficClientOptions o;
    if (const auto key_file = key_file_from(key_file_flag); !key_file.empty()) o.key = std::string(load_key(key_file).bytes());
    return o;
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

void run_rfc2544_command(const RunOptions& ro, std::stop_token stop) {
    Rfc2544Spec table = ro.table;
    if (!ro.frames.empty()) table.frames = split_frames(ro.frames);
    if (!ro.line_rate.empty()) table.line_rate_bps = parse_scaled(ro.line_rate, "--line-rate", false);
    table.streams = ro.spec.streams;
    const TestSpecFlags& fields = *ro.fields;
    if (ro.udp || ro.reverse || ro.bidir || fields.given("rate_bps") || fields.given("rate_pps") || fields.given("write_size") ||
        fields.given("bytes")) {
        throw usage_error("--rfc2544: sets its own UDP rate, sizes and direction; drop -u, -R, --bidir, -b, --pps, -l, -n");
    }
    validate_rfc2544(table);
    TestSpec base = ro.spec;
    fields.apply_scaled(base);  // -w: the only one left
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
    TrafficClient client(client_options(ro.key_file));
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

// --json, --json-stream, --key-file and the RFC 2544 table's flags.
void add_output_and_rfc2544_flags(CLI::App& run, RunOptions& ro) {
    auto* json_flag = run.add_flag("--json", ro.json, "Print the result as JSON");
    run.add_flag("--json-stream", ro.json_stream,
                 "Print JSON lines instead: run_start, progress live every -i seconds, each interval, run, run_end (results/STREAM.md, "
                 "results/stream.schema.json)")
        ->excludes(json_flag);
    run.add_option("--key-file", ro.key_file,
                   "Pre-shared key: the test proves it holds it, and the server must prove it too, on every message (default "
                   "$NICMATRIX_KEY_FILE); a server started with --key-file refuses tests without it");
    run.add_flag("--rfc2544", ro.rfc2544,
                 "Frame-size table: per frame size, the highest UDP rate with no loss (binary search over trials), "
                 "then a confirmation trial; prints frame size | % of line rate | frames/s | Mbit/s | CPU | loss | trials");
    run.add_option("--frames", ro.frames,
                   "--rfc2544 frame sizes, comma-separated: 64..9216, imix (64/594/1518 at 7:4:1) or imix:SIZExWEIGHT/...; "
                   "default 64,128,256,512,1024,1280,1518,imix");
    run.add_option("--trial", ro.table.trial_s, "--rfc2544 seconds per trial")->capture_default_str();
    run.add_option("--resolution", ro.table.resolution_pct, "--rfc2544 search resolution, percent of the bracket's top")->capture_default_str();
    run.add_option("--max-trials", ro.table.max_trials, "--rfc2544 search trials per frame size (plus one confirmation)")->capture_default_str();
    run.add_option("--loss-tolerance", ro.table.loss_tolerance_pct, "--rfc2544 loss (percent) a passing trial may have")->capture_default_str();
    run.add_option("--line-rate", ro.line_rate, "--rfc2544 line rate in bit/s, K/M/G suffixes (default: the sending interface's link speed)");
}

// Flags written by hand, each set keyed by the field its flags come before in --help.
TestSpecFlags::HandFlags hand_flags(CLI::App& run, RunOptions& ro) {
    TestSpecFlags::HandFlags before;
    before["bind"] = [&] {
        run.add_option("--peer-kind", ro.peer_kind,
                       "What the server is: nicmatrix (`nicmatrix serve`) or iperf3 (a stock `iperf3 -s`, driven with iperf3's own protocol; "
                       "TCP streams, -R and --bidir; the server's own figures are in the result's \"peer\")")
            ->check(CLI::IsMember({"nicmatrix", "iperf3"}))
            ->capture_default_str();
    };
    before["rate_bps"] = [&] {
        run.add_flag("-R,--reverse", ro.reverse, "Server sends, client receives");
        run.add_flag("--bidir", ro.bidir, "Both directions at once");
        run.add_flag("-u,--udp", ro.udp, "UDP instead of TCP");
    };
    before["iface"] = [&] {
        run.add_option("-A,--affinity", ro.affinity,
                       "Pin the engine threads: CLIENT_CPUS[,SERVER_CPUS] (iperf3's -A); a side is a CPU, a range 0-3 or "
                       "CPUs joined by '+' (0+2); the server pins its own. Each run records where the threads ran (placement)");
    };
    before["burst"] = [&] {
        run.add_flag("--rr", ro.rr, "Request/response (netperf TCP_RR; with -u UDP_RR): transactions/s and latency percentiles per flow");
        run.add_flag("--crr", ro.crr, "Request/response with a new TCP connection per transaction (TCP_CRR)");
        run.add_option("--rr-size", ro.rr_size,
                       "--rr/--crr request and response bytes, REQ[,RESP] with K/M suffixes (default 1,1; one value sets both)");
    };
    before["zerocopy"] = [&] { run.add_option("--dscp", ro.dscp, "DSCP on both ends' data sockets: 0..63 or a name (CS0..CS7, AF11..AF43, EF)"); };
    before["profile"] = [&] { add_output_and_rfc2544_flags(run, ro); };
    return before;
}

// A byte count of --rr-size, K/M suffixes (powers of 1024).
uint32_t parse_size(const std::string& text, const std::string& flag) {
    const double v = parse_scaled(text, flag, true);
    if (v > 4294967295.0) throw usage_error(flag + ": \"" + text + "\" is too large");
    return static_cast<uint32_t>(v);
}

// The test the flags ask for (not yet resolved against the engine: resolve_spec does that).
TestSpec test_spec_from(const RunOptions& ro) {
    TestSpec spec = ro.spec;
    spec.protocol = ro.udp ? Protocol::Udp : Protocol::Tcp;
    if (ro.reverse && ro.bidir) throw usage_error("-R and --bidir: choose one");
    spec.direction = ro.bidir ? Direction::Bidir : (ro.reverse ? Direction::Reverse : Direction::Forward);
    ro.fields->apply_scaled(spec);
    if (!ro.affinity.empty()) std::tie(spec.client_cpus, spec.server_cpus) = parse_affinity_option(ro.affinity);
    if (ro.rr && ro.crr) throw usage_error("--rr and --crr: choose one");
    spec.pattern = ro.crr ? TrafficPattern::Crr : ro.rr ? TrafficPattern::Rr : TrafficPattern::Stream;
    if (spec.pattern == TrafficPattern::Stream && (!ro.rr_size.empty() || ro.fields->given("burst"))) {
        throw usage_error("--rr-size and --rr-burst: for request/response tests; add --rr or --crr");
    }
    if (!ro.rr_size.empty()) {
        const auto comma = ro.rr_size.find(',');
        const std::string req = ro.rr_size.substr(0, comma);
        const std::string resp = comma == std::string::npos ? req : ro.rr_size.substr(comma + 1);
        spec.request_size = parse_size(req, "--rr-size");
        spec.response_size = parse_size(resp, "--rr-size");
    }
    if (!ro.dscp.empty()) spec.socket.dscp = parse_dscp(ro.dscp, "--dscp");
    return spec;
}

// One test: connected, printed as text, JSON or JSON lines; a run that did not end ok is an error (exit 1).
void run_test(const RunOptions& ro, const TestSpec& spec, bool iperf3_peer, std::stop_token stop) {
    // With a key the test itself is authenticated, both ways (core/control/test_auth.hpp); a bad key file is
    // refused before anything is printed or connected.
    std::unique_ptr<TrafficRunner> runner;
    if (iperf3_peer) {
        iperf3::check_supported(spec);
        runner = std::make_unique<Iperf3Client>();
    } else {
        runner = std::make_unique<TrafficClient>(client_options(ro.key_file));
    }
    TrafficRunner& client = *runner;
    // A spec the engine refuses is the user's error before anything is printed or connected.
    const TestSpec resolved = resolve_spec(spec, engine_cores());
    // --json-stream never blocks the test on a reader that stops reading (matrix/sweep_stream.hpp).
    std::optional<JsonLines> lines;
    if (ro.json_stream) {
        lines.emplace(STDOUT_FILENO, kDefaultJsonStreamQueue);
        stream_run_start(*lines, spec);
    } else if (!ro.json) {
        std::cout << "Connecting to host " << spec.host << ", port " << spec.port << std::endl;
    }
    const RunResult r = ro.json_stream ? client.run_live(spec, stop, [&](const LiveInterval& i) { stream_run_progress(*lines, i); })
                        : ro.json      ? client.run(spec, stop)
                                       : client.run_live(spec, stop, [&](const LiveInterval& i) { print_live(resolved, i, std::cout); });
    if (ro.json_stream) {
        stream_run_done(*lines, r);
        lines->drain(std::chrono::steady_clock::now() + std::chrono::seconds(5), stop);
        if (const auto lost = describe_stream_losses(lines->stats()); !lost.empty()) std::cerr << "nicmatrix: " << lost << '\n';
    } else if (ro.json) {
        std::cout << Json(r).dump(2) << '\n';
    } else {
        print_result(r, std::cout);
    }
    if (r.status != RunStatus::Ok) {
        throw Error(ErrorKind::Failed, "run " + Json(r.status).get<std::string>() + ": " + r.error);
    }
}

void run_command(RunOptions& ro, std::stop_token stop) {
    const bool iperf3_peer = ro.peer_kind == "iperf3";
    if (iperf3_peer && !ro.fields->given("port")) ro.spec.port = iperf3::kDefaultPort;
    if (iperf3_peer && ro.rfc2544) throw usage_error("--rfc2544: not with --peer-kind iperf3 (a frame-size table is UDP)");
    if (iperf3_peer && !ro.key_file.empty()) throw usage_error("--key-file: not with --peer-kind iperf3: a stock iperf3 server has no nicmatrix key");
    if (ro.rfc2544 && ro.spec.profile) throw usage_error("--profile: not with --rfc2544 (a table is many short trials)");
    if (ro.rfc2544 && ro.json_stream) throw usage_error("--json-stream: not with --rfc2544 (use --json)");
    if (ro.rfc2544) {
        run_rfc2544_command(ro, stop);
        return;
    }
    run_test(ro, test_spec_from(ro), iperf3_peer, stop);
}

}  // namespace

void add_run_command(CLI::App& app, std::stop_token stop) {
    auto ro = std::make_shared<RunOptions>();
    auto* run = app.add_subcommand("run", "Run one test against a `nicmatrix serve` (iperf-like flags)");
    ro->fields = std::make_unique<TestSpecFlags>(*run, ro->spec, hand_flags(*run, *ro));
    run->callback([ro, stop] { run_command(*ro, stop); });
}

}  // namespace nm::cli
