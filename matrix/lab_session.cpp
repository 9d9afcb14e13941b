#include "matrix/lab_session.hpp"

#include <chrono>
#include <future>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/netns.hpp"
#include "matrix/icmp_path_probe.hpp"

namespace nm {
namespace {

class NetnsTrafficRunner final : public TrafficRunner {
public:
    NetnsTrafficRunner(std::string netns, std::unique_ptr<TrafficRunner> inner) : netns_(std::move(netns)), inner_(std::move(inner)) {}
    RunResult run(const TestSpec& spec, std::stop_token stop) override {
        NetnsScope scope(netns_);
        return inner_->run(spec, std::move(stop));
    }
    RunResult run_live(const TestSpec& spec, std::stop_token stop, const LiveSink& live) override {
        NetnsScope scope(netns_);
        return inner_->run_live(spec, std::move(stop), live);
    }

private:
    std::string netns_;
    std::unique_ptr<TrafficRunner> inner_;
};

class NetnsDeviceControl final : public DeviceControl {
public:
    NetnsDeviceControl(std::string netns, std::unique_ptr<DeviceControl> inner) : netns_(std::move(netns)), inner_(std::move(inner)) {}
    LinkState read(std::string_view ifname) override {
        NetnsScope scope(netns_);
        return inner_->read(ifname);
    }
    std::vector<std::string> link_names() override {
        NetnsScope scope(netns_);
        return inner_->link_names();
    }
    void validate(std::string_view ifname, const LinkSettings& wanted) override {
        NetnsScope scope(netns_);
        inner_->validate(ifname, wanted);
    }
    std::string unsupported(std::string_view ifname, const LinkSettings& wanted) override {
        NetnsScope scope(netns_);
        return inner_->unsupported(ifname, wanted);
    }
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override {
        NetnsScope scope(netns_);
        return inner_->apply(ifname, wanted);
    }
    std::optional<InterfaceSystem> describe(std::string_view ifname) override {
        NetnsScope scope(netns_);
        return inner_->describe(ifname);
    }
    std::optional<CarrierState> carrier(std::string_view ifname) override {
        NetnsScope scope(netns_);
        return inner_->carrier(ifname);
    }

private:
    std::string netns_;
    std::unique_ptr<DeviceControl> inner_;
};

constexpr auto kServerStartTimeout = std::chrono::seconds(5);
constexpr auto kLabReadyTimeout = std::chrono::seconds(5);
constexpr uint32_t kPingSize = 84;  // what a default `ping` sends over IPv4 (20 more over IPv6)

}  // namespace

std::unique_ptr<TrafficRunner> traffic_in_netns(std::string netns, std::unique_ptr<TrafficRunner> inner) {
    return std::make_unique<NetnsTrafficRunner>(std::move(netns), std::move(inner));
}

std::unique_ptr<DeviceControl> device_in_netns(std::string netns, std::unique_ptr<DeviceControl> inner) {
    return std::make_unique<NetnsDeviceControl>(std::move(netns), std::move(inner));
}

LabSession::LabSession(const std::string& name, LabTopology topology, const LabFactories& factories, bool ipv6) : info_(lab_up(name, topology)) {
    start(factories, ipv6);
}

LabSession::LabSession(LabInfo existing, const LabFactories& factories, bool ipv6) : info_(std::move(existing)), owned_(false) {
    for (const char* role : {"client", "server"}) {
        const auto& end = info_.by_role(role);
        if (!netns_exists(end.netns)) throw usage_error("lab " + info_.name + ": the " + role + " end's netns " + end.netns + " does not exist");
        if ((ipv6 ? end.ipv6 : end.ipv4).empty()) {
            throw usage_error("lab " + info_.name + ": the " + role + " end " + end.ifname + " has no " + (ipv6 ? "IPv6" : "IPv4") + " address");
        }
    }
    start(factories, ipv6);
}

void LabSession::start(const LabFactories& factories, bool ipv6) {
    // Outlives the server thread's start (joined on every way out of this constructor).
    std::promise<uint16_t> listening;
    try {
        const auto& client = info_.by_role("client");
        const auto& server = info_.by_role("server");
        {
            NetnsScope scope(client.netns);
            local_device_ = factories.device(client.netns);
            client_ = traffic_in_netns(client.netns, factories.client());
        }
        {
            NetnsScope scope(server.netns);
            remote_device_ = factories.device(server.netns);
        }
        if (info_.topology == LabTopology::Bridge) {
            const auto& port_in = info_.by_role("dut-client");
            NetnsScope scope(port_in.netns);
            dut_device_ = factories.device(port_in.netns);
            for (const char* role : {"dut-client", "dut-server"}) target_.dut.push_back(SweepEnd{dut_device_.get(), info_.by_role(role).ifname, ""});
        }
        const std::string server_address = strip_prefix(ipv6 ? server.ipv6 : server.ipv4);
        probe_ = std::make_unique<IcmpPathProbe>(client.netns, server_address);
        // A lab just made may take a moment to pass packets (links coming up, a bridge starting to
        // forward); the first cell's preflight must not mistake that for a path that drops frames.
        wait_until([&] { return probe_->probe(ipv6 ? kPingSize + 20 : kPingSize, std::chrono::milliseconds(250), {}).passed; }, kLabReadyTimeout,
                   "the lab " + info_.name + " to pass a ping from " + client.netns + " to " + server.netns);

        // The server lives on its own thread inside the server namespace: its sockets are made there, and
        // it reports its port through the promise once it listens.
        auto port = listening.get_future();
        server_thread_ = std::jthread([&listening, &factories, ns = server.netns](std::stop_token stop) {
            std::unique_ptr<LabServer> srv;
            try {
                NetnsScope scope(ns);
                srv = factories.server();
                listening.set_value(srv->port());
            } catch (...) {
                listening.set_exception(std::current_exception());
                return;
            }
            try {
                NetnsScope scope(ns);
                srv->serve(stop);
            } catch (...) {  // NOLINT(bugprone-empty-catch): the client sees a vanished server as a failed cell
            }
        });
        if (port.wait_for(kServerStartTimeout) != std::future_status::ready) {
            throw Error(ErrorKind::Failed, "start the traffic server in " + server.netns + ": not listening after 5 s");
        }
        target_.local = SweepEnd{local_device_.get(), client.ifname, ""};
        target_.remote = SweepEnd{remote_device_.get(), server.ifname, ""};
        if (info_.vm) {
            target_.local.emulator = target_.remote.emulator = info_.vm->emulator;
            target_.local.device_model = client.device_model;
            target_.remote.device_model = server.device_model;
        }
        target_.base.host = server_address;
        target_.base.port = port.get();
        target_.base.iface = client.ifname;
    } catch (...) {
        stop_and_take_down();
        throw;
    }
}

LabSession::~LabSession() { stop_and_take_down(); }

void LabSession::stop_and_take_down() noexcept {
    if (server_thread_.joinable()) {
        server_thread_.request_stop();
        server_thread_.join();
    }
    client_.reset();
    probe_.reset();
    local_device_.reset();
    remote_device_.reset();
    dut_device_.reset();
    if (!owned_) return;
    try {
        lab_down(info_.name);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; `nicmatrix lab down` cleans up
    }
}

}  // namespace nm
