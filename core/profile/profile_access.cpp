#include "core/profile/profile_access.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/base/error.hpp"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38  // Linux 5.8; older headers lack it
#endif

namespace nm::profile {
namespace {

int read_int(const char* path, int fallback) {
    std::ifstream in(path);
    int v = fallback;
    if (!(in >> v)) return fallback;
    return v;
}

bool has_cap(const __user_cap_data_struct (&data)[2], int cap) { return (data[cap / 32].effective & (1U << (cap % 32))) != 0; }

}  // namespace

void check_profile_access(const ProfileAccess& a) {
    if (!a.cap_perfmon && !a.cap_sys_admin && a.perf_event_paranoid > 0) {
        throw usage_error("profile: sampling every CPU needs CAP_PERFMON (or root) or kernel.perf_event_paranoid <= 0; it is " +
                          std::to_string(a.perf_event_paranoid) +
                          " and this process has neither capability: run as root, or `sysctl -w kernel.perf_event_paranoid=0`");
    }
    if (!a.kallsyms_addresses) {
        throw usage_error("profile: /proc/kallsyms shows no kernel addresses to this process (kernel.kptr_restrict is " +
                          std::to_string(a.kptr_restrict) +
                          "), so kernel samples cannot be named: set kernel.kptr_restrict to 0 (with kernel.perf_event_paranoid <= 1) "
                          "or to 1 and run as root (CAP_SYSLOG): `sysctl -w kernel.kptr_restrict=1`");
    }
}

ProfileAccess read_profile_access() {
    ProfileAccess a;
    a.perf_event_paranoid = read_int("/proc/sys/kernel/perf_event_paranoid", 2);
    a.kptr_restrict = read_int("/proc/sys/kernel/kptr_restrict", 0);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) == 0) {
        a.cap_perfmon = has_cap(data, CAP_PERFMON);
        a.cap_sys_admin = has_cap(data, CAP_SYS_ADMIN);
    }
    // The kernel decides per reader (kallsyms_show_value): read a few lines and look.
    std::ifstream in("/proc/kallsyms");
    std::string line;
    bool any = false, nonzero = false;
    for (int i = 0; i < 16 && std::getline(in, line); ++i) {
        any = true;
        const std::string addr = line.substr(0, line.find(' '));
        if (addr.find_first_not_of('0') != std::string::npos) nonzero = true;
    }
    a.kallsyms_addresses = !any || nonzero;
    return a;
}

}  // namespace nm::profile
