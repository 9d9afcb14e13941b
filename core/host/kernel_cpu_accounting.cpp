#include "core/host/kernel_cpu_accounting.hpp"

#include <sys/utsname.h>
#include <zlib.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/base/text_lines.hpp"

namespace nm {
namespace {

// CONFIG_ name -> set; names the text does not mention are absent.
std::map<std::string, bool, std::less<>> config_options(std::string_view text) {
    std::map<std::string, bool, std::less<>> out;
    for_each_line(text, [&](std::string_view line) {
        constexpr std::string_view kUnset = " is not set";
        if (line.rfind("# CONFIG_", 0) == 0 && line.size() > kUnset.size() && line.substr(line.size() - kUnset.size()) == kUnset) {
            out[std::string(line.substr(2, line.size() - 2 - kUnset.size()))] = false;
        } else if (line.rfind("CONFIG_", 0) == 0) {
            const size_t eq = line.find('=');
            if (eq == std::string_view::npos) return;
            const auto value = line.substr(eq + 1);
            out[std::string(line.substr(0, eq))] = value == "y" || value == "m";
        }
    });
    return out;
}

std::string read_gzip(const char* path) {
    gzFile f = ::gzopen(path, "rb");
    if (f == nullptr) return {};
    std::string out;
    char buf[16384];
    for (int n; (n = ::gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::gzclose(f);
    return out;
}

}  // namespace

CpuAccounting parse_cpu_accounting(std::string_view config_text, std::string source) {
    const auto opts = config_options(config_text);
    const auto on = [&](std::string_view name) {
        const auto it = opts.find(name);
        return it != opts.end() && it->second;
    };
    CpuAccounting a;
    a.source = std::move(source);
    a.irq_time = on("CONFIG_IRQ_TIME_ACCOUNTING") ? KernelOption::Yes : KernelOption::No;
    a.no_hz_full = on("CONFIG_NO_HZ_FULL") ? KernelOption::Yes : KernelOption::No;
    if (on("CONFIG_VIRT_CPU_ACCOUNTING_GEN")) a.cputime = "virt_gen";
    else if (on("CONFIG_VIRT_CPU_ACCOUNTING_NATIVE")) a.cputime = "virt_native";
    else if (on("CONFIG_TICK_CPU_ACCOUNTING")) a.cputime = "tick";
    else a.cputime = "unknown";
    return a;
}

CpuAccounting read_cpu_accounting() {
    utsname u{};
    if (::uname(&u) == 0) {
        const std::string boot = std::string("/boot/config-") + u.release;
        std::ifstream in(boot);
        if (in) {
            std::ostringstream text;
            text << in.rdbuf();
            if (!text.str().empty()) return parse_cpu_accounting(text.str(), boot);
        }
    }
    const std::string proc = read_gzip("/proc/config.gz");
    if (!proc.empty()) return parse_cpu_accounting(proc, "/proc/config.gz");
    return CpuAccounting{};
}

}  // namespace nm
