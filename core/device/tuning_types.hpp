#pragma once
// Value types of the settings beyond offloads and MTU (issue 15): queues (channels, rings), interrupt
// moderation (coalescing, NAPI), steering (RPS, XPS, IRQ affinity), the namespace's allow-listed network
// sysctls and the root qdisc. What is asked (TuningRequest, part of LinkSettings) and what the kernel has
// (TuningState, part of LinkState). Produced by ethtool_ctl and matrix; JSON in json_codec_tuning.cpp.
//
// Names are the ones users type: channels "rx", "tx", "other", "combined" (`ethtool -L`); rings "rx",
// "tx", "rx-jumbo", "rx-mini" (`ethtool -G`); coalescing by `ethtool -C` names ("rx-usecs",
// "adaptive-rx"); queues as sysfs names them ("rx-0", "tx-1"); CPU lists as the kernel prints them
// ("0-1", "0,2"), "none" for the empty set.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/base/field_list.hpp"
#include "core/device/qdisc_tree.hpp"

namespace nm {

/// The root qdisc asked for: a kind and the parameters that kind takes (the others must be unset).
struct QdiscSpec {
    std::string kind;                       ///< "pfifo", "pfifo_fast", "tbf", "htb" (any kind the kernel has)
    std::optional<uint32_t> limit;          ///< pfifo: packets; tbf: bytes queued (instead of latency_ms)
    std::optional<uint64_t> rate_bps;       ///< tbf: the token rate, bits/s
    std::optional<uint32_t> burst_bytes;    ///< tbf: the bucket size
    std::optional<double> latency_ms;       ///< tbf: the longest a packet may wait (gives the limit)
    std::optional<uint32_t> default_class;  ///< htb: the minor of the class unclassified traffic goes to

    bool operator==(const QdiscSpec& o) const {
        return kind == o.kind && limit == o.limit && rate_bps == o.rate_bps && burst_bytes == o.burst_bytes && latency_ms == o.latency_ms &&
               default_class == o.default_class;
    }
};

constexpr auto json_fields(const QdiscSpec*) {
    using S = QdiscSpec;
    return field_list(field("kind", &S::kind, kFieldRequired), field("limit", &S::limit, kFieldOmitEmpty),
                      field("rate_bps", &S::rate_bps, kFieldOmitEmpty), field("burst", &S::burst_bytes, kFieldOmitEmpty),
                      field("latency_ms", &S::latency_ms, kFieldOmitEmpty), field("default", &S::default_class, kFieldOmitEmpty));
}

/// The root qdisc an interface has, as RTM_GETQDISC reports it, for people and for matching a QdiscSpec.
/// Putting a qdisc back goes through the whole tree (QdiscTree), never through this summary.
struct QdiscState {
    std::string kind;                        ///< "noqueue", "mq", "fq_codel", "tbf", ...
    uint32_t handle = 0;                     ///< 0 for the one the kernel attached by itself (the default)
    std::map<std::string, uint64_t> params;  ///< decoded for people: "limit", "rate_bps", "burst_bytes", "default_class"

    bool builtin() const { return handle == 0; }
    bool operator==(const QdiscState& o) const { return kind == o.kind && handle == o.handle && params == o.params; }
};

/// The codec adds the computed "default" (handle 0: the kernel's own; written, not read).
constexpr auto json_fields_and_more(const QdiscState*) {
    using S = QdiscState;
    return field_list(field("kind", &S::kind, kFieldRequired), field("handle", &S::handle), field("params", &S::params));
}

/// What a cell asks of one interface besides MTU and features. Empty fields are left as they are.
struct TuningRequest {
    std::map<std::string, uint32_t> channels;         ///< "rx", "tx", "other", "combined" -> count
    std::map<std::string, uint32_t> rings;            ///< "rx", "tx", "rx-jumbo", "rx-mini" -> entries
    std::map<std::string, uint32_t> coalesce;         ///< `ethtool -C` name -> value (adaptive-rx: 0/1)
    std::map<std::string, std::string> rps;           ///< queue ("rx-0", or "*" for every rx queue) -> CPU list
    std::map<std::string, std::string> xps;           ///< queue ("tx-0", or "*" for every tx queue) -> CPU list
    std::map<std::string, std::string> irq_affinity;  ///< IRQ number (or "*" for every interrupt of the interface) -> CPU list
    std::map<std::string, uint64_t> napi;             ///< "gro_flush_timeout" (ns), "napi_defer_hard_irqs"
    std::map<std::string, std::string> sysctl;        ///< allow-listed name ("net.ipv4.tcp_congestion_control") -> value
    std::optional<QdiscSpec> qdisc;                   ///< the root qdisc
    /// Restore only, never from a client: put this whole tree back (the device's own journal or snapshot).
    std::optional<QdiscTree> qdisc_original;

    bool empty() const {
        return channels.empty() && rings.empty() && coalesce.empty() && rps.empty() && xps.empty() && irq_affinity.empty() && napi.empty() &&
               sysctl.empty() && !qdisc && !qdisc_original;
    }
};

constexpr auto json_fields(const TuningRequest*) {
    using S = TuningRequest;
    return field_list(field("channels", &S::channels, kFieldOmitEmpty), field("rings", &S::rings, kFieldOmitEmpty),
                      field("coalesce", &S::coalesce, kFieldOmitEmpty), field("rps", &S::rps, kFieldOmitEmpty),
                      field("xps", &S::xps, kFieldOmitEmpty), field("irq_affinity", &S::irq_affinity, kFieldOmitEmpty),
                      field("napi", &S::napi, kFieldOmitEmpty), field("sysctl", &S::sysctl, kFieldOmitEmpty),
                      field("qdisc", &S::qdisc, kFieldOmitEmpty | kFieldIfTyped),
                      field("qdisc_original", &S::qdisc_original, kFieldOmitEmpty | kFieldIfTyped));
}

/// What an interface and its namespace have now, in the names TuningRequest uses.
struct TuningState {
    std::map<std::string, uint64_t> channels;      ///< current counts the driver reports (none: no channels op)
    std::map<std::string, uint64_t> channels_max;  ///< the driver's maximums
    std::map<std::string, uint64_t> rings;
    std::map<std::string, uint64_t> coalesce;
    std::map<std::string, std::string> rps;           ///< every rx queue -> CPU list
    std::map<std::string, std::string> xps;           ///< every tx queue -> CPU list (none when it cannot be read)
    std::map<std::string, std::string> irq_affinity;  ///< IRQ number -> CPU list (smp_affinity_list)
    std::map<std::string, uint64_t> napi;             ///< "gro_flush_timeout", "napi_defer_hard_irqs"
    std::map<std::string, std::string> sysctl;        ///< every allow-listed sysctl the namespace has
    std::optional<QdiscState> qdisc;
    /// The whole tree below and with the root (qdiscs, classes, filters); `refused` when it cannot be rebuilt.
    std::optional<QdiscTree> qdisc_tree;
    /// Kinds this interface cannot take, with the kernel's reason: "rings" -> "Operation not supported".
    std::map<std::string, std::string> unsupported;
};

constexpr auto json_fields(const TuningState*) {
    using S = TuningState;
    return field_list(field("channels", &S::channels), field("rings", &S::rings), field("coalesce", &S::coalesce), field("rps", &S::rps),
                      field("xps", &S::xps), field("irq_affinity", &S::irq_affinity), field("napi", &S::napi), field("sysctl", &S::sysctl),
                      field("channels_max", &S::channels_max), field("qdisc", &S::qdisc, kFieldIfTyped),
                      field("qdisc_tree", &S::qdisc_tree, kFieldOmitEmpty | kFieldIfTyped), field("unsupported", &S::unsupported));
}

/// Whether the root qdisc `now` is `original` again (a kernel-attached one: the same kind, attached by
/// the kernel; one that was configured: the same kind, handle and options). True when nothing was known.
bool qdisc_back(const std::optional<QdiscState>& original, const std::optional<QdiscState>& now);

/// What to send to put the tuning `original` back over `now`: the original's value of every key that
/// moved, and the original qdisc tree when it is not back (and could be rebuilt: not `refused`).
TuningRequest tuning_back_to(const TuningState& original, const TuningState& now);

}  // namespace nm
