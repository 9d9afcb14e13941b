#pragma once
// Value types of who the ends of a measurement are: a host (kernel, CPUs, their layout and idle states,
// sysctls), its interface (driver, firmware, MTU range, the settings it had) and the nicmatrix build that
// described it. Read by core/host (this machine) and the peer agent (the other), kept in results files.
// JSON in host_codec.hpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/device/device_types.hpp"
#include "core/device/tuning_types.hpp"
#include "core/traffic/cpu_types.hpp"

namespace nm {

/// The state one end really had (during a sweep's cell, as read back after applying; before the sweep).
struct EndSettings {
    uint32_t mtu = 0;
    std::map<std::string, bool> features;  ///< active state of every changeable kernel feature
    /// The kinds of tuning the sweep has axes of, as read back after applying (empty kinds left out).
    std::optional<TuningState> tuning;
};

/// Who one end is: enough to tell two NICs and two hosts apart in a comparison.
struct InterfaceInfo {
    std::string name;
    std::string netns;
    std::string driver;
    std::string firmware;
    std::string driver_version;  ///< `ethtool -i` version (the module's, or the kernel release for in-tree drivers)
    std::string bus_info;
    /// An emulated NIC (the VM lab): the emulator ("qemu 7.2.19") and its device model ("e1000e"), part of
    /// the NIC's identity with the driver; empty for a real NIC or veth.
    std::string emulator;
    std::string device_model;
    std::optional<uint32_t> speed_mbps;
    uint32_t mtu_min = 0;
    uint32_t mtu_max = 0;
    EndSettings original;               ///< MTU and every changeable feature before the sweep (active state)
    std::optional<TuningState> tuning;  ///< every tuning kind before the sweep (queues, steering, NAPI, sysctls, qdisc)
    std::map<std::string, uint64_t> rings;
    std::map<std::string, uint64_t> coalesce;
    std::map<std::string, uint64_t> channels;
    std::optional<InterfaceSystem> system;  ///< none when it could not be read (an end without an agent that reports it)
};

constexpr auto json_fields(const InterfaceInfo*) {
    using S = InterfaceInfo;
    return field_list(field("name", &S::name, kFieldRequired), field("netns", &S::netns), field("driver", &S::driver, kFieldRequired),
                      field("firmware", &S::firmware), field("bus_info", &S::bus_info), field("speed_mbps", &S::speed_mbps),
                      field("mtu_min", &S::mtu_min, kFieldRequired), field("mtu_max", &S::mtu_max, kFieldRequired),
                      field("original", &S::original, kFieldRequired), field("rings", &S::rings), field("coalesce", &S::coalesce),
                      field("channels", &S::channels), field("tuning", &S::tuning, kFieldOmitEmpty | kFieldIfTyped),
                      field("driver_version", &S::driver_version), field("system", &S::system), field("emulator", &S::emulator, kFieldOmitEmpty),
                      field("device_model", &S::device_model, kFieldOmitEmpty));
}

/// One logical CPU as /sys/devices/system/cpu shows it.
struct CpuTopology {
    uint32_t cpu = 0;
    std::optional<int> core;              ///< topology/core_id
    std::optional<int> package;           ///< topology/physical_package_id
    std::optional<int> node;              ///< the NUMA node holding it (nodeN link); none without NUMA in sysfs
    std::optional<std::string> governor;  ///< cpufreq/scaling_governor; none where there is no cpufreq (VMs)
    std::optional<uint64_t> freq_khz;     ///< cpufreq/scaling_cur_freq when the layout was read
};

constexpr auto json_fields(const CpuTopology*) {
    using S = CpuTopology;
    return field_list(field("cpu", &S::cpu, kFieldRequired), field("core", &S::core), field("package", &S::package), field("node", &S::node),
                      field("governor", &S::governor), field("freq_khz", &S::freq_khz));
}

/// SMT and NUMA layout of a host, and each CPU's frequency governor.
struct CpuLayout {
    std::optional<bool> smt_active;         ///< /sys/devices/system/cpu/smt/active; none when absent
    std::map<int, std::string> numa_nodes;  ///< node -> its cpulist ("0-3"); empty without NUMA in sysfs
    std::vector<CpuTopology> cpus;          ///< the online CPUs, by number
};

/// The codec adds "numa_nodes" (an object by node number).
constexpr auto json_fields_and_more(const CpuLayout*) {
    using S = CpuLayout;
    return field_list(field("smt_active", &S::smt_active), field("cpus", &S::cpus, kFieldIfTyped));
}

/// One idle state of a CPU as cpuidle shows it (/sys/devices/system/cpu/cpuN/cpuidle/stateK).
struct CpuIdleState {
    std::string name;                     ///< stateK/name: "POLL", "C1", "haltpoll idle"
    std::optional<uint32_t> latency_us;   ///< stateK/latency: the exit latency the governor weighs
    std::vector<uint32_t> disabled_cpus;  ///< the online CPUs whose stateK/disable is 1 (cpupower idle-set -d)
};

/// The codec adds "disabled_cpus" (read leniently: a non-array is none).
constexpr auto json_fields_and_more(const CpuIdleState*) {
    using S = CpuIdleState;
    return field_list(field("name", &S::name), field("latency_us", &S::latency_us));
}

/// How a host's idle CPUs wait: the cpuidle driver and governor, the idle states, and the driver's module
/// parameters. It sets what waking a sleeping receiver costs the CPU that wakes it (in a VM, a vCPU
/// that halts at once is woken by an IPI that exits to the hypervisor; one that polls first is not), so
/// per-segment and request/response figures of two hosts differ by it.
struct CpuIdle {
    std::string driver;                ///< cpu/cpuidle/current_driver ("intel_idle", "acpi_idle", "haltpoll", "none")
    std::string governor;              ///< cpu/cpuidle/current_governor (or current_governor_ro): "menu", "teo", "haltpoll"
    std::vector<CpuIdleState> states;  ///< the first online CPU's states, in order
    /// /sys/module/DRIVER/parameters: each file with its line (haltpoll's guest_halt_poll_ns, intel_idle's
    /// max_cstate); empty when the driver has none there.
    std::map<std::string, std::string> driver_parameters;
};

constexpr auto json_fields(const CpuIdle*) {
    using S = CpuIdle;
    return field_list(field("driver", &S::driver), field("governor", &S::governor), field("states", &S::states, kFieldIfTyped),
                      field("driver_parameters", &S::driver_parameters));
}

struct ToolInfo {
    std::string name = "nicmatrix";
    std::string version;
    std::string commit;  ///< the source commit it was built from (nm::source_commit()); "" when unknown
};

constexpr auto json_fields(const ToolInfo*) {
    using S = ToolInfo;
    return field_list(field("name", &S::name), field("version", &S::version), field("commit", &S::commit, kFieldOmitEmpty));
}

struct HostInfo {
    std::string hostname;
    std::string kernel;  ///< uname -r
    std::string cpu_model;
    uint32_t cpu_count = 0;
    /// How this host runs when it is a guest nicmatrix started ("qemu 7.2.19 tcg", "qemu 7.2.19 kvm": the
    /// VM lab); "" when not known (a host of its own, or not said).
    std::string virtualization;
    /// Network sysctls that shape a measurement (congestion control, socket buffer limits, busy polling,
    /// NAPI budget), by their dotted names, as /proc/sys shows them; empty when not read (a peer without agent).
    std::map<std::string, std::string> sysctls;
    std::string kernel_cmdline;  ///< /proc/cmdline; "" when not read
    /// The kernel's CPU vulnerability mitigations (/sys/devices/system/cpu/vulnerabilities: file name ->
    /// its line, e.g. "spectre_v2" -> "Mitigation: Retpolines; ..."): they change the cost of every system
    /// call and context switch. Empty when not read.
    std::map<std::string, std::string> cpu_vulnerabilities;
    /// How this host's kernel accounts CPU time (whether softirq may hide in task time); all "unknown"
    /// for a host nicmatrix could not read (a peer without an agent that reports it).
    CpuAccounting cpu_accounting;
    CpuLayout cpu_layout;                    ///< empty (no cpus) when not read
    std::optional<CpuIdle> cpu_idle;         ///< none when not read or the kernel has no cpuidle
    std::optional<InterfaceInfo> interface;  ///< none when this end is not ours to read (peer without agent)
    /// The nicmatrix build that described this host (for a peer, its agent's); no version when not read.
    ToolInfo tool;
};

/// The codec adds "cpu_layout" (when it has CPUs) and "tool" (when it has a version).
constexpr auto json_fields_and_more(const HostInfo*) {
    using S = HostInfo;
    return field_list(field("hostname", &S::hostname), field("kernel", &S::kernel),
                      field_group("cpu", field("model", &S::cpu_model), field("count", &S::cpu_count)),
                      field("cpu_accounting", &S::cpu_accounting, kFieldIfTyped), field("interface", &S::interface),
                      field("sysctls", &S::sysctls, kFieldOmitEmpty), field("kernel_cmdline", &S::kernel_cmdline, kFieldOmitEmpty),
                      field("cpu_vulnerabilities", &S::cpu_vulnerabilities, kFieldOmitEmpty),
                      field("cpu_idle", &S::cpu_idle, kFieldOmitEmpty | kFieldIfTyped), field("virtualization", &S::virtualization, kFieldOmitEmpty));
}

}  // namespace nm
