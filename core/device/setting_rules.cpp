#include "core/device/setting_rules.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/device/qdisc_tree.hpp"
#include "core/device/sysctl_allow_list.hpp"

namespace nm {
namespace {

constexpr const char* kChannels[] = {"rx", "tx", "other", "combined"};
constexpr const char* kRings[] = {"rx", "tx", "rx-jumbo", "rx-mini"};
constexpr const char* kCoalesce[] = {"rx-usecs",    "rx-frames",    "rx-usecs-irq",  "rx-frames-irq",     "tx-usecs",
                                     "tx-frames",   "tx-usecs-irq", "tx-frames-irq", "stats-block-usecs", "adaptive-rx",
                                     "adaptive-tx", "pkt-rate-low", "pkt-rate-high", "sample-interval"};
constexpr const char* kNapi[] = {"gro_flush_timeout", "napi_defer_hard_irqs"};

bool listed(std::span<const char* const> list, std::string_view name) {
    return std::any_of(list.begin(), list.end(), [&](const char* n) { return name == n; });
}

std::string joined(std::span<const char* const> list) {
    std::string out;
    for (const char* n : list) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

// A decimal number without a sign, leading zero (but "0") or more than `digits` digits.
bool plain_number(std::string_view s, size_t digits) {
    if (s.empty() || s.size() > digits || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
    return s.size() == 1 || s[0] != '0';
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s.substr(0, 64)) {
        if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
            out += kHex[static_cast<unsigned char>(c) & 0xf];
        } else {
            out += c;
        }
    }
    return out + (s.size() > 64 ? "...\"" : "\"");
}

}  // namespace

std::span<const char* const> setting_names(std::string_view kind) {
    if (kind == "channels") return kChannels;
    if (kind == "rings") return kRings;
    if (kind == "coalesce") return kCoalesce;
    if (kind == "napi") return kNapi;
    return {};
}

std::string setting_name_problem(std::string_view kind, std::string_view name, bool allow_all) {
    if (name == "*" && allow_all && (kind == "rps" || kind == "xps" || kind == "irq_affinity")) return {};
    if (const auto list = setting_names(kind); !list.empty()) {
        return listed(list, name) ? std::string() : quoted(name) + " is not one of " + joined(list);
    }
    if (kind == "rps" || kind == "xps") {
        const std::string_view prefix = kind == "rps" ? "rx-" : "tx-";
        if (name.substr(0, 3) == prefix && plain_number(name.substr(3), 5)) return {};
        return quoted(name) + " is not a queue name \"" + std::string(prefix) + "N\"" + (allow_all ? " or \"*\"" : "");
    }
    if (kind == "irq_affinity") {
        return plain_number(name, 7) ? std::string() : quoted(name) + " is not an IRQ number" + (allow_all ? " or \"*\"" : "");
    }
    if (kind == "sysctl") {
        return find_sysctl(name) != nullptr ? std::string()
                                            : quoted(name) + " is not on the allow-list of network sysctls (nicmatrix sweep --help prints it)";
    }
    return quoted(kind) + " is not a kind of setting";
}

std::string setting_value_problem(std::string_view kind, std::string_view name, std::string_view value) {
    if (kind == "rps" || kind == "xps" || kind == "irq_affinity") {
        if (value == "all" || value == "none") return {};
        if (value.empty() || value.size() > 4096 || value.find_first_not_of("0123456789,-") != std::string_view::npos) {
            return quoted(value) + " is not a CPU list (\"0-1\", \"0,2\", \"all\", \"none\")";
        }
        return {};
    }
    if (kind == "sysctl") {
        if (value.empty() || value.size() > 256 || value.find_first_of(std::string_view("\n\0", 2)) != std::string_view::npos) {
            return quoted(value) + " is not a one-line value of at most 256 bytes";
        }
        if (name == "net.ipv4.tcp_congestion_control" && value.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos) {
            return quoted(value) + " is not a congestion control's name";
        }
    }
    return {};
}

bool interface_name_ok(std::string_view name) {
    if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
    return std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || c == ':' || c == '\0' || c == ' ' || c == '\t' || c == '\n'; });
}

void check_tuning_request(const TuningRequest& t, std::string_view field) {
    const auto check = [&](const char* kind, const auto& map, bool texts) {
        for (const auto& [name, value] : map) {
            std::string why = setting_name_problem(kind, name);
            if (why.empty() && texts) {
                if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) why = setting_value_problem(kind, name, value);
            }
            if (!why.empty()) throw usage_error(std::string(field) + "." + kind + ": " + why);
        }
    };
    check("channels", t.channels, false);
    check("rings", t.rings, false);
    check("coalesce", t.coalesce, false);
    check("rps", t.rps, true);
    check("xps", t.xps, true);
    check("irq_affinity", t.irq_affinity, true);
    check("napi", t.napi, false);
    check("sysctl", t.sysctl, true);
    if (t.qdisc && !qdisc_kind_allowed(t.qdisc->kind)) {
        throw usage_error(std::string(field) + ".qdisc: kind " + quoted(t.qdisc->kind) +
                          " is not on the allow-list of qdisc kinds (core/device/qdisc_tree.hpp)");
    }
    if (t.qdisc_original) {
        if (const std::string why = check_qdisc_tree(*t.qdisc_original); !why.empty())
            throw usage_error(std::string(field) + ".qdisc_original: " + why);
    }
}

void check_tuning_state(const TuningState& t, std::string_view field) {
    const auto check = [&](const char* kind, const auto& map) {
        for (const auto& entry : map) {
            const std::string why = setting_name_problem(kind, entry.first, false);
            if (!why.empty()) throw usage_error(std::string(field) + "." + kind + ": " + why);
        }
    };
    check("rps", t.rps);
    check("xps", t.xps);
    check("irq_affinity", t.irq_affinity);
    check("napi", t.napi);
    check("sysctl", t.sysctl);
    for (const auto& [name, value] : t.sysctl) {
        if (const std::string why = setting_value_problem("sysctl", name, value); !why.empty())
            throw usage_error(std::string(field) + ".sysctl." + name + ": " + why);
    }
    for (const char* kind : {"rps", "xps", "irq_affinity"}) {
        const auto& map = std::string_view(kind) == "rps" ? t.rps : std::string_view(kind) == "xps" ? t.xps : t.irq_affinity;
        for (const auto& [name, value] : map) {
            if (const std::string why = setting_value_problem(kind, name, value); !why.empty())
                throw usage_error(std::string(field) + "." + kind + "." + name + ": " + why);
        }
    }
}

std::string setting_key_problem(std::string_view key) {
    if (key == "mtu" || key == "qdisc") return {};
    const auto dot = key.find('.');
    if (dot == std::string_view::npos) return quoted(key) + " names no setting";
    const std::string_view kind = key.substr(0, dot), name = key.substr(dot + 1);
    if (kind == "features") {
        const bool ok =
            !name.empty() && name.size() <= 64 && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") == std::string_view::npos;
        return ok ? std::string() : quoted(name) + " is not a kernel feature name";
    }
    return setting_name_problem(kind, name, false);
}

}  // namespace nm
