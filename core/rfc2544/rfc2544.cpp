#include "core/rfc2544/rfc2544.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.hpp"
#include "core/host/net.hpp"
#include "core/host/proc_stats.hpp"
#include "core/rfc2544/throughput_search.hpp"
#include "core/session/traffic_session.hpp"

namespace nm {
namespace {

TrialRecord record_of(const TrialOutcome& t, bool passed) { return TrialRecord{t.offered_fps, t.sent_fps, t.sent, t.received, t.loss_pct(), passed}; }

uint32_t generator_streams(const Rfc2544Spec& spec) {
    // Half the cores send; the rest are left to the receiver and the device under test (on one host they
    // all share the CPUs).
    return spec.streams > 0 ? spec.streams : std::clamp(engine_cores() / 2, 1u, 4u);
}

}  // namespace

std::pair<double, std::string> choose_line_rate(const Rfc2544Spec& spec, std::optional<double> link_speed_bps) {
    if (spec.line_rate_bps > 0) return {spec.line_rate_bps, "configured"};
    if (link_speed_bps && *link_speed_bps > 0) return {*link_speed_bps, "link"};
    throw usage_error("rfc2544: the sending interface reports no link speed; give the line rate (--line-rate 1G, or \"line_rate_bps\")");
}

std::vector<FrameMix> frames_of(const Rfc2544Spec& spec) {
    if (spec.frames.empty()) return default_frame_sizes();
    std::vector<FrameMix> out;
    for (const auto& f : spec.frames) out.push_back(parse_frame_size(f));
    return out;
}

std::vector<PayloadShare> payload_mix_for(const FrameMix& mix) {
    std::vector<PayloadShare> out;
    for (const auto& s : mix.shares) out.push_back({udp_payload_for_frame(s.frame_bytes), s.weight});
    return out;
}

void validate_rfc2544(const Rfc2544Spec& spec) {
    if (!(spec.trial_s > 0) || spec.trial_s > 3600) throw usage_error("rfc2544: trial length must be in (0, 3600] s");
    if (!(spec.resolution_pct > 0) || spec.resolution_pct >= 100) throw usage_error("rfc2544: resolution must be in (0, 100) %");
    if (spec.max_trials == 0 || spec.max_trials > 1000) throw usage_error("rfc2544: max trials must be 1..1000");
    if (!(spec.loss_tolerance_pct >= 0) || spec.loss_tolerance_pct >= 100) throw usage_error("rfc2544: loss tolerance must be in [0, 100) %");
    if (!(spec.line_rate_bps >= 0)) throw usage_error("rfc2544: line rate must be >= 0");
    if (spec.streams > kMaxStreams) throw usage_error("rfc2544: streams: at most " + std::to_string(kMaxStreams));
    frames_of(spec);
}

std::string sending_iface(const TestSpec& base) {
    if (!base.iface.empty()) return base.iface;
    const SocketAddress to = resolve_address(base.host, base.port);
    UniqueFd fd(::socket(to.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd || ::connect(fd.get(), to.get(), to.len) != 0) return "";
    return iface_for_address(local_address(fd.get()).host());
}

TestSpec trial_spec(const TestSpec& base, const Rfc2544Spec& spec, const FrameMix& mix, double offered_fps) {
    TestSpec t = base;
    t.protocol = Protocol::Udp;
    t.direction = Direction::Forward;
    t.duration_s = spec.trial_s;
    t.bytes = 0;
    t.omit_s = 0;
    t.interval_s = 0;
    t.rate_bps = 0;
    t.rate_pps = offered_fps;
    t.udp_gso = false;
    t.udp_gro = false;
    t.streams = generator_streams(spec);
    t.threads = t.streams;
    t.payload_mix.clear();
    if (mix.is_mix()) {
        t.payload_mix = payload_mix_for(mix);
        t.write_size = 0;
    } else {
        t.write_size = udp_payload_for_frame(mix.shares.at(0).frame_bytes);
    }
    return t;
}

Rfc2544Result run_rfc2544(TrafficRunner& runner, const TestSpec& base, const Rfc2544Spec& spec, std::optional<double> link_speed_bps,
                          std::stop_token stop, const FrameRowObserver& on_row) {
    validate_rfc2544(spec);
    // The frame sizes are IPv4 frames (payload = frame - 46); over IPv6 every frame would be 20 bytes
    // larger than its label, and 64 bytes cannot carry IPv6 and UDP headers. Refused, not mislabelled.
    if (!base.host.empty() && resolve_address(base.host, base.port).family() == AF_INET6) {
        throw usage_error("rfc2544 to " + base.host +
                          ": frame-size tables are IPv4 (frame = payload + 8 UDP + 20 IPv4 + 18 Ethernet); "
                          "run this cell over IPv4");
    }
    Rfc2544Result result;
    result.spec = spec;
    std::tie(result.line_rate_bps, result.line_rate_source) = choose_line_rate(spec, link_speed_bps);

    for (const auto& mix : frames_of(spec)) {
        if (stop.stop_requested()) break;
        FrameRow row;
        row.frame = mix.name;
        row.mean_frame_bytes = mix.mean_frame_bytes();
        row.payload_mix = payload_mix_for(mix);
        row.line_rate_fps = line_rate_fps(result.line_rate_bps, mix);

        // Every trial's full result, in call order: runs[i] belongs to history[i], the last to the
        // confirmation.
        std::vector<RunResult> runs;
        const TrialFunction trial = [&](double offered) {
            RunResult r = runner.run(trial_spec(base, spec, mix, offered), stop);
            if (r.status != RunStatus::Ok && r.status != RunStatus::Interrupted) {
                throw Error(ErrorKind::Failed, "trial at " + std::to_string(static_cast<uint64_t>(offered)) + " frames/s: " + r.error);
            }
            TrialOutcome t;
            t.offered_fps = offered;
            if (r.loss) {
                t.sent = r.loss->sent;
                t.received = std::min(r.loss->received, r.loss->sent);
            }
            const double window = r.sender.duration_s > 0 ? r.sender.duration_s : spec.trial_s;
            t.sent_fps = static_cast<double>(t.sent) / window;
            runs.push_back(std::move(r));
            return t;
        };
        SearchOptions options;
        options.max_fps = row.line_rate_fps;
        options.resolution_pct = spec.resolution_pct;
        options.max_trials = spec.max_trials;
        options.loss_tolerance_pct = spec.loss_tolerance_pct;
        try {
            const SearchResult s = find_throughput(trial, options, stop);
            row.trials = s.trials;
            row.generator_limited = s.generator_limited;
            row.generator_max_fps = s.history.empty() ? 0 : s.history.front().outcome.sent_fps;
            for (const auto& step : s.history) row.history.push_back(record_of(step.outcome, step.passed));
            row.found = s.found;
            if (s.found) {
                row.throughput_fps = s.throughput_fps;
                row.layer2_bps = layer2_bps(s.throughput_fps, mix);
                row.line_rate_pct = 100.0 * s.throughput_fps / row.line_rate_fps;
                row.loss_pct = s.at_rate.loss_pct();
                // The run the throughput comes from: the passing trial with that sent rate.
                for (size_t i = 0; i < s.history.size() && i < runs.size(); ++i) {
                    if (s.history[i].passed && s.history[i].outcome.sent_fps == s.throughput_fps) row.run = runs[i];
                }
                if (runs.size() > s.history.size()) {
                    row.confirmation = record_of(s.confirmation, s.confirmed);
                    row.confirmed = s.confirmed;
                }
            }
            if (row.run) {
                const RunResult& r = *row.run;
                row.cpu_sender_pct = r.sender.cpu.util_pct;
                row.cpu_receiver_pct = r.receiver.cpu.util_pct;
                row.softirq_pct = r.receiver.system.softirq_pct;
                row.irq_pct = r.receiver.system.irq_pct;
            }
            if (s.interrupted) result.interrupted = true;
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Usage) throw;
            row.error = e.what();
        }
        if (stop.stop_requested()) result.interrupted = true;
        if (on_row) on_row(row);
        result.rows.push_back(std::move(row));
    }
    return result;
}

}  // namespace nm
