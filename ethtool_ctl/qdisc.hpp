#pragma once
// The root qdisc over rtnetlink (RTM_GETQDISC/NEWQDISC/DELQDISC), as `tc qdisc show|replace|del dev IF
// root` does it. Builders and decoders are split from the socket so captured replies can be decoded.
#include <cstdint>
#include <optional>
#include <string>

#include "core/device/tuning_types.hpp"
#include "ethtool_ctl/netlink_socket.hpp"
#include "ethtool_ctl/qdisc_tree.hpp"

namespace nm {

/// The root qdisc of `ifindex` in one RTM_NEWQDISC dump message, or none when the message is another
/// qdisc's (another device, a child). Throws nm::Error (Failed) when malformed.
std::optional<QdiscState> decode_root_qdisc(nl::Bytes message, int32_t ifindex);

/// Checks a spec's parameters against its kind without the kernel: the kind must be on the allow-list
/// (qdisc_kind_allowed: no module is autoloaded for a kind a config or client names); tbf needs rate_bps, burst and limit or
/// latency_ms; pfifo takes only limit; pfifo_fast nothing; htb only default. Throws nm::Error (Usage)
/// naming the parameter.
void check_qdisc_spec(const QdiscSpec& spec);

/// A spec in words, for reports: "tbf rate_bps=1000000000 burst=32768 latency_ms=50".
std::string describe_qdisc(const QdiscSpec& spec);
/// A state in words: "tbf rate_bps=1000000000 burst_bytes=32768 limit=6282768", "noqueue (default)".
std::string describe_qdisc(const QdiscState& state);

/// True when `state` is what `spec` asked (kind, and rate, limit, default where asked).
bool qdisc_matches(const QdiscSpec& spec, const QdiscState& state);

/// The root qdisc of one interface, through a NETLINK_ROUTE socket of the namespace it lives in.
class QdiscControl {
public:
    /// Opens the socket in the calling thread's namespace.
    QdiscControl();

    /// The root qdisc now; none when the device reports none (it is down without a default yet).
    std::optional<QdiscState> root(int32_t ifindex);
    /// `tc qdisc replace dev IF root KIND ...`. Throws nm::Error with the kernel's extack text.
    void replace(int32_t ifindex, const QdiscSpec& spec, const std::string& ifname);
    /// The whole tree now (qdisc_tree.cpp): `tc qdisc show`, `tc class show` and `tc filter show parent X`
    /// for every qdisc and class X, decoded; `refused` says what of it could not be rebuilt.
    QdiscTree tree(int32_t ifindex);
    /// Puts `original` back when the tree now differs: deletes the root (everything below goes with it;
    /// the kernel attaches its default), then adds the original's root, classes, qdiscs below and filters
    /// from their typed options, parents first. Throws nm::Error (Usage) for a refused tree or one off the
    /// allow-list, before any change; (Failed) with the kernel's extack and the step otherwise.
    void rebuild(int32_t ifindex, const QdiscTree& original, const std::string& ifname);

private:
    nl::NetlinkSocket sock_;
};

/// Asks the kernel whether it has `spec.kind` and takes its parameters, by attaching it to the loopback
/// of a fresh network namespace that exists only for this check: nothing of the caller's changes. Throws
/// nm::Error (Usage) with the kernel's reason ("Specified qdisc kind is unknown").
void probe_qdisc(const QdiscSpec& spec);

}  // namespace nm
