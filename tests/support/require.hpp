#pragma once

namespace nm::test {

/// Integration tests call this first. Without CAP_NET_ADMIN the test prints SKIPPED and exits 77, which
/// CTest reports as skipped: it never passes silently. CI runs as root, where this does nothing.
void require_net_admin();

/// Skips the test (exit 77, as above) when `tool` is not on PATH: an oracle scripts/install-deps.sh installs.
void require_tool(const char* tool);

/// Skips the test (exit 77, as above) on a machine with fewer than `count` CPUs online; `what` names what
/// needs them ("-A 0,1").
void require_cpus(unsigned count, const char* what);

/// require_net_admin() as a base class: a Catch2 fixture (TEST_CASE_METHOD) that derives from it first
/// skips the test before any of its members (a lab, a server) is made.
struct NeedsNetAdmin {
    NeedsNetAdmin() { require_net_admin(); }
};

}  // namespace nm::test
