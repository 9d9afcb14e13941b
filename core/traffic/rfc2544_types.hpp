#pragma once
// Value types of an RFC 2544 frame-size table: what to measure (a `run --rfc2544` or a sweep's
// `"test": "rfc2544"` entry) and what it found, one row per frame size. Produced by core/rfc2544, stored
// in a cell of a results file by matrix, rendered by matrix/frame_table. JSON from the field lists below (rfc2544_codec.hpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/traffic/traffic_types.hpp"

namespace nm {

/// How to make the table.
struct Rfc2544Spec {
    /// Frame sizes as users write them: "64" ... "1518", "imix", "imix:64x7,594x4,1518x1". Empty = RFC 2544's
    /// 64, 128, 256, 512, 1024, 1280, 1518 and the classic IMIX.
    std::vector<std::string> frames;
    double trial_s = 1;             ///< measured seconds per trial
    double resolution_pct = 1;      ///< the search stops when its bracket is narrower than this % of its top
    uint32_t max_trials = 16;       ///< search trials per frame size (the confirmation trial is extra)
    double loss_tolerance_pct = 0;  ///< a trial passes with loss at or below this
    double line_rate_bps = 0;       ///< layer-1 line rate; 0 = the sending interface's link speed
    uint32_t streams = 0;           ///< generator streams (each its own thread); 0 = half the cores, 1..4
};

constexpr auto json_fields(const Rfc2544Spec*) {
    using S = Rfc2544Spec;
    return field_list(field("frames", &S::frames, kFieldOmitEmpty), field("trial_s", &S::trial_s), field("resolution_pct", &S::resolution_pct),
                      field("max_trials", &S::max_trials), field("loss_tolerance_pct", &S::loss_tolerance_pct),
                      field("line_rate_bps", &S::line_rate_bps), field("streams", &S::streams));
}

/// One trial of the search, for the row's history.
struct TrialRecord {
    double offered_fps = 0;
    double sent_fps = 0;  ///< what the generator actually sent
    uint64_t sent = 0;    ///< datagrams sent in the trial's window
    uint64_t received = 0;
    double loss_pct = 0;  ///< (sent - received) / sent
    bool passed = false;
};

constexpr auto json_fields(const TrialRecord*) {
    using S = TrialRecord;
    return field_list(field("offered_fps", &S::offered_fps), field("sent_fps", &S::sent_fps), field("sent", &S::sent),
                      field("received", &S::received), field("loss_pct", &S::loss_pct), field("passed", &S::passed));
}

/// One frame size (or mix) of the table.
struct FrameRow {
    std::string frame;                        ///< "64", "imix", ...
    double mean_frame_bytes = 0;              ///< the frame size, or a mix's weighted mean
    std::vector<PayloadShare> payload_mix;    ///< UDP payloads sent (frame - 46); one share for a single size
    double line_rate_fps = 0;                 ///< line_rate_bps / ((frame + 20) * 8)
    bool found = false;                       ///< some trial passed
    double throughput_fps = 0;                ///< highest passing rate, as sent; 0 when none passed
    double layer2_bps = 0;                    ///< throughput_fps * frame * 8
    double line_rate_pct = 0;                 ///< throughput_fps / line_rate_fps * 100
    double loss_pct = 0;                      ///< loss of the trial the throughput comes from
    std::optional<TrialRecord> confirmation;  ///< a final trial at the reported rate
    bool confirmed = false;                   ///< the confirmation passed too
    uint32_t trials = 0;                      ///< search trials, without the confirmation
    bool generator_limited = false;           ///< the generator could not send some offered rate
    double generator_max_fps = 0;             ///< what the generator sent in the first (line-rate) trial
    double cpu_sender_pct = 0;                ///< sender engine, percent of one core, at the reported rate
    double cpu_receiver_pct = 0;              ///< receiver engine, percent of one core
    double softirq_pct = 0;                   ///< system-wide softirq on the receiver's side, percent of all cores
    double irq_pct = 0;                       ///< system-wide irq on the receiver's side
    std::vector<TrialRecord> history;         ///< search trials in the order run
    std::optional<RunResult> run;             ///< the full run at the reported rate (CPU, NAPI, counters)
    std::string error;                        ///< why the row has no figures (a trial failed); "" otherwise
};

constexpr auto json_fields(const FrameRow*) {
    using S = FrameRow;
    return field_list(field("frame", &S::frame), field("mean_frame_bytes", &S::mean_frame_bytes), field("payload_mix", &S::payload_mix),
                      field("line_rate_fps", &S::line_rate_fps), field("found", &S::found), field("throughput_fps", &S::throughput_fps),
                      field("layer2_bps", &S::layer2_bps), field("line_rate_pct", &S::line_rate_pct), field("loss_pct", &S::loss_pct),
                      field("confirmation", &S::confirmation), field("confirmed", &S::confirmed), field("trials", &S::trials),
                      field("generator_limited", &S::generator_limited), field("generator_max_fps", &S::generator_max_fps),
                      field_group("cpu", field("sender_pct", &S::cpu_sender_pct), field("receiver_pct", &S::cpu_receiver_pct),
                                  field("softirq_pct", &S::softirq_pct), field("irq_pct", &S::irq_pct)),
                      field("history", &S::history), field("run", &S::run), field("error", &S::error));
}

/// Coalescing settings of one interface involved, where the driver reports them (ethtool -c).
struct InterfaceCoalesce {
    std::string netns;
    std::string ifname;
    std::map<std::string, uint64_t> coalesce;  ///< empty: the driver reports none (veth)
};

constexpr auto json_fields(const InterfaceCoalesce*) {
    using S = InterfaceCoalesce;
    return field_list(field("netns", &S::netns), field("ifname", &S::ifname), field("coalesce", &S::coalesce));
}

/// A whole frame-size table.
struct Rfc2544Result {
    Rfc2544Spec spec;
    double line_rate_bps = 0;                   ///< the line rate used
    std::string line_rate_source;               ///< "link" (the interface's speed) or "configured" (--line-rate)
    std::vector<FrameRow> rows;                 ///< in the order asked; IMIX is last by default
    std::vector<InterfaceCoalesce> interfaces;  ///< filled by the caller that can read devices
    bool interrupted = false;
};

constexpr auto json_fields(const Rfc2544Result*) {
    using S = Rfc2544Result;
    return field_list(field("spec", &S::spec), field("line_rate_bps", &S::line_rate_bps), field("line_rate_source", &S::line_rate_source),
                      field("rows", &S::rows), field("interfaces", &S::interfaces), field("interrupted", &S::interrupted));
}

}  // namespace nm
