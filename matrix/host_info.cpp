#include "matrix/host_info.hpp"

#include <sys/utsname.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/kernel_cpu_accounting.hpp"

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
    h.cpu_accounting = read_cpu_accounting();
    return h;
}

}  // namespace nm
