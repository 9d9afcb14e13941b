#include "tests/support/require.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace nm::test {

void require_net_admin() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    const bool have = ::syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
    if (!have) {
        std::fputs("SKIPPED: this integration test needs CAP_NET_ADMIN (run as root)\n", stderr);
        std::exit(77);
    }
}

void require_tool(const char* tool) {
    const std::string probe = std::string("command -v ") + tool + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) {
        std::fprintf(stderr, "SKIPPED: this test reads its oracle with %s, which is not installed (scripts/install-deps.sh)\n", tool);
        std::exit(77);
    }
}

void require_cpus(unsigned count, const char* what) {
    if (std::thread::hardware_concurrency() < count) {
        std::fprintf(stderr, "SKIPPED: %s needs %u CPUs\n", what, count);
        std::exit(77);
    }
}

}  // namespace nm::test
