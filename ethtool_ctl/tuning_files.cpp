#include "ethtool_ctl/tuning_files.hpp"

#include <dirent.h>
#include <unistd.h>

#include <sstream>

#include "core/base/cpu_list.hpp"
#include "core/base/error.hpp"
#include "core/base/sysctl_allow_list.hpp"
#include "ethtool_ctl/netns_files.hpp"

namespace nm {
namespace {

constexpr const char* kNapiFiles[] = {"gro_flush_timeout", "napi_defer_hard_irqs"};

std::string dev_dir(const std::string& ifname) { return "/sys/class/net/" + ifname; }

std::vector<std::string> entries(const std::string& dir, const std::string& prefix) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(prefix, 0) == 0 && name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    return out;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// Every queue's mask as a CPU list; a queue whose file cannot be read makes the kind unsupported.
void read_queue_masks(const std::string& ifname, const char* prefix, const char* file, const char* kind,
                      std::map<std::string, std::string>& out, TuningState& state) {
    for (const auto& q : entries(dev_dir(ifname) + "/queues", prefix)) {
        std::string why;
        const auto text = read_small_file(dev_dir(ifname) + "/queues/" + q + "/" + file, &why);
        if (!text) {
            state.unsupported[kind] = q + "/" + file + ": " + why;
            out.clear();
            return;
        }
        out[q] = format_cpu_list(parse_cpu_mask_hex(trim(*text)));
    }
}

void read_irqs(const std::string& ifname, TuningState& state) {
    std::map<std::string, std::string> irqs;
    for (const auto& n : entries(dev_dir(ifname) + "/device/msi_irqs", "")) irqs[n] = "";
    if (const auto text = read_small_file("/proc/interrupts")) {
        for (const auto& [n, name] : irqs_named_in(*text, ifname)) irqs[n] = name;
    }
    if (irqs.empty()) {
        state.unsupported["irq_affinity"] = ifname + " has no interrupts of its own (none in /proc/interrupts, no device msi_irqs)";
        return;
    }
    for (const auto& [n, name] : irqs) {
        std::string why;
        const auto text = read_small_file("/proc/irq/" + n + "/smp_affinity_list", &why);
        if (text) state.irq_affinity[n] = canonical_cpu_list(trim(*text));
    }
}

}  // namespace

std::map<std::string, std::string> irqs_named_in(const std::string& proc_interrupts, const std::string& ifname) {
    std::map<std::string, std::string> out;
    std::istringstream in(proc_interrupts);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string n = line.substr(0, colon);
        n.erase(0, n.find_first_not_of(' '));
        if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
        // The last field is the handler's name: "eth0", "eth0-TxRx-3", "eth0-rx-1".
        const auto last = line.find_last_of(' ');
        const std::string name = last == std::string::npos ? "" : line.substr(last + 1);
        const bool ours = name == ifname || (name.rfind(ifname, 0) == 0 && name.size() > ifname.size() && name[ifname.size()] == '-');
        if (ours) out[n] = name;
    }
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
        for (const char* f : kNapiFiles) {
            std::string why;
            const auto text = read_small_file(dev_dir(ifname) + "/" + f, &why);
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
            if (const auto text = read_small_file(sysctl_path(e.name))) state.sysctl[e.name] = normalize_sysctl_value(*text);
        }
    });
}

void write_tuning_files(const std::string& netns, const std::string& ifname, const TuningRequest& wanted) {
    const unsigned cpus = host_cpu_count();
    const auto write_masks = [&](const std::map<std::string, std::string>& asked, const char* prefix, const char* file, const char* kind) {
        for (const auto& [queue, list] : asked) {
            const std::string mask = cpu_mask_hex(parse_cpu_list(list, cpus));
            const std::vector<std::string> queues = queue == "*" ? entries(dev_dir(ifname) + "/queues", prefix) : std::vector<std::string>{queue};
            for (const auto& q : queues) write_small_file(dev_dir(ifname) + "/queues/" + q + "/" + file, mask, std::string(kind) + " " + q + "=" + list);
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
        for (const auto& [name, value] : wanted.napi) write_small_file(dev_dir(ifname) + "/" + name, std::to_string(value), name);
        if (!wanted.irq_affinity.empty()) {
            TuningState now;
            read_irqs(ifname, now);
            for (const auto& [n, was] : now.irq_affinity) {
                auto it = wanted.irq_affinity.find(n);
                if (it == wanted.irq_affinity.end()) it = wanted.irq_affinity.find("*");
                if (it == wanted.irq_affinity.end()) continue;
                const std::string list = format_cpu_list(parse_cpu_list(it->second, cpus));
                write_small_file("/proc/irq/" + n + "/smp_affinity_list", list, "irq_affinity " + n);
            }
        }
        for (const auto& [name, value] : wanted.sysctl) {
            if (find_sysctl(name) == nullptr) throw usage_error("sysctl " + name + ": not on the allow-list (nicmatrix sweep --help prints it)");
            write_small_file(sysctl_path(name), value, "sysctl " + name);
        }
    });
}

}  // namespace nm
