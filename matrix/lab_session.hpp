#pragma once
// The world of a `sweep --lab`: a lab of its own, the traffic server on a thread inside the server's
// namespace, the client and the path probe in the client's namespace, a DeviceControl per end. The
// concrete device control, journal and traffic classes come in through factories, so this file names
// none of them (matrix/real_backends.cpp does, once).
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "core/session/traffic_runner.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/lab_types.hpp"
#include "matrix/path_probe.hpp"
#include "matrix/runner.hpp"

namespace nm {

/// The server side of the traffic engine as a sweep needs it: bound when constructed, serving until the
/// stop token is requested.
class LabServer {
public:
    virtual ~LabServer() = default;
    /// The TCP control port the server listens on.
    virtual uint16_t port() const = 0;
    /// Serves tests until `stop` is requested; returns then.
    virtual void serve(std::stop_token stop) = 0;
};

/// Adapts any class with `uint16_t port() const` and `void serve(std::stop_token)` (the engine's
/// TrafficServer) to LabServer.
template <typename Server>
class LabServerAdapter final : public LabServer {
public:
    template <typename... Args>
    explicit LabServerAdapter(Args&&... args) : server_(std::forward<Args>(args)...) {}
    uint16_t port() const override { return server_.port(); }
    void serve(std::stop_token stop) override { server_.serve(std::move(stop)); }

private:
    Server server_;
};

/// How to make the real parts. Each factory is called on a thread that is already inside the namespace
/// the object must live in, so sockets it opens stay there.
struct LabFactories {
    std::function<std::unique_ptr<DeviceControl>(const std::string& netns)> device;
    std::function<std::unique_ptr<TrafficRunner>()> client;
    std::function<std::unique_ptr<LabServer>()> server;
};

/// Runs every call of `inner` inside `netns`: the calling thread enters the namespace for the call, and
/// threads the runner starts inherit it.
std::unique_ptr<TrafficRunner> traffic_in_netns(std::string netns, std::unique_ptr<TrafficRunner> inner);

/// The same for a DeviceControl that works on the calling thread's namespace.
std::unique_ptr<DeviceControl> device_in_netns(std::string netns, std::unique_ptr<DeviceControl> inner);

/// A lab for one sweep. The constructor brings the lab up (lab_up under `name`), starts the server in
/// the server namespace and waits (at most 5 s) for it to listen; the destructor stops the server and
/// takes the lab down, whatever happened in between. Throws nm::Error when the lab or the server cannot
/// be started; nothing is left behind then. `ipv6`: the traffic, the probe and the server's address are
/// the lab's IPv6 ones (2001:2::/64) instead of IPv4 (198.18.0.0/24).
class LabSession {
public:
    LabSession(const std::string& name, LabTopology topology, const LabFactories& factories, bool ipv6 = false);
    /// Adopts a lab that exists already (the VM lab's NICs, each in a namespace of its own inside the guest):
    /// its interfaces of roles "client" and "server" are the ends, with the addresses `existing` gives them.
    /// Everything else is as above, except that the destructor leaves the lab's namespaces and interfaces
    /// in place (the sweep restores the interfaces' settings; taking the lab down is its owner's job).
    LabSession(LabInfo existing, const LabFactories& factories, bool ipv6 = false);
    ~LabSession();
    LabSession(const LabSession&) = delete;
    LabSession& operator=(const LabSession&) = delete;

    const LabInfo& info() const { return info_; }
    /// The two ends (and, for the bridge topology, the DUT's two ports) and the server's address and
    /// port, for run_sweep.
    const SweepTarget& target() const { return target_; }
    TrafficRunner& traffic() { return *client_; }
    PathProbe& probe() { return *probe_; }

private:
    void start(const LabFactories& factories, bool ipv6);
    void stop_and_take_down() noexcept;

    LabInfo info_;
    bool owned_ = true;  ///< made by this session: taken down by it
    std::unique_ptr<DeviceControl> local_device_;
    std::unique_ptr<DeviceControl> remote_device_;
    std::unique_ptr<DeviceControl> dut_device_;  ///< bridge topology: the DUT namespace's ports
    std::unique_ptr<TrafficRunner> client_;
    std::unique_ptr<PathProbe> probe_;
    SweepTarget target_;
    std::jthread server_thread_;
};

}  // namespace nm
