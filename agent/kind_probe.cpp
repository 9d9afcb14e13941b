#include "agent/kind_probe.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/base/error.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "ethtool_ctl/netns_files.hpp"
#include "ethtool_ctl/qdisc.hpp"

namespace nm {
namespace {

bool has(const std::vector<std::string>& kinds, const char* kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); }

std::string open_for_write(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    // A file no one may write (net.core.rmem_max outside the host's namespace is 0444) is the kernel's
    // refusal, which DeviceControl::unsupported reports per setting; it says nothing of the sandbox.
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) return {};
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno == ENOENT ? std::string() : std::strerror(errno);
    ::close(fd);
    return {};
}

std::string replace_qdisc() {
    try {
        // The loopback of a namespace made for it and gone after: nothing of this host changes.
        QdiscSpec pfifo;
        pfifo.kind = "pfifo";
        probe_qdisc(pfifo);
        return {};
    } catch (const Error& e) {
        return e.what();
    }
}

}  // namespace

KindProbeOps system_kind_probe_ops() { return {open_for_write, directory_entries, replace_qdisc}; }

std::map<std::string, std::string> unavailable_kinds(const std::vector<std::string>& kinds, const std::vector<std::string>& interfaces,
                                                     const KindProbeOps& ops) {
    std::map<std::string, std::string> out;
    // The first file refused is the reason; one is enough to make the kind fail at apply or restore.
    const auto check = [&](const char* kind, const std::string& prefix, const std::vector<std::string>& paths) {
        if (out.count(kind)) return;
        for (const auto& path : paths) {
            const std::string why = ops.write_refused(path);
            if (!why.empty()) {
                out[kind] = prefix + path + ": " + why;
                return;
            }
        }
    };
    for (const auto& ifname : interfaces) {
        const std::string dev = "/sys/class/net/" + ifname;
        const auto queue_files = [&](const char* prefix, const char* file) {
            std::vector<std::string> paths;
            for (const auto& q : ops.entries(dev + "/queues", prefix)) paths.push_back(dev + "/queues/" + q + "/" + file);
            return paths;
        };
        if (has(kinds, "rps")) check("rps", ifname + ": ", queue_files("rx-", "rps_cpus"));
        if (has(kinds, "xps")) check("xps", ifname + ": ", queue_files("tx-", "xps_cpus"));
        if (has(kinds, "napi")) check("napi", ifname + ": ", {dev + "/gro_flush_timeout", dev + "/napi_defer_hard_irqs"});
    }
    if (has(kinds, "sysctl")) {
        std::vector<std::string> paths;
        for (const auto& e : sysctl_allow_list()) paths.push_back(sysctl_path(e.name));
        check("sysctl", "", paths);
    }
    // Host-wide: the interface's own IRQs' files sit next to this one, on the same mount.
    if (has(kinds, "irq_affinity")) check("irq_affinity", "", {"/proc/irq/default_smp_affinity"});
    if (has(kinds, "qdisc")) {
        if (const std::string why = ops.qdisc_refused(); !why.empty()) out["qdisc"] = "a root qdisc cannot be replaced here: " + why;
    }
    return out;
}

}  // namespace nm
