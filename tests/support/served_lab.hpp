#pragma once
// A lab whose server end runs `nicmatrix serve` for the whole test, for the CLI integration tests that
// sweep or run against it from the client end.
#include <chrono>
#include <string>

#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/background.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

namespace nm::test {

/// Waits (at most 10 s) until `process` has printed `text`; fails showing what it printed instead.
void wait_for_output(Background& process, const std::string& text);

/// A Catch2 fixture (TEST_CASE_METHOD): skips the test without CAP_NET_ADMIN, makes a lab and a scratch
/// directory `dir`, and starts `nicmatrix serve` in the server's namespace (its log dir/serve.log), ready
/// once it listens and the path between the ends carries packets. `a` is the client end.
struct ServedLab : NeedsNetAdmin {
    ScopedLab lab;
    TempDir dir;
    Background server;
    const LabInterface& a = lab.client();

    ServedLab();
};

}  // namespace nm::test
