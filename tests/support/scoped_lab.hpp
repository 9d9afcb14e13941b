#pragma once
#include <string>

#include "core/base/lab_types.hpp"

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

}  // namespace nm::test
