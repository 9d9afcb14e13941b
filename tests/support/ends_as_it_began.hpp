#pragma once
// "This interface must end as it began", registered beside the change (as the kernel's selftests register
// a restore with defer()): an EndsAsItBegan made before a test changes an interface snapshots it with the
// independent oracles (ip, ethtool, tc, sysfs, sysctl; not nicmatrix's code) and, when it goes out of scope,
// fails the test (a Catch2 CHECK) naming every line that differs.
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "ethtool_ctl/lab_types.hpp"

namespace nm::test {

/// What the oracles say about one interface inside `netns`, one entry per view, each the tool's output
/// (with its exit status, so an unsupported query is a value too) minus what moves by itself:
///   "ip -d link"   flags, MTU, qdisc kind, state, queues, GSO/GRO limits, bridge/veth details (timers left out)
///   "ip -br addr"  the addresses
///   "ethtool -k"   every feature; "ethtool -l" / "-g" / "-c": channels, rings, coalescing ("" if unsupported)
///   "tc qdisc"     the qdisc tree (reference counts left out)
///   "rps_cpus"     every rx queue's RPS mask
///   "sysctl NAME"  each of `sysctls` (names as sysctl(8) takes them)
using InterfaceState = std::map<std::string, std::string>;

InterfaceState interface_state(const std::string& netns, const std::string& ifname, const std::vector<std::string>& sysctls = {});

/// The lines that differ between two states, view by view ("-" before, "+" after); "" when they are equal.
std::string state_difference(const InterfaceState& before, const InterfaceState& after);

/// Snapshots an interface at construction and checks at destruction that it is identical (see above).
/// The check is skipped while an exception unwinds the test (a failed REQUIRE: the test has failed
/// already). check() checks at a point of the test's choosing too, for a restore the test is about
/// (a command that must leave the interface as it found it), and the destructor checks again.
class EndsAsItBegan {
public:
    EndsAsItBegan(std::string netns, std::string ifname, std::vector<std::string> sysctls = {});
    explicit EndsAsItBegan(const LabInterface& end, std::vector<std::string> sysctls = {});
    ~EndsAsItBegan();
    EndsAsItBegan(const EndsAsItBegan&) = delete;
    EndsAsItBegan& operator=(const EndsAsItBegan&) = delete;

    /// CHECKs that the interface is as it began now; returns whether it is.
    bool check() const;
    /// What differs from the state at construction now ("" when nothing does), as state_difference says.
    std::string difference() const;
    /// The state at construction.
    const InterfaceState& before() const { return before_; }

private:
    std::string netns_, ifname_;
    std::vector<std::string> sysctls_;
    InterfaceState before_;
    int uncaught_at_start_ = std::uncaught_exceptions();
};

}  // namespace nm::test
