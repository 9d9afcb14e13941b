#pragma once
#include <string>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"

namespace nm::test {

/// A lab of its own for one test: a unique name, built with the same code as `nicmatrix lab up`, and
/// taken down on scope exit even when the test fails or throws.
class ScopedLab {
public:
    explicit ScopedLab(LabTopology topology = LabTopology::Pair);
    ~ScopedLab();
    ScopedLab(const ScopedLab&) = delete;
    ScopedLab& operator=(const ScopedLab&) = delete;

    const LabInfo& info() const { return info_; }
    const LabInterface& client() const { return info_.by_role("client"); }
    const LabInterface& server() const { return info_.by_role("server"); }

private:
    LabInfo info_;
};

/// A lab or namespace name no other test (or concurrent test run) uses: "nmt<pid>x<nanoseconds>".
std::string unique_name(const std::string& prefix = "nmt");

/// Takes down the labs a test process left when it died before its ScopedLabs' destructors ran (killed,
/// or aborted: std::terminate unwinds nothing): every "nmt<pid>x..." lab in /run/netns whose process no
/// longer exists. Returns the labs removed. The first ScopedLab of every test process calls it; the labs
/// of a live process, any concurrent test run's included, are never touched.
std::vector<std::string> remove_orphaned_labs();

}  // namespace nm::test
