#include "core/host/cpu_layout.hpp"

#include <filesystem>

#include "core/host/sysfs_text.hpp"

namespace nm {

CpuLayout read_cpu_layout(const std::string& root) {
    namespace fs = std::filesystem;
    CpuLayout layout;
    const fs::path cpu_dir = fs::path(root) / "cpu";
    if (const auto smt = read_sysfs_line(cpu_dir / "smt" / "active"); smt && (*smt == "0" || *smt == "1")) layout.smt_active = *smt == "1";
    for (const auto node : read_sysfs_cpu_list(fs::path(root) / "node" / "online")) {
        if (const auto list = read_sysfs_line(fs::path(root) / "node" / ("node" + std::to_string(node)) / "cpulist")) {
            layout.numa_nodes[static_cast<int>(node)] = *list;
        }
    }
    for (const auto cpu : read_sysfs_cpu_list(cpu_dir / "online")) {
        const fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
        CpuTopology t;
        t.cpu = cpu;
        t.core = read_sysfs_number<int>(dir / "topology" / "core_id");
        t.package = read_sysfs_number<int>(dir / "topology" / "physical_package_id");
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.size() > 4 && name.compare(0, 4, "node") == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) {
                t.node = std::stoi(name.substr(4));
            }
        }
        t.governor = read_sysfs_line(dir / "cpufreq" / "scaling_governor");
        t.freq_khz = read_sysfs_number<uint64_t>(dir / "cpufreq" / "scaling_cur_freq");
        layout.cpus.push_back(std::move(t));
    }
    return layout;
}

}  // namespace nm
