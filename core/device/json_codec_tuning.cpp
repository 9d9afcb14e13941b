// JSON of the settings beyond offloads and MTU: what is asked (TuningRequest, QdiscSpec) and what the
// kernel has (TuningState, QdiscState), and what an apply did with each (TuningChange). Every key is
// optional on read: journals and results written before these settings existed read back empty.
#include "core/base/json_optional_field.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"

namespace nm {

using codec::opt;

// The listed fields (tuning_types.hpp) and the computed "default", written for the reader, not read.
void to_json(Json& j, const QdiscState& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["default"] = v.builtin();
}

// "options_hex" of files written before issue 36 is ignored: nothing is put back from raw bytes.
void from_json(const Json& j, QdiscState& v) { read_fields(j, v, json_fields_and_more(&v)); }

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

// The listed fields (qdisc_tree.hpp); reading refuses what is not an object and canonicalizes the tree.
void to_json(Json& j, const QdiscTree& v) { write_fields(j, v, json_fields_and_more(&v)); }

void from_json(const Json& j, QdiscTree& v) {
    if (!j.is_object()) throw usage_error("a qdisc tree must be an object");
    read_fields(j, v, json_fields_and_more(&v));
    canonicalize(v);
}

}  // namespace nm
