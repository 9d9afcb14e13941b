// JSON of the settings beyond offloads and MTU: what is asked (TuningRequest, QdiscSpec) and what the
// kernel has (TuningState, QdiscState), and what an apply did with each (TuningChange). Every key is
// optional on read: journals and results written before these settings existed read back empty.
#include "core/base/device_codec.hpp"
#include "core/base/tuning_codec.hpp"
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
    if (const auto it = j.find("qdisc_original"); it != j.end() && it->is_object()) v.qdisc_original = it->get<QdiscTree>();
}

void to_json(Json& j, const QdiscState& v) {
    j = Json{{"kind", v.kind}, {"handle", v.handle}, {"default", v.builtin()}, {"params", v.params}};
}

// "options_hex" of files written before issue 36 is ignored: nothing is put back from raw bytes.
void from_json(const Json& j, QdiscState& v) {
    j.at("kind").get_to(v.kind);
    opt(j, "handle", v.handle);
    opt(j, "params", v.params);
}

void to_json(Json& j, const TcNode& v) {
    j = Json{{"kind", v.kind}, {"handle", v.handle}, {"parent", v.parent}, {"options", Json::object()}};
    if (v.protocol || v.prio || v.chain) {
        j["protocol"] = v.protocol;
        j["prio"] = v.prio;
        j["chain"] = v.chain;
    }
    for (const auto& [name, n] : v.options) j["options"][name] = n;
    for (const auto& [name, list] : v.lists) j["options"][name] = list;
}

// Every number checked for its width; options are numbers (scalars) or arrays of numbers (lists). Which
// names a kind may carry is check_qdisc_tree's question, asked before anything is rebuilt.
void from_json(const Json& j, TcNode& v) {
    if (!j.is_object()) throw usage_error("a qdisc tree node must be an object, got " + j.dump());
    j.at("kind").get_to(v.kind);
    opt(j, "handle", v.handle);
    opt(j, "parent", v.parent);
    opt(j, "protocol", v.protocol);
    opt(j, "prio", v.prio);
    opt(j, "chain", v.chain);
    if (const auto it = j.find("options"); it != j.end()) {
        if (!it->is_object()) throw usage_error("a qdisc tree node's options must be an object");
        for (const auto& [name, value] : it->items()) {
            if (value.is_array()) v.lists[name] = codec::read<std::vector<uint64_t>>(value, "options." + name);
            else v.options[name] = codec::read<uint64_t>(value, "options." + name);
        }
    }
}

void to_json(Json& j, const QdiscTree& v) {
    j = Json{{"qdiscs", v.qdiscs}, {"classes", v.classes}, {"filters", v.filters}};
    if (!v.refused.empty()) j["refused"] = v.refused;
}

void from_json(const Json& j, QdiscTree& v) {
    if (!j.is_object()) throw usage_error("a qdisc tree must be an object");
    opt(j, "qdiscs", v.qdiscs);
    opt(j, "classes", v.classes);
    opt(j, "filters", v.filters);
    opt(j, "refused", v.refused);
    canonicalize(v);
}

void to_json(Json& j, const TuningState& v) {
    j = Json{{"channels", v.channels}, {"channels_max", v.channels_max}, {"rings", v.rings},   {"coalesce", v.coalesce},
             {"rps", v.rps},           {"xps", v.xps},                   {"irq_affinity", v.irq_affinity},
             {"napi", v.napi},         {"sysctl", v.sysctl},             {"qdisc", nullptr}, {"unsupported", v.unsupported}};
    if (v.qdisc) j["qdisc"] = *v.qdisc;
    if (v.qdisc_tree) j["qdisc_tree"] = *v.qdisc_tree;
}

void from_json(const Json& j, TuningState& v) {
    kinds_from_json(j, v);
    opt(j, "channels_max", v.channels_max);
    if (const auto it = j.find("qdisc"); it != j.end() && it->is_object()) v.qdisc = it->get<QdiscState>();
    if (const auto it = j.find("qdisc_tree"); it != j.end() && it->is_object()) v.qdisc_tree = it->get<QdiscTree>();
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
