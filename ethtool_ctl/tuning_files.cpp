#include "ethtool_ctl/tuning_files.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <sstream>

#include "core/base/error.hpp"
#include "core/device/cpu_list.hpp"
#include "core/device/setting_rules.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "ethtool_ctl/netns_files.hpp"

namespace nm {
namespace {

// The interface's own sysfs directory: every per-interface file is opened beneath it (read_beneath,
// write_beneath), so no name from a request, a config or a journal reaches another file.
std::string dev_dir(const std::string& ifname) {
    if (!interface_name_ok(ifname)) throw usage_error("\"" + ifname + "\" is not an interface name");
    return "/sys/class/net/" + ifname;
}

// "/proc/sys/net/ipv4/tcp_rmem" -> "net/ipv4/tcp_rmem", beneath /proc/sys; only allow-listed names.
std::string sysctl_relative(const std::string& name) {
    if (find_sysctl(name) == nullptr) throw usage_error("sysctl " + name + ": not on the allow-list (nicmatrix sweep --help prints it)");
    return sysctl_path(name).substr(std::string("/proc/sys/").size());
}

void check_name(const char* kind, const std::string& name) {
    if (const std::string why = setting_name_problem(kind, name); !why.empty()) throw usage_error(std::string(kind) + ": " + why);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// Every queue's mask as a CPU list; a queue whose file cannot be read makes the kind unsupported.
void read_queue_masks(const std::string& ifname, const char* prefix, const char* file, const char* kind, std::map<std::string, std::string>& out,
                      TuningState& state) {
    for (const auto& q : directory_entries(dev_dir(ifname) + "/queues", prefix)) {
        std::string why;
        if (!setting_name_problem(kind, q, false).empty()) continue;  // not a queue of the shape we write
        const auto text = read_beneath(dev_dir(ifname), "queues/" + q + "/" + file, &why);
        if (!text) {
            state.unsupported[kind] = q + "/" + file + ": " + why;
            out.clear();
            return;
        }
        out[q] = format_cpu_list(parse_cpu_mask_hex(trim(*text)));
    }
}

void read_irqs(const std::string& ifname, TuningState& state) {
    const auto irqs = device_irqs(ifname);
    if (!irqs) {
        state.unsupported["irq_affinity"] = ifname + " is a virtual device: it has no interrupts of its own";
        return;
    }
    if (irqs->empty()) {
        state.unsupported["irq_affinity"] = ifname + "'s device reports no interrupts (no msi_irqs, no irq)";
        return;
    }
    for (const auto& n : *irqs) {
        std::string why;
        const auto text = read_beneath("/proc/irq", n + "/smp_affinity_list", &why);
        if (text) state.irq_affinity[n] = canonical_cpu_list(trim(*text));
    }
}

}  // namespace

std::optional<std::vector<std::string>> device_irqs(const std::string& ifname) {
    const std::string dir = dev_dir(ifname);
    struct stat st {};
    // A virtual device (veth, bridge, dummy) has no device link: no interrupts, whatever its name.
    if (::lstat((dir + "/device").c_str(), &st) != 0) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& n : directory_entries(dir + "/device/msi_irqs", "")) {
        if (setting_name_problem("irq_affinity", n, false).empty()) out.push_back(n);
    }
    if (out.empty()) {
        // A legacy (INTx) interrupt: the device's irq file, 0 when it has none.
        if (const auto text = read_beneath(dir, "device/irq")) {
            const std::string n = trim(*text);
            if (n != "0" && setting_name_problem("irq_affinity", n, false).empty()) out.push_back(n);
        }
    }
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; });
    return out;
}

unsigned host_cpu_count() {
    const long n = ::sysconf(_SC_NPROCESSORS_CONF);
    return n > 0 ? static_cast<unsigned>(n) : 1;
}

void read_tuning_files(const std::string& netns, const std::string& ifname, TuningState& state) {
    in_netns(netns, [&] {
        read_queue_masks(ifname, "rx-", "rps_cpus", "rps", state.rps, state);
        read_queue_masks(ifname, "tx-", "xps_cpus", "xps", state.xps, state);
        for (const char* f : setting_names("napi")) {
            std::string why;
            const auto text = read_beneath(dev_dir(ifname), f, &why);
            if (!text) {
                state.unsupported["napi"] = std::string(f) + ": " + why;
                continue;
            }
            try {
                state.napi[f] = std::stoull(trim(*text));
            } catch (const std::exception&) {
                state.unsupported["napi"] = std::string(f) + ": not a number: " + trim(*text);
            }
        }
        read_irqs(ifname, state);
        for (const auto& e : sysctl_allow_list()) {
            if (const auto text = read_beneath("/proc/sys", sysctl_relative(e.name))) state.sysctl[e.name] = normalize_sysctl_value(*text);
        }
    });
}

void write_tuning_files(const std::string& netns, const std::string& ifname, const TuningRequest& wanted) {
    // The same checks as every way in (core/device/setting_rules.hpp), once more where names become paths.
    check_tuning_request(wanted, "tuning");
    const unsigned cpus = host_cpu_count();
    const std::string dir = dev_dir(ifname);
    const auto write_masks = [&](const std::map<std::string, std::string>& asked, const char* prefix, const char* file, const char* kind) {
        const std::vector<std::string> have = directory_entries(dir + "/queues", prefix);
        for (const auto& [queue, list] : asked) {
            const std::string mask = cpu_mask_hex(parse_cpu_list(list, cpus));
            std::vector<std::string> queues;
            if (queue == "*") {
                for (const auto& q : have) {
                    if (setting_name_problem(kind, q, false).empty()) queues.push_back(q);
                }
            } else {
                check_name(kind, queue);
                if (std::find(have.begin(), have.end(), queue) == have.end()) {
                    throw usage_error(std::string(kind) + " " + queue + " on " + ifname + ": the interface has no queue " + queue);
                }
                queues.push_back(queue);
            }
            for (const auto& q : queues) write_beneath(dir, "queues/" + q + "/" + file, mask, std::string(kind) + " " + q + "=" + list);
        }
    };
    in_netns(netns, [&] {
        // "*" first, so a queue named on its own wins.
        std::map<std::string, std::string> all_rps, one_rps, all_xps, one_xps;
        for (const auto& [q, l] : wanted.rps) (q == "*" ? all_rps : one_rps)[q] = l;
        for (const auto& [q, l] : wanted.xps) (q == "*" ? all_xps : one_xps)[q] = l;
        write_masks(all_rps, "rx-", "rps_cpus", "rps");
        write_masks(one_rps, "rx-", "rps_cpus", "rps");
        write_masks(all_xps, "tx-", "xps_cpus", "xps");
        write_masks(one_xps, "tx-", "xps_cpus", "xps");
        for (const auto& [name, value] : wanted.napi) {
            check_name("napi", name);
            write_beneath(dir, name, std::to_string(value), name);
        }
        if (!wanted.irq_affinity.empty()) {
            // Only this device's own interrupts (its msi_irqs or its irq), never one found by a name.
            const auto irqs = device_irqs(ifname);
            if (!irqs || irqs->empty())
                throw usage_error("irq_affinity on " + ifname + ": " +
                                  (irqs ? "its device reports no interrupts" : "a virtual device has no interrupts of its own"));
            for (const auto& [n, list] : wanted.irq_affinity) {
                if (n != "*" && std::find(irqs->begin(), irqs->end(), n) == irqs->end()) {
                    throw usage_error("irq_affinity " + n + " on " + ifname + ": not an interrupt of this device (it has " + [&] {
                        std::string all;
                        for (const auto& i : *irqs) all += (all.empty() ? "" : ", ") + i;
                        return all;
                    }() + ")");
                }
            }
            for (const auto& n : *irqs) {
                auto it = wanted.irq_affinity.find(n);
                if (it == wanted.irq_affinity.end()) it = wanted.irq_affinity.find("*");
                if (it == wanted.irq_affinity.end()) continue;
                const std::string list = format_cpu_list(parse_cpu_list(it->second, cpus));
                write_beneath("/proc/irq", n + "/smp_affinity_list", list, "irq_affinity " + n);
            }
        }
        for (const auto& [name, value] : wanted.sysctl) {
            // Setting a congestion control the kernel has not loaded loads its module: only loaded ones.
            if (name == "net.ipv4.tcp_congestion_control") {
                const std::string loaded =
                    normalize_sysctl_value(read_beneath("/proc/sys", "net/ipv4/tcp_available_congestion_control").value_or(""));
                if ((" " + loaded + " ").find(" " + normalize_sysctl_value(value) + " ") == std::string::npos) {
                    throw usage_error("sysctl " + name + "=" + value + ": not a congestion control the kernel has loaded (" + loaded +
                                      "); nicmatrix loads no module (modprobe tcp_" + normalize_sysctl_value(value) + " first)");
                }
            }
            write_beneath("/proc/sys", sysctl_relative(name), value, "sysctl " + name);
        }
    });
}

}  // namespace nm
