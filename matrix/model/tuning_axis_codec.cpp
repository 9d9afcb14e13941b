// A sweep config's tuning axes (channels, rings, coalesce, rps, xps, irq_affinity, napi, sysctl, qdisc):
// each a list of values, a value a plain form or {"name": ..., <fields>}, named after what it asks when it
// gives no name. Every value passes the checks every way in shares (setting_rules.hpp).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include "core/device/cpu_list.hpp"
#include "core/device/qdisc_tree.hpp"
#include "core/device/setting_rules.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "core/device/tuning_codec.hpp"
#include "matrix/model/json_node.hpp"
#include "matrix/model/sweep_config_parts.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm::sweep_json {

namespace {

std::string key_safe(std::string s) {
    for (char& c : s) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '=')) c = '+';
    }
    return s;
}

std::string cpu_list_at(const Node& n) {
    const auto text = n.string("a CPU list such as \"0-1\", \"0,2\", \"all\" or \"none\"");
    try {
        return canonical_cpu_list(text);
    } catch (const Error& e) {
        n.fail_message(e.what());
    }
}

// "1gbit", "100mbit", "64kbit", "1000000" (bits/s), as tc takes rates.
uint64_t rate_at(const Node& n) {
    if (n.json().is_number()) return n.integer(1, UINT64_MAX / 2, "a rate in bits/s or a string such as \"1gbit\"");
    const auto text = n.string("a rate in bits/s or a string such as \"1gbit\"");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        n.fail("a rate such as \"1gbit\", \"100mbit\", \"64kbit\" or \"1000000bit\"");
    }
    const std::string unit = text.substr(used);
    const std::pair<const char*, double> units[] = {{"", 1}, {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12}};
    for (const auto& [u, f] : units) {
        if (unit == u && v > 0) return static_cast<uint64_t>(v * f);
    }
    n.fail("a rate such as \"1gbit\", \"100mbit\", \"64kbit\" or \"1000000bit\"");
}

std::string derived_counts(const std::map<std::string, uint32_t>& m) {
    std::string out;
    for (const auto& [k, v] : m) out += (out.empty() ? "" : "-") + k + std::to_string(v);
    return out;
}

// channels, rings, coalesce: {field: count} (ethtool's names; '_' read as '-', "on"/"off" and booleans as 1/0).
void read_counts(const Node& n, const std::vector<std::string>& fields, std::map<std::string, uint32_t>& out, const std::string& what) {
    std::vector<std::string> allowed = fields;
    allowed.push_back("name");
    n.expect_object(allowed, what);
    for (const auto& [key, value] : n.json().items()) {
        if (key == "name") continue;
        std::string k = key;
        std::replace(k.begin(), k.end(), '_', '-');
        const auto c = n.child(key);
        if (c.json().is_boolean()) out[k] = c.json().get<bool>() ? 1 : 0;
        else if (c.json().is_string()) out[k] = c.on_off() ? 1 : 0;
        else out[k] = static_cast<uint32_t>(c.integer(0, UINT32_MAX, "a non-negative integer"));
    }
    if (out.empty()) n.fail(what + " with at least one field");
}

// rps, xps, irq_affinity: a CPU list for every queue (IRQ), or {queue: CPU list}, plain or under the axis's key.
void read_cpu_lists(const std::string& axis, const Node& n, TuningProfile& p) {
    TuningRequest& t = p.tuning;
    auto& out = axis == "rps" ? t.rps : axis == "xps" ? t.xps : t.irq_affinity;
    const char* prefix = axis == "rps" ? "rx-" : axis == "xps" ? "tx-" : "";
    const std::string what = "a CPU list (\"0-1\", \"all\", \"none\") or {\"name\": ..., \"" + axis + "\": a CPU list or {queue: CPU list}}";
    const auto value = [&](const Node& v) {
        if (v.json().is_string()) {
            out["*"] = cpu_list_at(v);
            p.name = (axis == "irq_affinity" ? std::string("irq") : axis) + "-" + key_safe(out["*"]);
            return;
        }
        if (!v.json().is_object() || v.json().empty()) v.fail(what);
        for (const auto& [q, list] : v.json().items()) {
            const bool ok =
                axis == "irq_affinity"
                    ? (q == "*" || (!q.empty() && q.find_first_not_of("0123456789") == std::string::npos))
                    : (q == "*" || (q.rfind(prefix, 0) == 0 && q.size() > 3 && q.find_first_not_of("0123456789", 3) == std::string::npos));
            if (!ok)
                v.child(q).fail_message(axis == "irq_affinity" ? "expected an IRQ number or \"*\""
                                                               : std::string("expected a queue name \"") + prefix + "N\" or \"*\"");
            out[q] = cpu_list_at(v.child(q));
            p.name += (p.name.empty() ? axis + "-" : "-") + key_safe(q + "=" + out[q]);
        }
    };
    if (n.json().is_object()) {
        n.expect_object({"name", axis}, what);
        value(n.required(axis, what));
    } else {
        value(n);
    }
}

void read_napi(const Node& n, TuningProfile& p) {
    auto& napi = p.tuning.napi;
    n.expect_object({"name", "gro_flush_timeout", "napi_defer_hard_irqs"},
                    "NAPI settings {\"gro_flush_timeout\": 20000, \"napi_defer_hard_irqs\": 2}");
    if (n.has("gro_flush_timeout")) napi["gro_flush_timeout"] = n.child("gro_flush_timeout").integer(0, UINT32_MAX, "nanoseconds, 0 or more");
    if (n.has("napi_defer_hard_irqs")) napi["napi_defer_hard_irqs"] = n.child("napi_defer_hard_irqs").integer(0, INT32_MAX, "a count, 0 or more");
    if (napi.empty()) n.fail("NAPI settings with gro_flush_timeout or napi_defer_hard_irqs");
    for (const auto& [k, v] : napi)
        p.name += (p.name.empty() ? "" : "-") + std::string(k == "gro_flush_timeout" ? "gft" : "defer") + std::to_string(v);
}

// {sysctl name: value}: names from the allow-list, values as sysctl takes them (normalized).
void read_sysctls(const Node& n, TuningProfile& p) {
    auto& sysctl = p.tuning.sysctl;
    if (!n.json().is_object() || n.json().empty()) n.fail("a map of sysctl name -> value {\"net.ipv4.tcp_congestion_control\": \"bbr\"}");
    for (const auto& [key, value] : n.json().items()) {
        if (key == "name") continue;
        const auto c = n.child(key);
        if (find_sysctl(key) == nullptr) {
            c.fail_message("sysctl \"" + key + "\" is not on the allow-list (nicmatrix sweep --help prints it)");
        }
        std::string v;
        if (c.json().is_string()) v = c.json().get<std::string>();
        else if (c.json().is_number_integer()) v = c.json().dump();
        else c.fail("a value as sysctl takes it (a string or an integer)");
        if (v.empty() || v.find('\n') != std::string::npos) c.fail("a non-empty one-line value");
        sysctl[key] = normalize_sysctl_value(v);
        const auto dot = key.rfind('.');
        p.name += (p.name.empty() ? "" : "+") + key.substr(dot + 1) + "=" + key_safe(sysctl[key]);
    }
    if (sysctl.empty()) n.fail("a map of sysctl name -> value with at least one sysctl");
}

// A root qdisc: its kind ("pfifo_fast"), or {"kind", "rate", "burst", "latency_ms", "limit", "default"}.
void read_qdisc(const Node& n, TuningProfile& p) {
    QdiscSpec q;
    if (n.json().is_string()) {
        q.kind = n.string();
    } else {
        n.expect_object({"name", "kind", "rate", "burst", "latency_ms", "limit", "default"},
                        "a qdisc kind (\"pfifo_fast\") or {\"kind\": \"tbf\", \"rate\": \"1gbit\", \"burst\": 32768, \"latency_ms\": 50}");
        q.kind = n.required("kind", "a qdisc kind").string("a qdisc kind");
        if (n.has("rate")) q.rate_bps = rate_at(n.child("rate"));
        if (n.has("burst")) q.burst_bytes = static_cast<uint32_t>(n.child("burst").integer(1, UINT32_MAX, "bytes"));
        if (n.has("latency_ms")) q.latency_ms = n.child("latency_ms").number(0, 1e6, true, "milliseconds");
        if (n.has("limit")) q.limit = static_cast<uint32_t>(n.child("limit").integer(1, UINT32_MAX, "packets (pfifo) or bytes (tbf)"));
        if (n.has("default")) q.default_class = static_cast<uint32_t>(n.child("default").integer(0, 0xffff, "a class minor number"));
    }
    // The allow-list (qdisc_tree.hpp): only kinds whose trees restore can rebuild, and no module autoload.
    if (!qdisc_kind_allowed(q.kind))
        (n.json().is_string() ? n : n.child("kind")).fail("a qdisc kind of noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel");
    p.name = q.kind;
    p.tuning.qdisc = q;
}

TuningProfile parse_axis_value(const std::string& axis, const Node& n) {
    TuningProfile p;
    TuningRequest& t = p.tuning;
    if (axis == "channels") {
        read_counts(n, {"rx", "tx", "other", "combined"}, t.channels, "channel counts {\"rx\": 2, \"tx\": 2} (ethtool -L)");
        p.name = derived_counts(t.channels);
    } else if (axis == "rings") {
        read_counts(n, {"rx", "tx", "rx_jumbo", "rx_mini", "rx-jumbo", "rx-mini"}, t.rings, "ring sizes {\"rx\": 512, \"tx\": 512} (ethtool -G)");
        p.name = derived_counts(t.rings);
    } else if (axis == "coalesce") {
        read_counts(n,
                    {"rx-usecs", "rx-frames", "rx-usecs-irq", "rx-frames-irq", "tx-usecs", "tx-frames", "tx-usecs-irq", "tx-frames-irq",
                     "stats-block-usecs", "adaptive-rx", "adaptive-tx", "pkt-rate-low", "pkt-rate-high", "sample-interval"},
                    t.coalesce, "coalescing by ethtool -C names {\"rx-usecs\": 8, \"adaptive-rx\": \"off\"}");
        p.name = derived_counts(t.coalesce);
    } else if (axis == "rps" || axis == "xps" || axis == "irq_affinity") {
        read_cpu_lists(axis, n, p);
    } else if (axis == "napi") {
        read_napi(n, p);
    } else if (axis == "sysctl") {
        read_sysctls(n, p);
    } else if (axis == "qdisc") {
        read_qdisc(n, p);
    }
    if (n.json().is_object() && n.has("name")) p.name = n.child("name").name();
    if (p.name.size() > 64) p.name = p.name.substr(0, 64);
    // The checks every way in shares (core/device/setting_rules.hpp): queue shapes, allow-lists, qdisc kinds.
    try {
        check_tuning_request(t, "tuning");
    } catch (const Error& e) {
        n.fail_message(e.what());
    }
    return p;
}

}  // namespace

std::vector<TuningProfile> parse_axis(const std::string& axis, const Node& n) {
    std::vector<TuningProfile> out;
    std::set<std::string> names;
    for (const auto& v : n.array("a non-empty array of " + axis + " values", true)) {
        auto p = parse_axis_value(axis, v);
        if (!names.insert(p.name).second) {
            (v.json().is_object() && v.has("name") ? v.child("name") : v)
                .fail_message("the " + axis + " value name \"" + p.name + "\" is used twice; give each value a unique \"name\"");
        }
        out.push_back(std::move(p));
    }
    return out;
}

Json axis_value_json(const std::string& axis, const TuningProfile& p) {
    Json j = Json{{"name", p.name}};
    const TuningRequest& t = p.tuning;
    const auto lists = [](const std::map<std::string, std::string>& m) {
        if (m.size() == 1 && m.count("*")) return Json(m.at("*"));
        return Json(m);
    };
    if (axis == "channels")
        for (const auto& [k, v] : t.channels) j[k] = v;
    if (axis == "rings")
        for (const auto& [k, v] : t.rings) j[k] = v;
    if (axis == "coalesce")
        for (const auto& [k, v] : t.coalesce) j[k] = v;
    if (axis == "rps") j["rps"] = lists(t.rps);
    if (axis == "xps") j["xps"] = lists(t.xps);
    if (axis == "irq_affinity") j["irq_affinity"] = lists(t.irq_affinity);
    if (axis == "napi")
        for (const auto& [k, v] : t.napi) j[k] = v;
    if (axis == "sysctl")
        for (const auto& [k, v] : t.sysctl) j[k] = v;
    if (axis == "qdisc" && t.qdisc) {
        const QdiscSpec& q = *t.qdisc;
        j["kind"] = q.kind;
        if (q.rate_bps) j["rate"] = *q.rate_bps;
        if (q.burst_bytes) j["burst"] = *q.burst_bytes;
        if (q.latency_ms) j["latency_ms"] = *q.latency_ms;
        if (q.limit) j["limit"] = *q.limit;
        if (q.default_class) j["default"] = *q.default_class;
    }
    return j;
}

}  // namespace nm::sweep_json
