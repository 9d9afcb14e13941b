#pragma once
// Pinning the engine's worker threads to CPUs (iperf3's -A) and saying which CPUs exist: the kernel's
// CPU-list syntax ("0-3,8"), the online CPUs of this host, and the check that names a CPU that is not
// there. The parsers are pure; reading sysfs and pinning are small wrappers.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nm {

/// Parses the kernel's CPU-list format (/sys/devices/system/cpu/online, cpuset.cpus): "0-3,8,10-11"
/// -> {0,1,2,3,8,10,11}, ascending, each once. Throws nm::Error (Usage) naming `what` on bad text.
std::vector<uint32_t> parse_cpu_list(std::string_view text, const std::string& what);

/// The reverse: {0,1,2,3,8} -> "0-3,8"; "" for none.
std::string format_cpu_list(const std::vector<uint32_t>& cpus);

/// `run -A CLIENT[,SERVER]`: each side a CPU list whose items are joined by '+' ("0+2", "0-1"), since ','
/// separates the two sides. "" on one side = not pinned. Throws nm::Error (Usage) naming -A.
std::pair<std::vector<uint32_t>, std::vector<uint32_t>> parse_affinity_option(std::string_view text);

/// The CPUs of this host that are online (/sys/devices/system/cpu/online; this process's affinity mask
/// when sysfs cannot be read). Never empty.
std::vector<uint32_t> online_cpus();

/// Throws nm::Error (Usage) when a CPU of `cpus` is not in `online`, naming it and `who` ("client",
/// "server"): "affinity: server CPU 7 does not exist on this host (online CPUs: 0-1)". Pure.
void check_cpus(const std::vector<uint32_t>& cpus, const std::vector<uint32_t>& online, const std::string& who);

/// Pins the calling thread to `cpus` (nothing when empty). Throws nm::Error naming the CPUs and errno
/// (EINVAL: none of them is in this process's cpuset).
void pin_current_thread(const std::vector<uint32_t>& cpus);

}  // namespace nm
