#pragma once
// The one check of every setting name and value, whatever way it came in: an agent request, a sweep
// config, `nicmatrix set`, a journal read back by `restore`, Python. Declared once here; ethtool_ctl checks
// again at the last moment, before a name becomes part of a path (tuning_files.cpp). The names a user may
// give a kind are fixed lists (channels, rings, coalescing, NAPI, sysctls) or a shape that cannot form a
// path ("rx-N", "tx-N", an IRQ number); a CPU list, a sysctl value and a qdisc kind are checked too.
#include <span>
#include <string>
#include <string_view>

#include "core/device/tuning_types.hpp"

namespace nm {

/// Why `name` is no setting of `kind` ("channels", "rings", "coalesce", "rps", "xps", "irq_affinity",
/// "napi", "sysctl"), in words; "" when it is one. "*" (every queue, every IRQ) is allowed only where
/// `allow_all` says so (a request; never a state or a journal).
std::string setting_name_problem(std::string_view kind, std::string_view name, bool allow_all = true);

/// The names a kind takes, for messages and --help ("rx, tx, other, combined"); empty for the shaped kinds.
std::span<const char* const> setting_names(std::string_view kind);

/// Why `value` is no value of setting `kind`.`name` (a CPU list: digits, ',' and '-', or "all"/"none"; a
/// sysctl: one line, no NUL, at most 256 bytes, a congestion control a plain name); "" when it is one.
std::string setting_value_problem(std::string_view kind, std::string_view name, std::string_view value);

/// Whether `name` can be an interface name: 1 to 15 bytes, no '/', NUL, blank or ':', not "." or "..".
bool interface_name_ok(std::string_view name);

/// Throws nm::Error (Usage) naming `field` + ".KIND.NAME" and why, for the first name or value of `t` that
/// fails the checks above, a qdisc kind off qdisc_tree.hpp's allow-list, or a tree check_qdisc_tree refuses. `field` is how the caller's input spells the place ("settings.tuning").
void check_tuning_request(const TuningRequest& t, std::string_view field);

/// The same for a state read back from a file (a journal): no "*", every name of its kind's list or shape.
void check_tuning_state(const TuningState& t, std::string_view field);

/// Whether `key` names one setting as the journal keys them ("mtu", "features.NAME", "KIND.NAME", "qdisc").
std::string setting_key_problem(std::string_view key);

}  // namespace nm
