#include "core/cpu_layout.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/cpu_affinity.hpp"

namespace nm {
namespace {

std::optional<std::string> read_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

template <typename T>
std::optional<T> read_number(const std::filesystem::path& path) {
    const auto text = read_line(path);
    if (!text || text->empty()) return std::nullopt;
    std::istringstream in(*text);
    T v{};
    if (!(in >> v)) return std::nullopt;
    return v;
}

std::vector<uint32_t> read_cpu_list(const std::filesystem::path& path) {
    const auto text = read_line(path);
    if (!text) return {};
    try {
        return parse_cpu_list(*text, path.string());
    } catch (const Error&) {
        return {};
    }
}

}  // namespace

CpuLayout read_cpu_layout(const std::string& root) {
    namespace fs = std::filesystem;
    CpuLayout layout;
    const fs::path cpu_dir = fs::path(root) / "cpu";
    if (const auto smt = read_line(cpu_dir / "smt" / "active"); smt && (*smt == "0" || *smt == "1")) layout.smt_active = *smt == "1";
    for (const auto node : read_cpu_list(fs::path(root) / "node" / "online")) {
        if (const auto list = read_line(fs::path(root) / "node" / ("node" + std::to_string(node)) / "cpulist")) {
            layout.numa_nodes[static_cast<int>(node)] = *list;
        }
    }
    for (const auto cpu : read_cpu_list(cpu_dir / "online")) {
        const fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
        CpuTopology t;
        t.cpu = cpu;
        t.core = read_number<int>(dir / "topology" / "core_id");
        t.package = read_number<int>(dir / "topology" / "physical_package_id");
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.size() > 4 && name.compare(0, 4, "node") == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) {
                t.node = std::stoi(name.substr(4));
            }
        }
        t.governor = read_line(dir / "cpufreq" / "scaling_governor");
        t.freq_khz = read_number<uint64_t>(dir / "cpufreq" / "scaling_cur_freq");
        layout.cpus.push_back(std::move(t));
    }
    return layout;
}

}  // namespace nm
