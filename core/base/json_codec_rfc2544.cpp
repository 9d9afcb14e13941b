// JSON of frame-size tables. Written by nicmatrix, read back tolerantly (keys added later get defaults).
#include "core/base/rfc2544_codec.hpp"
#include "core/base/traffic_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;

void to_json(Json& j, const PayloadShare& v) { j = Json{{"payload_bytes", v.payload_bytes}, {"weight", v.weight}}; }

void from_json(const Json& j, PayloadShare& v) {
    opt(j, "payload_bytes", v.payload_bytes);
    opt(j, "weight", v.weight);
}

void to_json(Json& j, const Rfc2544Spec& v) {
    j = Json{{"trial_s", v.trial_s},
             {"resolution_pct", v.resolution_pct},
             {"max_trials", v.max_trials},
             {"loss_tolerance_pct", v.loss_tolerance_pct},
             {"line_rate_bps", v.line_rate_bps},
             {"streams", v.streams}};
    // No frames = the default sizes; written as absent so the entry reads back as the same config.
    if (!v.frames.empty()) j["frames"] = v.frames;
}

void from_json(const Json& j, Rfc2544Spec& v) {
    opt(j, "frames", v.frames);
    opt(j, "trial_s", v.trial_s);
    opt(j, "resolution_pct", v.resolution_pct);
    opt(j, "max_trials", v.max_trials);
    opt(j, "loss_tolerance_pct", v.loss_tolerance_pct);
    opt(j, "line_rate_bps", v.line_rate_bps);
    opt(j, "streams", v.streams);
}

void to_json(Json& j, const TrialRecord& v) {
    j = Json{{"offered_fps", v.offered_fps}, {"sent_fps", v.sent_fps}, {"sent", v.sent},
             {"received", v.received},       {"loss_pct", v.loss_pct}, {"passed", v.passed}};
}

void from_json(const Json& j, TrialRecord& v) {
    opt(j, "offered_fps", v.offered_fps);
    opt(j, "sent_fps", v.sent_fps);
    opt(j, "sent", v.sent);
    opt(j, "received", v.received);
    opt(j, "loss_pct", v.loss_pct);
    opt(j, "passed", v.passed);
}

void to_json(Json& j, const FrameRow& v) {
    j = Json{{"frame", v.frame},
             {"mean_frame_bytes", v.mean_frame_bytes},
             {"payload_mix", v.payload_mix},
             {"line_rate_fps", v.line_rate_fps},
             {"found", v.found},
             {"throughput_fps", v.throughput_fps},
             {"layer2_bps", v.layer2_bps},
             {"line_rate_pct", v.line_rate_pct},
             {"loss_pct", v.loss_pct},
             {"confirmation", v.confirmation ? Json(*v.confirmation) : Json(nullptr)},
             {"confirmed", v.confirmed},
             {"trials", v.trials},
             {"generator_limited", v.generator_limited},
             {"generator_max_fps", v.generator_max_fps},
             {"cpu", {{"sender_pct", v.cpu_sender_pct}, {"receiver_pct", v.cpu_receiver_pct}, {"softirq_pct", v.softirq_pct}, {"irq_pct", v.irq_pct}}},
             {"history", v.history},
             {"run", v.run ? Json(*v.run) : Json(nullptr)},
             {"error", v.error}};
}

void from_json(const Json& j, FrameRow& v) {
    opt(j, "frame", v.frame);
    opt(j, "mean_frame_bytes", v.mean_frame_bytes);
    opt(j, "payload_mix", v.payload_mix);
    opt(j, "line_rate_fps", v.line_rate_fps);
    opt(j, "found", v.found);
    opt(j, "throughput_fps", v.throughput_fps);
    opt(j, "layer2_bps", v.layer2_bps);
    opt(j, "line_rate_pct", v.line_rate_pct);
    opt(j, "loss_pct", v.loss_pct);
    if (const auto it = j.find("confirmation"); it != j.end() && !it->is_null()) v.confirmation = it->get<TrialRecord>();
    opt(j, "confirmed", v.confirmed);
    opt(j, "trials", v.trials);
    opt(j, "generator_limited", v.generator_limited);
    opt(j, "generator_max_fps", v.generator_max_fps);
    if (const auto it = j.find("cpu"); it != j.end() && it->is_object()) {
        opt(*it, "sender_pct", v.cpu_sender_pct);
        opt(*it, "receiver_pct", v.cpu_receiver_pct);
        opt(*it, "softirq_pct", v.softirq_pct);
        opt(*it, "irq_pct", v.irq_pct);
    }
    opt(j, "history", v.history);
    if (const auto it = j.find("run"); it != j.end() && !it->is_null()) v.run = it->get<RunResult>();
    opt(j, "error", v.error);
}

void to_json(Json& j, const InterfaceCoalesce& v) { j = Json{{"netns", v.netns}, {"ifname", v.ifname}, {"coalesce", v.coalesce}}; }

void from_json(const Json& j, InterfaceCoalesce& v) {
    opt(j, "netns", v.netns);
    opt(j, "ifname", v.ifname);
    opt(j, "coalesce", v.coalesce);
}

void to_json(Json& j, const Rfc2544Result& v) {
    j = Json{{"spec", v.spec},
             {"line_rate_bps", v.line_rate_bps},
             {"line_rate_source", v.line_rate_source},
             {"rows", v.rows},
             {"interfaces", v.interfaces},
             {"interrupted", v.interrupted}};
}

void from_json(const Json& j, Rfc2544Result& v) {
    opt(j, "spec", v.spec);
    opt(j, "line_rate_bps", v.line_rate_bps);
    opt(j, "line_rate_source", v.line_rate_source);
    opt(j, "rows", v.rows);
    opt(j, "interfaces", v.interfaces);
    opt(j, "interrupted", v.interrupted);
}

}  // namespace nm
