#include "ethtool_ctl/interface_system.hpp"

#include <linux/pkt_sched.h>
#include <netlink/cache.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/tc.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <thread>

#include "core/base/error.hpp"
#include "ethtool_ctl/netns.hpp"
#include "ethtool_ctl/rtnl_socket.hpp"

namespace nm {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

// rx-0 < rx-1 < rx-10: by number, not by text.
std::vector<std::pair<unsigned, std::string>> queues(const fs::path& dir, const std::string& prefix) {
    std::vector<std::pair<unsigned, std::string>> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
        if (name.find_first_not_of("0123456789", prefix.size()) != std::string::npos) continue;
        out.emplace_back(static_cast<unsigned>(std::stoul(name.substr(prefix.size()))), name);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<QueueMask> masks(const fs::path& queues_dir, const std::string& prefix, const char* file) {
    std::vector<QueueMask> out;
    for (const auto& [n, name] : queues(queues_dir, prefix)) out.push_back({name, read_line(queues_dir / name / file)});
    return out;
}

struct QdiscCache {
    nl_cache* cache = nullptr;
    ~QdiscCache() {
        if (cache) nl_cache_free(cache);
    }
};

void read_root_qdisc(std::string_view netns, std::string_view ifname, InterfaceSystem& out) {
    const RtnlSocket sock = RtnlSocket::open(netns);
    const int index = sock.link_index(ifname);
    QdiscCache c;
    if (const int err = rtnl_qdisc_alloc_cache(sock.get(), &c.cache); err < 0) {
        throw libnl_error("list the qdiscs of " + std::string(ifname), err, {});
    }
    for (nl_object* o = nl_cache_get_first(c.cache); o != nullptr; o = nl_cache_get_next(o)) {
        auto* tc = reinterpret_cast<rtnl_tc*>(o);
        if (rtnl_tc_get_ifindex(tc) != index || rtnl_tc_get_parent(tc) != TC_H_ROOT) continue;
        const char* kind = rtnl_tc_get_kind(tc);
        out.qdisc = kind ? kind : "";
        char handle[16];
        std::snprintf(handle, sizeof handle, "%x:", rtnl_tc_get_handle(tc) >> 16);
        out.qdisc_handle = handle;
        return;
    }
}

// Runs `read` with a sysfs that shows `netns`: on a thread of its own that enters the namespace, takes a
// private copy of the mount namespace (mounts made there never propagate back) and mounts sysfs on a
// temporary directory. The mount goes when the thread's mount namespace does.
InterfaceSystem with_netns_sysfs(std::string_view netns, std::string_view ifname) {
    char dir[] = "/tmp/nm-sysfs-XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw Error(ErrorKind::Failed, "mkdtemp for a sysfs mount", std::error_code(errno, std::generic_category()));
    InterfaceSystem result;
    std::exception_ptr failure;
    std::thread([&] {
        try {
            NetnsScope scope(netns);
            if (::unshare(CLONE_NEWNS) != 0) throw Error(ErrorKind::Failed, "unshare(CLONE_NEWNS)", std::error_code(errno, std::generic_category()));
            if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
                throw Error(ErrorKind::Failed, "make the private mount namespace a slave", std::error_code(errno, std::generic_category()));
            }
            if (::mount("sysfs", dir, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
                throw Error(ErrorKind::Failed, "mount sysfs of netns " + std::string(netns), std::error_code(errno, std::generic_category()));
            }
            result = read_interface_sysfs(dir, ifname);
            ::umount2(dir, MNT_DETACH);
        } catch (...) {
            failure = std::current_exception();
        }
    }).join();
    ::rmdir(dir);
    if (failure) std::rethrow_exception(failure);
    return result;
}

}  // namespace

InterfaceSystem read_interface_sysfs(const fs::path& sys, std::string_view ifname, const fs::path& proc_irq) {
    const fs::path dev = sys / "class" / "net" / std::string(ifname);
    std::error_code ec;
    if (!fs::exists(dev, ec)) throw usage_error("interface " + std::string(ifname) + ": not in " + (sys / "class" / "net").string());
    InterfaceSystem s;
    s.rps = masks(dev / "queues", "rx-", "rps_cpus");
    s.xps = masks(dev / "queues", "tx-", "xps_cpus");
    const fs::path device = dev / "device";
    if (const auto node = read_line(device / "numa_node"); node && !node->empty() && *node != "-1") {
        try {
            s.numa_node = std::stoi(*node);
        } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): unreadable stays none
        }
    }
    std::vector<uint32_t> irqs;
    for (fs::directory_iterator it(device / "msi_irqs", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) irqs.push_back(static_cast<uint32_t>(std::stoul(name)));
    }
    if (irqs.empty()) {
        // A legacy (INTx) device: its one line in device/irq; 0 = none.
        if (const auto irq = read_line(device / "irq");
            irq && !irq->empty() && irq->find_first_not_of("0123456789") == std::string::npos && *irq != "0") {
            irqs.push_back(static_cast<uint32_t>(std::stoul(*irq)));
        }
    }
    std::sort(irqs.begin(), irqs.end());
    for (const auto irq : irqs) s.irqs.push_back({irq, read_line(proc_irq / std::to_string(irq) / "smp_affinity_list").value_or("")});
    return s;
}

InterfaceSystem read_interface_system(std::string_view netns, std::string_view ifname) {
    InterfaceSystem s = netns.empty() ? read_interface_sysfs("/sys", ifname) : with_netns_sysfs(netns, ifname);
    read_root_qdisc(netns, ifname, s);
    return s;
}

}  // namespace nm
