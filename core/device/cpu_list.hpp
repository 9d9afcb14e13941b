#pragma once
// CPU lists as the kernel prints them ("0-1", "0,2", "" for none) and the hex masks sysfs takes for
// rps_cpus/xps_cpus ("3", "00000000,00000003"). Pure functions, so the codec and every layer share them.
#include <set>
#include <string>
#include <string_view>

namespace nm {

/// Parses "0-1,4", "all" (every CPU below `cpu_count`), "none" or "". Throws nm::Error (Usage) for bad
/// syntax or a CPU at or above `cpu_count` ("CPU 7 in \"0,7\" does not exist on this host"); a
/// cpu_count of 0 checks only the syntax (and "all" then means nothing in particular: it throws).
std::set<unsigned> parse_cpu_list(std::string_view text, unsigned cpu_count);

/// The kernel's form of a set: "0-1,4"; "none" for the empty set.
std::string format_cpu_list(const std::set<unsigned>& cpus);

/// A set as the hex mask sysfs takes ("3" for 0-1, "0" for none), with commas every 32 bits.
std::string cpu_mask_hex(const std::set<unsigned>& cpus);

/// A mask as sysfs prints it ("00000000,00000003", "3") back into a set. Throws nm::Error (Failed).
std::set<unsigned> parse_cpu_mask_hex(std::string_view mask);

/// Checks a list's syntax without a host ("0-1", "all", "none") and returns it in canonical form, "all"
/// and "none" kept as words. Throws nm::Error (Usage).
std::string canonical_cpu_list(std::string_view text);

}  // namespace nm
