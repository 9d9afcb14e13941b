#pragma once

namespace nm::test {

/// Integration tests call this first. Without CAP_NET_ADMIN the test prints SKIPPED and exits 77, which
/// CTest reports as skipped: it never passes silently. CI runs as root, where this does nothing.
void require_net_admin();

/// Skips the test (exit 77, as above) when `tool` is not on PATH: an oracle scripts/install-deps.sh installs.
void require_tool(const char* tool);

}  // namespace nm::test
