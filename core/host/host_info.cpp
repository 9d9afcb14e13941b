#include "core/host/host_info.hpp"

#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/base/version.hpp"
#include "core/host/cpu_idle.hpp"
#include "core/host/cpu_layout.hpp"
#include "core/host/kernel_cpu_accounting.hpp"

namespace nm {

HostInfo parse_cpuinfo(std::string_view cpuinfo) {
    HostInfo h;
    std::istringstream in{std::string(cpuinfo)};
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (key == "processor") ++h.cpu_count;
        // x86 says "model name"; arm64 has no model name but "CPU part", and some kernels say "Processor".
        if (h.cpu_model.empty() && (key == "model name" || key == "Processor" || key == "cpu model")) h.cpu_model = value;
    }
    return h;
}

std::vector<std::string> recorded_sysctls() {
    return {"net.ipv4.tcp_congestion_control",
            "net.core.default_qdisc",
            "net.core.rmem_max",
            "net.core.wmem_max",
            "net.core.rmem_default",
            "net.core.wmem_default",
            "net.ipv4.tcp_rmem",
            "net.ipv4.tcp_wmem",
            "net.ipv4.tcp_mem",
            "net.core.busy_poll",
            "net.core.busy_read",
            "net.core.netdev_budget",
            "net.core.netdev_budget_usecs",
            "net.core.netdev_max_backlog",
            "net.ipv4.tcp_timestamps",
            "net.ipv4.tcp_sack",
            "net.ipv4.tcp_window_scaling"};
}

namespace {

std::string read_trimmed(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (auto& c : s) {
        if (c == '\t') c = ' ';  // tcp_rmem and friends are tab-separated: shown as sysctl -n shows them, with spaces
    }
    return s;
}

}  // namespace

std::map<std::string, std::string> read_cpu_vulnerabilities(const std::string& dir) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        std::ifstream in(it->path());
        std::string line;
        if (std::getline(in, line)) out[it->path().filename().string()] = line;
    }
    return out;
}

HostInfo read_host_info() {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream text;
    text << in.rdbuf();
    HostInfo h = parse_cpuinfo(text.str());
    utsname u{};
    if (::uname(&u) == 0) {
        h.kernel = u.release;
        h.hostname = u.nodename;
    }
    for (const auto& name : recorded_sysctls()) {
        std::string path = "/proc/sys/" + name;
        for (size_t i = 10; i < path.size(); ++i) {
            if (path[i] == '.') path[i] = '/';
        }
        if (std::string value = read_trimmed(path); !value.empty()) h.sysctls[name] = value;
    }
    h.kernel_cmdline = read_trimmed("/proc/cmdline");
    h.cpu_vulnerabilities = read_cpu_vulnerabilities();
    h.cpu_accounting = read_cpu_accounting();
    h.cpu_layout = read_cpu_layout();
    h.cpu_idle = read_cpu_idle();
    h.tool = ToolInfo{.version = kVersion, .commit = source_commit()};
    return h;
}

}  // namespace nm
