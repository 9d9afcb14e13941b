// JSON of the settings beyond offloads and MTU: what is asked (TuningRequest, QdiscSpec) and what the
// kernel has (TuningState, QdiscState), and what an apply did with each (TuningChange). Every key is
// optional on read: journals and results written before these settings existed read back empty.
#include "core/base/json_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;

void to_json(Json& j, const QdiscSpec& v) {
    j = Json{{"kind", v.kind}};
    if (v.limit) j["limit"] = *v.limit;
    if (v.rate_bps) j["rate_bps"] = *v.rate_bps;
    if (v.burst_bytes) j["burst"] = *v.burst_bytes;
    if (v.latency_ms) j["latency_ms"] = *v.latency_ms;
    if (v.default_class) j["default"] = *v.default_class;
}

void from_json(const Json& j, QdiscSpec& v) {
    j.at("kind").get_to(v.kind);
    opt(j, "limit", v.limit);
    opt(j, "rate_bps", v.rate_bps);
    opt(j, "burst", v.burst_bytes);
    opt(j, "latency_ms", v.latency_ms);
    opt(j, "default", v.default_class);
}

void to_json(Json& j, const TuningRequest& v) {
    j = Json::object();
    if (!v.channels.empty()) j["channels"] = v.channels;
    if (!v.rings.empty()) j["rings"] = v.rings;
    if (!v.coalesce.empty()) j["coalesce"] = v.coalesce;
    if (!v.rps.empty()) j["rps"] = v.rps;
    if (!v.xps.empty()) j["xps"] = v.xps;
    if (!v.irq_affinity.empty()) j["irq_affinity"] = v.irq_affinity;
    if (!v.napi.empty()) j["napi"] = v.napi;
    if (!v.sysctl.empty()) j["sysctl"] = v.sysctl;
    if (v.qdisc) j["qdisc"] = *v.qdisc;
    if (v.qdisc_original) j["qdisc_original"] = *v.qdisc_original;
}

namespace {

// The kinds a request and a read-back state both carry, by the same names.
template <typename Tuning>
void kinds_from_json(const Json& j, Tuning& v) {
    opt(j, "channels", v.channels);
    opt(j, "rings", v.rings);
    opt(j, "coalesce", v.coalesce);
    opt(j, "rps", v.rps);
    opt(j, "xps", v.xps);
    opt(j, "irq_affinity", v.irq_affinity);
    opt(j, "napi", v.napi);
    opt(j, "sysctl", v.sysctl);
}

}  // namespace

void from_json(const Json& j, TuningRequest& v) {
    kinds_from_json(j, v);
    if (const auto it = j.find("qdisc"); it != j.end() && it->is_object()) v.qdisc = it->get<QdiscSpec>();
    if (const auto it = j.find("qdisc_original"); it != j.end() && it->is_object()) v.qdisc_original = it->get<QdiscState>();
}

void to_json(Json& j, const QdiscState& v) {
    j = Json{{"kind", v.kind}, {"handle", v.handle}, {"default", v.builtin()}, {"options_hex", v.options_hex}, {"params", v.params}};
}

void from_json(const Json& j, QdiscState& v) {
    j.at("kind").get_to(v.kind);
    opt(j, "handle", v.handle);
    opt(j, "options_hex", v.options_hex);
    opt(j, "params", v.params);
}

void to_json(Json& j, const TuningState& v) {
    j = Json{{"channels", v.channels}, {"channels_max", v.channels_max}, {"rings", v.rings},   {"coalesce", v.coalesce},
             {"rps", v.rps},           {"xps", v.xps},                   {"irq_affinity", v.irq_affinity},
             {"napi", v.napi},         {"sysctl", v.sysctl},             {"qdisc", nullptr}, {"unsupported", v.unsupported}};
    if (v.qdisc) j["qdisc"] = *v.qdisc;
}

void from_json(const Json& j, TuningState& v) {
    kinds_from_json(j, v);
    opt(j, "channels_max", v.channels_max);
    if (const auto it = j.find("qdisc"); it != j.end() && it->is_object()) v.qdisc = it->get<QdiscState>();
    opt(j, "unsupported", v.unsupported);
}

void to_json(Json& j, const TuningChange& v) {
    j = Json{{"setting", v.setting}, {"requested", v.requested}, {"before", v.before}, {"after", v.after}, {"outcome", v.outcome}};
}

void from_json(const Json& j, TuningChange& v) {
    j.at("setting").get_to(v.setting);
    opt(j, "requested", v.requested);
    opt(j, "before", v.before);
    opt(j, "after", v.after);
    j.at("outcome").get_to(v.outcome);
}

}  // namespace nm
