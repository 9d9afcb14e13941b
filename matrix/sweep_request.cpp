#include "matrix/sweep_request.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "core/base/clock.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "matrix/config.hpp"
#include "matrix/host_info.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "agent/key_file.hpp"
#include "agent/peer_client.hpp"
#include "matrix/results_store.hpp"

namespace nm {
namespace {

std::string default_output(const SweepConfig& config) {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return "results/" + config.name + "-" + stamp + ".json";
}

void make_parent(const std::string& path) {
    if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
}

constexpr auto kPeerCheckTimeout = std::chrono::seconds(2);

// Connects to the peer agent and checks, before anything changes anywhere, that it will change `iface`
// ("" = the one interface it allows) for us. Returns the connection and sets `iface`.
std::unique_ptr<PeerControlClient> connect_agent(const SweepRequest& request, const SecretKey& key, std::string& iface) {
    PeerClientOptions options;
    options.host = request.peer;
    options.port = request.port;
    options.key = key;
    auto client = std::make_unique<PeerControlClient>(std::move(options));
    const auto& caps = client->capabilities();
    if (!caps.control) throw usage_error("sweep: the peer's side cannot be changed: " + caps.why);
    if (iface.empty()) {
        if (caps.interfaces.size() != 1) throw usage_error("sweep: the peer agent allows several interfaces; name one with --peer-iface");
        iface = caps.interfaces.front();
    }
    client->require_control(iface);
    return client;
}

}  // namespace

bool has_net_admin() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    return ::syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
}

PreparedSweep prepare_sweep(const SweepRequest& request) {
    PreparedSweep p;
    p.config = load_sweep_config(request.config_file);
    if (!request.resume.empty()) {
        p.resume = load_results(request.resume);
        check_resumable(*p.resume, p.config, request.resume);
    }
    p.output = !request.output.empty() ? request.output : !request.resume.empty() ? request.resume : default_output(p.config);
    return p;
}

SweepOutcome execute_sweep(const SweepRequest& request, const PreparedSweep& prepared, const SweepBackends& backends,
                           SweepObserver* observer, std::stop_token stop) {
    if (request.lab == !request.iface.empty()) throw usage_error("sweep: give either --lab or --iface IF --peer HOST");
    if (!request.lab && request.peer.empty()) throw usage_error("sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)");
    if (!has_net_admin()) throw usage_error("sweep: changing interface settings needs CAP_NET_ADMIN; run as root");

    SweepOptions options;
    options.output_path = prepared.output;
    options.resume = prepared.resume;
    options.command = request.command;
    options.config_file = request.config_file;
    options.tool_version = kVersion;
    SteadyClock clock;
    const HostInfo host = read_host_info();

    if (request.lab) {
        make_parent(prepared.output);
        make_parent(request.journal);
        const auto journal = backends.journal(request.journal);
        const std::string name = request.lab_name.empty() ? "nmsweep" + std::to_string(::getpid()) : request.lab_name;
        LabSession lab(name, request.topology, backends.lab());
        SweepServices services{*journal, lab.traffic(), lab.probe(), clock, observer, host, host};
        return run_sweep(prepared.config, lab.target(), services, options, std::move(stop));
    }
    // Peer mode: find a missing key, an unreachable peer, and an agent that will not change its side,
    // before anything changes.
    const bool peer_changes = sweep_changes_end(prepared.config, true);
    std::optional<SecretKey> key;
    if (peer_changes) {
        const std::string key_file = key_file_from(request.key_file);
        if (key_file.empty()) {
            throw usage_error("sweep " + prepared.config.name +
                              ": the config changes the peer's side, which its agent does only for a client holding the key: give "
                              "--key-file (or NICMATRIX_KEY_FILE), or set \"apply_to\" to \"local\"");
        }
        key = load_key(key_file);
    }
    check_peer_reachable("", request.peer, request.port, kPeerCheckTimeout);
    std::string peer_iface = request.peer_iface;
    const auto agent = peer_changes ? connect_agent(request, *key, peer_iface) : nullptr;
    make_parent(prepared.output);
    make_parent(request.journal);
    const auto journal = backends.journal(request.journal);
    const auto device = backends.device();
    const auto traffic = backends.traffic();
    IcmpPathProbe probe("", request.peer);
    SweepTarget target;
    target.local = SweepEnd{device.get(), request.iface, ""};
    target.remote = agent ? SweepEnd{agent.get(), peer_iface, "", agent.get()} : SweepEnd{nullptr, "", "the sweep changes nothing on the peer", nullptr};
    target.base.host = request.peer;
    target.base.port = request.port;
    target.base.iface = request.iface;
    SweepServices services{*journal, *traffic, probe, clock, observer, host, HostInfo{}};
    return run_sweep(prepared.config, target, services, options, std::move(stop));
}

}  // namespace nm
