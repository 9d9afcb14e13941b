#pragma once
// The setup most CLI integration tests begin with, as a Catch2 fixture (TEST_CASE_METHOD).
#include "ethtool_ctl/lab_types.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

namespace nm::test {

/// Skips the test without CAP_NET_ADMIN, then makes a pair lab (`a` its client end, `b` its server end)
/// and a scratch directory `dir`.
struct LabFixture : NeedsNetAdmin {
    ScopedLab lab;
    TempDir dir;
    const LabInterface& a = lab.client();
    const LabInterface& b = lab.server();
};

}  // namespace nm::test
