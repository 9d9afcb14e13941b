#include "core/host/cpu_idle.hpp"

#include <filesystem>

#include "core/host/sysfs_text.hpp"

namespace nm {

std::optional<CpuIdle> read_cpu_idle(const std::string& system_root, const std::string& module_root) {
    namespace fs = std::filesystem;
    const fs::path cpu_dir = fs::path(system_root) / "cpu";
    const auto driver = read_sysfs_line(cpu_dir / "cpuidle" / "current_driver");
    if (!driver || driver->empty()) return std::nullopt;
    CpuIdle idle;
    idle.driver = *driver;
    // current_governor is there when the governor may be switched (cpuidle_sysfs_switch), else _ro.
    auto governor = read_sysfs_line(cpu_dir / "cpuidle" / "current_governor");
    if (!governor) governor = read_sysfs_line(cpu_dir / "cpuidle" / "current_governor_ro");
    idle.governor = governor.value_or("");
    const auto cpus = read_sysfs_cpu_list(cpu_dir / "online");
    const auto state_dir = [&](uint32_t cpu, size_t k) {
        return cpu_dir / ("cpu" + std::to_string(cpu)) / "cpuidle" / ("state" + std::to_string(k));
    };
    if (!cpus.empty()) {
        for (size_t k = 0;; ++k) {
            const auto name = read_sysfs_line(state_dir(cpus.front(), k) / "name");
            if (!name) break;
            CpuIdleState state;
            state.name = *name;
            state.latency_us = read_sysfs_number<uint32_t>(state_dir(cpus.front(), k) / "latency");
            for (const auto cpu : cpus) {
                if (read_sysfs_number<int>(state_dir(cpu, k) / "disable").value_or(0) != 0) state.disabled_cpus.push_back(cpu);
            }
            idle.states.push_back(std::move(state));
        }
    }
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(module_root) / idle.driver / "parameters", ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        if (const auto value = read_sysfs_line(it->path())) idle.driver_parameters[it->path().filename().string()] = *value;
    }
    return idle;
}

}  // namespace nm
