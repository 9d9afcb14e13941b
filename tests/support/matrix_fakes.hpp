#pragma once
// Fakes of the interfaces the matrix layer talks to, for unit tests without root. They model what the
// runner must cope with: aliases resolved to kernel feature names, fixed features, MTU ranges, the
// kernel's "tx off takes TSO with it" side effects, engines that fail or stall, paths that drop frames.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/error.hpp"
#include "core/session/traffic_runner.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/settings_journal.hpp"
#include "matrix/load_probe.hpp"
#include "matrix/path_probe.hpp"

namespace nm::test {

/// A device layer over in-memory interfaces that behave like veth: rx, tx, sg, tso (two kernel bits),
/// gso, gro, plus a fixed-off feature. Every call is recorded.
class FakeDeviceControl final : public DeviceControl {
public:
    struct Call {
        std::string op;  ///< "read", "validate", "apply"
        std::string ifname;
        LinkSettings settings;
    };

    /// Adds an interface with the features of a veth (all on but gro, mtu 1500, range 68..65535).
    void add_interface(const std::string& ifname, const std::string& netns = "");
    /// Makes a kernel feature fixed at its current value.
    void fix(const std::string& ifname, const std::string& kernel_feature);
    void set_mtu_range(const std::string& ifname, uint32_t min, uint32_t max);
    /// The next apply() on `ifname` throws nm::Error of this kind.
    void fail_next_apply(const std::string& ifname, ErrorKind kind) { fail_next_[ifname] = kind; }
    /// Called at the start of every apply (tests use it to advance a fake clock).
    std::function<void()> on_apply;

    /// The link a test scripts (a NIC that resets on a change); none by default, as a device that cannot tell.
    std::function<std::optional<CarrierState>(const LinkState& now)> on_carrier;

    LinkState read(std::string_view ifname) override;
    void validate(std::string_view ifname, const LinkSettings& wanted) override;
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override;
    std::optional<CarrierState> carrier(std::string_view ifname) override { return on_carrier ? on_carrier(link(ifname)) : std::nullopt; }

    const std::vector<Call>& calls() const { return calls_; }
    size_t count(const std::string& op) const;
    /// The state now, without recording a call.
    const LinkState& state(const std::string& ifname) const { return links_.at(ifname); }
    bool active(const std::string& ifname, const std::string& kernel_feature) const { return links_.at(ifname).features.at(kernel_feature).active; }

private:
    LinkState& link(std::string_view ifname);
    std::vector<std::string> resolve(const std::string& name) const;  // empty when unknown
    static void fix_features(LinkState& s);

    std::map<std::string, LinkState, std::less<>> links_;
    std::map<std::string, ErrorKind> fail_next_;
    std::vector<Call> calls_;
};

/// A journal in memory; restore() applies the remembered MTU and wanted features through whichever of
/// `devices` has the interface in the remembered namespace. Interfaces in `held` ("netns/ifname" -> pid)
/// belong to another live process: remember() refuses them and restore() lists them as left alone.
class FakeJournal final : public SettingsJournal {
public:
    explicit FakeJournal(std::vector<DeviceControl*> devices) : devices_(std::move(devices)) {}
    void remember(const LinkState& original) override;
    /// Merges into an in-memory map per interface (namespace-wide keys too); refuses `held` interfaces.
    void record(const LinkState& link, const SettingWrites& writes) override;
    SettingWrites writes(const LinkState& link) override;
    void release(const LinkState& original) override;
    std::vector<JournalReport> restore(const RestoreOptions& options) override;
    using SettingsJournal::restore;
    /// A device made after the journal (a lab's, say).
    void add_device(DeviceControl* device) { devices_.push_back(device); }

    const std::map<std::string, LinkState>& entries() const { return entries_; }
    std::map<std::string, int> held;
    size_t remember_calls = 0;
    size_t release_calls = 0;
    size_t restore_calls = 0;

private:
    std::vector<DeviceControl*> devices_;
    std::map<std::string, LinkState> entries_;     // by netns/ifname
    std::map<std::string, SettingWrites> writes_;  // by netns/ifname
};

/// A traffic engine whose figures follow the local interface's state (MTU, TSO, GRO), deterministic.
class FakeTrafficRunner final : public TrafficRunner {
public:
    FakeTrafficRunner(FakeDeviceControl& local, std::string ifname) : local_(local), ifname_(std::move(ifname)) {}

    RunResult run(const TestSpec& spec, std::stop_token stop) override;

    /// Run numbers (1-based, counted over all runs) that throw nm::Error (Failed), end Stalled, or end
    /// with a worker's error (RunStatus::Failed, as a send the kernel refuses).
    std::set<size_t> fail_runs, stall_runs, worker_error_runs;
    /// Called at the start of every run with its number, before the figures are made.
    std::function<void(size_t, const TestSpec&)> on_run;
    /// Called with every result the fake made (status ok), to script its figures.
    std::function<void(size_t, RunResult&)> on_result;
    std::vector<TestSpec> specs;

private:
    FakeDeviceControl& local_;
    std::string ifname_;
};

/// A path that carries frames up to `max_mtu` bytes and silently drops larger ones.
class FakePathProbe final : public PathProbe {
public:
    explicit FakePathProbe(uint32_t limit = 65535) : max_mtu(limit) {}
    ProbeResult probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) override;
    uint32_t max_mtu;
    std::vector<uint32_t> probed;
};

/// A load source for the interference check: each sample takes its window on `clock` and returns the next
/// scripted figures (then `quiet` once the script is used up).
class FakeLoadProbe final : public LoadProbe {
public:
    explicit FakeLoadProbe(Clock& clock) : clock_(clock) {}
    BackgroundLoad sample(std::chrono::milliseconds window, std::stop_token stop) override;

    std::vector<BackgroundLoad> script;  ///< busy_pct and steal_pct of the coming samples, in order
    BackgroundLoad quiet{1, 0, 0, 0};
    size_t samples = 0;

private:
    Clock& clock_;
};

/// A clock that moves only when told to (or slept on).
class FakeClock final : public Clock {
public:
    time_point now() const override { return now_; }
    void sleep_until(time_point when) override {
        if (when > now_) now_ = when;
    }
    void advance(std::chrono::nanoseconds d) { now_ += d; }

private:
    time_point now_{std::chrono::seconds(1000)};
};

}  // namespace nm::test
