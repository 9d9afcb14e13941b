#pragma once
// RFC 2544 throughput per frame size through the traffic engine: for each frame size (or mix) a binary
// search (find_throughput) over paced UDP trials, each a full run of the engine, then a confirmation
// trial at the reported rate. The device path is whatever lies between the client and the server.
#include <functional>
#include <optional>
#include <stop_token>

#include "core/rfc2544/frame_size.hpp"
#include "core/session/traffic_runner.hpp"
#include "core/traffic/rfc2544_types.hpp"

namespace nm {

/// The line rate a table uses: `spec.line_rate_bps` when set ("configured"), else the link speed
/// ("link"). Throws nm::Error (Usage) when neither is known, saying to give --line-rate.
std::pair<double, std::string> choose_line_rate(const Rfc2544Spec& spec, std::optional<double> link_speed_bps);

/// The frame sizes of a spec, parsed (the defaults when it names none). Throws nm::Error (Usage) naming
/// a bad size.
std::vector<FrameMix> frames_of(const Rfc2544Spec& spec);

/// The UDP payload shares that make the frames of `mix` (frame - 46 each).
std::vector<PayloadShare> payload_mix_for(const FrameMix& mix);

/// Checks the spec's numbers (trial length, resolution, trials, tolerance, frames). Throws nm::Error (Usage).
void validate_rfc2544(const Rfc2544Spec& spec);

/// The test one trial runs: `base` (host, port, bind, iface) as paced UDP at `offered_fps` frames/s for
/// `spec.trial_s`, payloads of `mix`, forward, no warm-up, no interval samples.
TestSpec trial_spec(const TestSpec& base, const Rfc2544Spec& spec, const FrameMix& mix, double offered_fps);

/// The local interface packets to `base.host` leave from (base.iface when set): found by connecting a
/// UDP socket (no packet is sent) and looking up its local address. "" when it cannot be told. Throws
/// nm::Error (Usage) for a host that does not resolve.
std::string sending_iface(const TestSpec& base);

/// Called after every frame size, for progress lines. Must not throw.
using FrameRowObserver = std::function<void(const FrameRow&)>;

/// Makes the table. `base` says where the server is; `link_speed_bps` is the sending interface's
/// speed when known. Loss is counted against datagrams actually sent in each trial's window. A trial
/// that ends other than ok (server lost, stalled) ends that row with its error; a stop ends the table
/// (`interrupted`). Throws nm::Error (Usage) for a bad spec or no line rate, and what TrafficRunner::run
/// throws for a server that cannot be reached.
Rfc2544Result run_rfc2544(TrafficRunner& runner, const TestSpec& base, const Rfc2544Spec& spec, std::optional<double> link_speed_bps,
                          std::stop_token stop, const FrameRowObserver& on_row = {});

}  // namespace nm
