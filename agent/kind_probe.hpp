#pragma once
// What an agent can really change, found at its start: a kind of setting its --allow-kinds allows may
// still be out of its reach, most often under the packaged unit's sandbox (ProtectKernelTunables makes
// /sys, /proc/sys and /proc/irq read-only; RestrictNamespaces and a capability set of CAP_NET_ADMIN alone
// refuse the scratch namespace a qdisc is probed in). Such a kind is not offered to clients; the
// challenge names it with the reason (`unavailable`), so a sweep makes the cells that need it
// infeasible before anything changes instead of failing them at apply or at restore.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nm {

/// The system calls the probe makes, so a test can fake them.
struct KindProbeOps {
    /// Why `path` cannot be opened for writing (strerror: "Read-only file system", "Permission denied");
    /// "" when it can, when it does not exist, or when its mode has no write bit at all: those are the
    /// device's or the kernel's answer (DeviceControl::unsupported reports them), not the agent's reach.
    /// Opening writes nothing.
    std::function<std::string(const std::string& path)> write_refused;
    /// The names in directory `dir` starting with `prefix` ("rx-", "tx-"); none when it cannot be read.
    std::function<std::vector<std::string>(const std::string& dir, const std::string& prefix)> entries;
    /// Why a root qdisc cannot be replaced by this process (probe_qdisc's scratch namespace refused); ""
    /// when it can.
    std::function<std::string()> qdisc_refused;
};

/// The real ones: open(2) with O_WRONLY, readdir(3), probe_qdisc of a pfifo.
KindProbeOps system_kind_probe_ops();

/// The kinds of `kinds` (kAgentSettingKinds names) this process cannot change on one of `interfaces`
/// (names in its own namespace), each with the reason ("rps" -> "nm-b: /sys/class/net/nm-b/queues/rx-0/
/// rps_cpus: Read-only file system"). Checked per kind by opening for writing the files it writes: rps and
/// xps every queue's rps_cpus/xps_cpus, napi gro_flush_timeout and napi_defer_hard_irqs, sysctl the
/// allow-listed sysctls, irq_affinity /proc/irq/default_smp_affinity, qdisc through ops.qdisc_refused.
/// MTU, offloads, channels, rings and coalescing go through netlink with CAP_NET_ADMIN and are not probed.
/// Never throws for what it finds; nothing is changed.
std::map<std::string, std::string> unavailable_kinds(const std::vector<std::string>& kinds, const std::vector<std::string>& interfaces,
                                                     const KindProbeOps& ops);

}  // namespace nm
