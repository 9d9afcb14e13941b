#include "agent/agent_protocol.hpp"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "agent/log_line.hpp"
#include "core/base/error.hpp"
#include "core/device/setting_rules.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "ethtool_ctl/feature_names.hpp"

namespace nm {
namespace {

// The session's message names, in AgentMsg's order.
constexpr std::string_view kAgentMessages[] = {"control_hello", "welcome", "request", "reply", "heartbeat", "rolled_back"};
static_assert(std::size(kAgentMessages) == static_cast<size_t>(AgentMsg::RolledBack) + 1, "a name for every AgentMsg");

struct OpRow {
    AgentOp op;
    std::string_view name;
    bool takes_control;
    std::initializer_list<const char*> fields;         // what the op takes besides type, v, seq and mac
    std::initializer_list<const char*> optional = {};  // what it may take besides those
};

// THE table of request operations.
const OpRow kOps[] = {
    {AgentOp::Ping, "ping", false, {}},
    {AgentOp::Read, "read", false, {agent_field::kIfname}},
    {AgentOp::Validate, "validate", false, {agent_field::kIfname, agent_field::kSettings}},
    {AgentOp::Apply, "apply", true, {agent_field::kIfname, agent_field::kSettings, agent_field::kConfirmMs}, {agent_field::kLinkWaitMs}},
    {AgentOp::Confirm, "confirm", true, {agent_field::kChange}},
    {AgentOp::Restore, "restore", true, {}},
    {AgentOp::Describe, "describe", false, {agent_field::kIfname}},
    {AgentOp::Unsupported, "unsupported", false, {agent_field::kIfname, agent_field::kSettings}},
};

const OpRow& row(AgentOp op) {
    for (const auto& r : kOps) {
        if (r.op == op) return r;
    }
    return kOps[0];
}

[[noreturn]] void refuse(WireError kind, std::string message) { throw AgentRefusal{kind, std::move(message)}; }

// settings.tuning, every field checked: {channels|rings|coalesce: {name: uint32}, rps|xps|irq_affinity:
// {queue: text}, napi: {name: uint64}, sysctl: {allow-listed name: text}, qdisc: QdiscSpec of an allow-listed
// kind}; qdisc_original is refused (the agent restores from what it captured). Whether the device takes the values (a CPU list, a count) is the device's check.
TuningRequest parse_tuning(const Json& j) {
    const auto bad = [](const std::string& field, const std::string& expected, const Json& got) {
        refuse(WireError::Usage,
               "bad request: \"settings.tuning" + (field.empty() ? "" : "." + field) + "\" must be " + expected + ", got " + quoted_value(got));
    };
    if (!j.is_object()) bad("", "an object", j);
    const auto counts = [&](const std::string& kind, const Json& v, uint64_t max, auto& out) {
        if (!v.is_object()) bad(kind, "an object of name: integer", v);
        for (const auto& [name, n] : v.items()) {
            const auto u = as_unsigned(n);
            if (!u || *u > max) bad(kind + "." + name, "an integer from 0 to " + std::to_string(max), n);
            out[name] = static_cast<typename std::decay_t<decltype(out)>::mapped_type>(*u);
        }
    };
    const auto texts = [&](const std::string& kind, const Json& v, auto& out) {
        if (!v.is_object()) bad(kind, "an object of name: string", v);
        for (const auto& [name, text] : v.items()) {
            if (!text.is_string() || text.template get_ref<const std::string&>().size() > 4096) bad(kind + "." + name, "a string", text);
            out[name] = text.template get<std::string>();
        }
    };
    TuningRequest t;
    for (const auto& [kind, v] : j.items()) {
        if (kind == "channels") counts(kind, v, UINT32_MAX, t.channels);
        else if (kind == "rings") counts(kind, v, UINT32_MAX, t.rings);
        else if (kind == "coalesce") counts(kind, v, UINT32_MAX, t.coalesce);
        else if (kind == "napi") counts(kind, v, UINT64_MAX, t.napi);
        else if (kind == "rps") texts(kind, v, t.rps);
        else if (kind == "xps") texts(kind, v, t.xps);
        else if (kind == "irq_affinity") texts(kind, v, t.irq_affinity);
        else if (kind == "sysctl") {
            texts(kind, v, t.sysctl);
            for (const auto& [name, value] : t.sysctl) {
                if (find_sysctl(name) == nullptr) {
                    refuse(WireError::Refused,
                           "settings control refused: sysctl " + quoted_value(name) + " is not on the allow-list of network sysctls");
                }
            }
        } else if (kind == "qdisc") {
            if (!v.is_object()) bad(kind, "an object", v);
            try {
                t.qdisc = v.get<QdiscSpec>();
            } catch (const nlohmann::json::exception& e) {
                bad(kind, std::string("a qdisc (") + e.what() + ")", v);
            }
            // Checked here, before the device's probe: a kind off the allow-list never reaches the kernel
            // (which would autoload its module).
            if (!qdisc_kind_allowed(t.qdisc->kind)) {
                refuse(WireError::Refused, "settings control refused: qdisc kind " + quoted_value(t.qdisc->kind) +
                                               " is not on the allow-list (noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel)");
            }
        } else if (kind == "qdisc_original") {
            // The agent puts its qdisc tree back from its own snapshot and journal, never from a client's bytes.
            refuse(WireError::Refused,
                   "settings control refused: \"settings.tuning.qdisc_original\" is not taken from clients; the agent restores the qdisc tree it "
                   "captured itself");
        } else {
            refuse(WireError::Usage, "bad request: unknown field " + quoted_value("settings.tuning." + kind));
        }
    }
    // Every name and value passes the checks every way in shares (core/device/setting_rules.hpp): no name
    // a client sends can form a path outside the interface's sysfs directory or the allow-listed sysctls.
    try {
        check_tuning_request(t, "settings.tuning");
    } catch (const Error& e) {
        refuse(WireError::Refused, std::string("settings control refused: ") + e.what());
    }
    return t;
}

LinkSettings parse_settings(const Json& j) {
    if (!j.is_object()) refuse(WireError::Usage, "bad request: \"settings\" must be an object {mtu, features, tuning}");
    LinkSettings s;
    for (const auto& [key, value] : j.items()) {
        if (key == "mtu") {
            if (value.is_null()) continue;
            const auto mtu = as_unsigned(value);
            if (!mtu || *mtu > 0xffffffffULL) {
                refuse(WireError::Usage, "bad request: \"settings.mtu\" must be an unsigned 32-bit integer or null, got " + quoted_value(value));
            }
            s.mtu = static_cast<uint32_t>(*mtu);
        } else if (key == "features") {
            if (!value.is_object()) refuse(WireError::Usage, "bad request: \"settings.features\" must be an object of name: true|false");
            for (const auto& [name, on] : value.items()) {
                if (!on.is_boolean())
                    refuse(WireError::Usage, "bad request: feature " + quoted_value(name) + " must be true or false, got " + quoted_value(on));
                if (!agent_allows_feature(name)) {
                    refuse(WireError::Refused,
                           "settings control refused: feature " + quoted_value(name) + " is not an offload the agent lets a client change");
                }
                s.features[name] = on.get<bool>();
            }
        } else if (key == "tuning") {
            s.tuning = parse_tuning(value);
        } else {
            refuse(WireError::Usage, "bad request: unknown field " + quoted_value("settings." + key));
        }
    }
    if (s.empty()) refuse(WireError::Usage, "bad request: \"settings\" asks for nothing");
    return s;
}

}  // namespace

std::string_view msg_name(AgentMsg type) { return kAgentMessages[static_cast<size_t>(type)]; }

std::optional<AgentMsg> agent_msg_type(const Json& message) {
    const auto name = msg_type_name(message);
    if (!name) return std::nullopt;
    const auto at = std::find(std::begin(kAgentMessages), std::end(kAgentMessages), *name);
    if (at == std::end(kAgentMessages)) return std::nullopt;
    return static_cast<AgentMsg>(at - std::begin(kAgentMessages));
}

bool is(const Json& message, AgentMsg type) { return agent_msg_type(message) == type; }

std::string_view op_name(AgentOp op) { return row(op).name; }

std::optional<AgentOp> op_from_name(std::string_view name) {
    for (const auto& r : kOps) {
        if (r.name == name) return r.op;
    }
    return std::nullopt;
}

bool takes_control(AgentOp op) { return row(op).takes_control; }

bool agent_allows_feature(std::string_view typed) {
    if (std::find(kAgentFeatureGroups.begin(), kAgentFeatureGroups.end(), typed) != kAgentFeatureGroups.end()) return true;
    return std::any_of(kAgentFeaturePatterns.begin(), kAgentFeaturePatterns.end(),
                       [&](std::string_view pattern) { return feature_pattern_match(typed, pattern); });
}

std::vector<std::string> default_agent_kinds() {
    std::vector<std::string> out;
    for (const auto& k : kAgentSettingKinds) {
        if (k.by_default) out.emplace_back(k.name);
    }
    return out;
}

std::vector<std::string> parse_agent_kinds(const std::vector<std::string>& words) {
    // The whole list as the user gave it, for the error (the CLI may have split it at its commas already).
    std::string given;
    for (const auto& word : words) given += (given.empty() ? "" : ",") + word;
    std::set<std::string> chosen;
    for (const auto& word : words) {
        std::stringstream list(word);
        std::string w;
        bool any = false;
        while (std::getline(list, w, ',')) {
            any = true;
            if (w == "default") {
                for (const auto& k : default_agent_kinds()) chosen.insert(k);
            } else if (w == "all") {
                for (const auto& k : kAgentSettingKinds) chosen.emplace(k.name);
            } else if (std::any_of(kAgentSettingKinds.begin(), kAgentSettingKinds.end(), [&](const auto& k) { return k.name == w; })) {
                chosen.insert(w);
            } else {
                std::string names;
                for (const auto& k : kAgentSettingKinds) names += std::string(names.empty() ? "" : ", ") + std::string(k.name);
                throw usage_error("--allow-kinds " + given + ": unknown kind " + quoted_value(w) + "; expected default, all or kinds of " + names);
            }
        }
        if (!any) throw usage_error("--allow-kinds: expected a comma-separated list of kinds");
    }
    std::vector<std::string> out;
    for (const auto& k : kAgentSettingKinds) {
        if (chosen.count(std::string(k.name))) out.emplace_back(k.name);
    }
    return out;
}

std::vector<std::string> setting_kinds(const LinkSettings& settings) {
    const TuningRequest& t = settings.tuning;
    const std::map<std::string_view, bool> touched = {{"mtu", settings.mtu.has_value()},
                                                      {"offloads", !settings.features.empty()},
                                                      {"channels", !t.channels.empty()},
                                                      {"rings", !t.rings.empty()},
                                                      {"coalesce", !t.coalesce.empty()},
                                                      {"rps", !t.rps.empty()},
                                                      {"xps", !t.xps.empty()},
                                                      {"napi", !t.napi.empty()},
                                                      {"qdisc", t.qdisc.has_value() || t.qdisc_original.has_value()},
                                                      {"irq_affinity", !t.irq_affinity.empty()},
                                                      {"sysctl", !t.sysctl.empty()}};
    std::vector<std::string> out;
    for (const auto& k : kAgentSettingKinds) {
        if (touched.at(k.name)) out.emplace_back(k.name);
    }
    return out;
}

AgentRequest parse_agent_request(const Json& message) {
    if (!message.is_object()) refuse(WireError::Protocol, "bad request: not an object");
    const auto op_it = message.find(agent_field::kOp);
    if (op_it == message.end() || !op_it->is_string()) refuse(WireError::Usage, "bad request: no \"op\"");
    const auto op = op_from_name(op_it->get_ref<const std::string&>());
    if (!op) refuse(WireError::Usage, "unknown operation " + quoted_value(*op_it));
    const OpRow& r = row(*op);
    for (const auto& item : message.items()) {
        const std::string& key = item.key();
        if (key == "type" || key == "v" || key == agent_field::kSeq || key == agent_field::kMac || key == agent_field::kOp) continue;
        const auto named = [&](const char* f) { return key == f; };
        if (std::none_of(r.fields.begin(), r.fields.end(), named) && std::none_of(r.optional.begin(), r.optional.end(), named)) {
            refuse(WireError::Usage, "bad request: " + std::string(r.name) + " takes no field " + quoted_value(key));
        }
    }
    for (const char* f : r.fields) {
        if (!message.contains(f)) refuse(WireError::Usage, "bad request: " + std::string(r.name) + " needs \"" + f + "\"");
    }
    AgentRequest req;
    req.op = *op;
    if (const auto it = message.find(agent_field::kIfname); it != message.end()) {
        if (!it->is_string() || it->get_ref<const std::string&>().empty() || it->get_ref<const std::string&>().size() > 15) {
            refuse(WireError::Usage, "bad request: \"ifname\" must be an interface name (1-15 characters), got " + quoted_value(*it));
        }
        req.ifname = it->get<std::string>();
    }
    if (const auto it = message.find(agent_field::kSettings); it != message.end()) req.settings = parse_settings(*it);
    if (const auto it = message.find(agent_field::kConfirmMs); it != message.end()) {
        const auto ms = as_unsigned(*it);
        if (!ms || *ms < static_cast<uint64_t>(kMinConfirmWindow.count()) || *ms > static_cast<uint64_t>(kMaxConfirmWindow.count())) {
            refuse(WireError::Usage, "bad request: \"confirm_ms\" must be an integer from " + std::to_string(kMinConfirmWindow.count()) + " to " +
                                         std::to_string(kMaxConfirmWindow.count()) + ", got " + quoted_value(*it));
        }
        req.confirm_window = std::chrono::milliseconds(static_cast<int64_t>(*ms));
    }
    if (const auto it = message.find(agent_field::kLinkWaitMs); it != message.end()) {
        const auto ms = as_unsigned(*it);
        if (!ms || *ms > static_cast<uint64_t>(kMaxLinkWait.count())) {
            refuse(WireError::Usage, "bad request: \"link_wait_ms\" must be an integer from 0 to " + std::to_string(kMaxLinkWait.count()) + ", got " +
                                         quoted_value(*it));
        }
        req.link_wait = std::chrono::milliseconds(static_cast<int64_t>(*ms));
    }
    if (const auto it = message.find(agent_field::kChange); it != message.end()) {
        const auto id = as_unsigned(*it);
        if (!id || *id == 0) refuse(WireError::Usage, "bad request: \"change\" must be a change id (an integer > 0), got " + quoted_value(*it));
        req.change = *id;
    }
    return req;
}

std::optional<uint64_t> as_unsigned(const Json& value) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (value.is_number_integer() && value.get<int64_t>() >= 0) return static_cast<uint64_t>(value.get<int64_t>());
    return std::nullopt;
}

}  // namespace nm
