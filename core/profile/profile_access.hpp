#pragma once
// May this process take a system-wide kernel profile? Checked before a test (or a sweep) changes anything,
// so a refusal is a clear usage error naming the sysctl and the value needed, not an empty profile.
#include <string>

namespace nm::profile {

/// What the kernel's permission checks look at.
struct ProfileAccess {
    int perf_event_paranoid = 2;     ///< /proc/sys/kernel/perf_event_paranoid
    int kptr_restrict = 0;           ///< /proc/sys/kernel/kptr_restrict
    bool cap_perfmon = false;        ///< effective CAP_PERFMON
    bool cap_sys_admin = false;      ///< effective CAP_SYS_ADMIN
    bool kallsyms_addresses = true;  ///< /proc/kallsyms shows this process real addresses
};

/// Throws nm::Error (Usage) when `a` does not allow sampling every CPU with kernel addresses named:
/// without CAP_PERFMON or CAP_SYS_ADMIN, kernel.perf_event_paranoid must be <= 0; /proc/kallsyms must
/// show addresses (kernel.kptr_restrict 0 with perf_event_paranoid <= 1, or 1 with CAP_SYSLOG). Pure.
void check_profile_access(const ProfileAccess& a);

/// Reads the sysctls, the effective capabilities and the first lines of /proc/kallsyms.
ProfileAccess read_profile_access();

}  // namespace nm::profile
