#include "matrix/sweep_request.hpp"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <set>

#include "agent/key_file.hpp"
#include "agent/peer_client.hpp"
#include "core/base/atomic_file.hpp"
#include "core/base/clock.hpp"
#include "core/base/error.hpp"
#include "core/base/number_text.hpp"
#include "core/base/version.hpp"
#include "core/engine/end_profiler.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/host/host_codec.hpp"
#include "core/host/host_info.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/config.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/load_probe.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"

namespace nm {
namespace {

// In the current directory, not the source tree's results/ (which holds the examples); -o decides otherwise.
std::string default_output(const SweepConfig& config) {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return "nicmatrix-results/" + config.name + "-" + stamp + ".json";
}

// The directory of an output or journal file; `flag` names it in the error (a file in the way, no permission).
void make_parent(const std::string& path, const std::string& flag) {
    if (path.empty()) return;
    try {
        make_directories(parent_directory(path));
    } catch (const Error& e) {
        throw Error(ErrorKind::Usage, flag + " " + path + ": " + e.what());
    }
}

constexpr auto kPeerCheckTimeout = std::chrono::seconds(2);

// Connects to the peer agent and checks, before anything changes anywhere, that it will change `iface`
// ("" = the one interface it allows) for us, and every kind of setting `config` changes there. Returns the
// connection and sets `iface`.
std::unique_ptr<PeerControlClient> connect_agent(uint16_t port, const std::string& peer, const SweepPlan& plan, const SecretKey& key,
                                                 std::string& iface) {
    const SweepConfig& config = plan.config;
    PeerClientOptions options;
    options.host = peer;
    options.port = port;
    options.key = key;
    options.link_wait = std::chrono::milliseconds(static_cast<int64_t>(config.link_wait_s * 1000));
    auto client = std::make_unique<PeerControlClient>(std::move(options));
    const auto& caps = client->capabilities();
    if (!caps.control) throw usage_error("sweep: the peer's side cannot be changed: " + caps.why);
    if (iface.empty()) {
        if (caps.interfaces.size() != 1) throw usage_error("sweep: the peer agent allows several interfaces; name one with --peer-iface");
        iface = caps.interfaces.front();
    }
    client->require_control(iface);
    // Every kind of setting the config changes on the peer must be one the agent lets a client change.
    std::set<std::string> needed;
    for (const auto& cell : plan.cells) {
        for (const auto& kind : setting_kinds(cell_settings(config, cell, true))) needed.insert(kind);
    }
    for (const auto& kind : needed) {
        // A kind the agent allows but cannot change where it runs (its sandbox) makes the cells that need
        // it infeasible, with the agent's reason (the runner's pre-check, PeerControlClient::unsupported).
        if (caps.unavailable.count(kind)) continue;
        if (std::find(caps.kinds.begin(), caps.kinds.end(), kind) == caps.kinds.end()) {
            std::string allows;
            for (const auto& k : caps.kinds) allows += (allows.empty() ? "" : ", ") + k;
            throw usage_error("sweep " + config.name + ": the config changes " + kind +
                              " on the peer, which its agent does not let a client change (it allows " +
                              (allows.empty() ? std::string("none") : allows) + "); start the agent with --allow-kinds naming " + kind +
                              ", or set \"apply_to\" for " + kind + " to \"local\"");
        }
    }
    return client;
}

// A sweep against a stock `iperf3 -s`: what it cannot do is refused before anything changes, naming the
// flag or the config's field.
void check_iperf3_sweep(const SweepRequest& request, const SweepPlan& plan) {
    const SweepConfig& config = plan.config;
    const std::string why = "with --peer-kind iperf3";
    if (!request.lab) {
        if (!request.peer_iface.empty()) {
            throw usage_error("--peer-iface " + request.peer_iface + ": not " + why +
                              ": a stock iperf3 far end changes nothing, so a sweep changes only the local interface (--iface)");
        }
        if (!request.key_file.empty()) throw usage_error("--key-file: not " + why + ": a stock iperf3 server has no nicmatrix key");
        if (sweep_changes_end(plan, true)) {
            throw usage_error("sweep " + config.name +
                              ": the config changes the peer's side, which a stock iperf3 far end cannot do: set \"apply_to\" to \"local\"");
        }
    }
    for (size_t i = 0; i < config.traffic.size(); ++i) {
        const auto& entry = config.traffic[i];
        const std::string at = "sweep " + config.name + ": /traffic/" + std::to_string(i) + " (" + entry.name + "): ";
        if (entry.rfc2544) throw usage_error(at + "a frame-size table (rfc2544) is UDP, which is not " + why);
        try {
            iperf3::check_supported(entry.test);
        } catch (const Error& e) {
            throw usage_error(at + e.what());
        }
    }
    if (config.profile)
        throw usage_error("sweep " + config.name + ": \"profile\": true is not " + why + ": the far end cannot be profiled through iperf3");
    if (!config.affinity.server.empty())
        throw usage_error("sweep " + config.name + ": \"affinity\".\"server\" is not " + why + ": pin the far end with its own `iperf3 -s -A N`");
}

}  // namespace

double parse_duration_s(const std::string& text, const std::string& flag) {
    const auto fail = [&]() -> double {
        throw usage_error(flag + " " + text + ": expected a duration like 600 (seconds), 90s, 15m or 1h30m, above 0");
    };
    double total = 0;
    size_t i = 0;
    bool any = false;
    char last_unit = 0;
    while (i < text.size()) {
        size_t used = 0;
        double value = 0;
        try {
            value = std::stod(text.substr(i), &used);
        } catch (const std::exception&) {
            return fail();
        }
        if (used == 0 || !std::isfinite(value) || value < 0 || text[i] == '+' || text[i] == '-' || std::isspace(static_cast<unsigned char>(text[i])))
            return fail();
        i += used;
        const char unit = i < text.size() ? text[i] : 's';
        const double scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 0;
        if (scale == 0) return fail();
        // Units in falling order, each once: "1h30m", not "30m1h" or "1m1m".
        const auto rank = [](char u) { return u == 'h' ? 3 : u == 'm' ? 2 : 1; };
        if (last_unit != 0 && rank(unit) >= rank(last_unit)) return fail();
        if (i == text.size() && any) return fail();  // a bare number after a unit: "1h30"
        if (i < text.size()) ++i;
        last_unit = unit;
        total += value * scale;
        any = true;
    }
    if (!any || total <= 0 || total > 366 * 86400.0) return fail();
    return total;
}

std::string resolve_peer(const std::string& peer, int ip_version) {
    if (ip_version != 0 && ip_version != 4 && ip_version != 6) {
        throw usage_error("ip_version " + std::to_string(ip_version) + ": expected 4 or 6");
    }
    addrinfo hints{};
    hints.ai_family = ip_version == 4 ? AF_INET : ip_version == 6 ? AF_INET6 : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(peer.c_str(), nullptr, &hints, &res);
    if (rc != 0 || res == nullptr) {
        const std::string family = ip_version ? " (IPv" + std::to_string(ip_version) + ")" : "";
        throw usage_error("--peer " + peer + ": " + (rc == EAI_SYSTEM ? std::string(std::strerror(errno)) : ::gai_strerror(rc)) + family);
    }
    char host[NI_MAXHOST];
    const int nrc = ::getnameinfo(res->ai_addr, res->ai_addrlen, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
    ::freeaddrinfo(res);
    if (nrc != 0) throw usage_error("--peer " + peer + ": " + ::gai_strerror(nrc));
    return host;
}

bool has_net_admin() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    return ::syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
}

PreparedSweep prepare_sweep(const SweepRequest& request) {
    PreparedSweep p;
    // The precision changes how often a cell is measured, not which cells there are.
    p.plan = load_sweep_plan(request.config_file);
    SweepConfig& config = p.plan.config;
    if (request.precision_pct) {
        const double pct = *request.precision_pct;
        if (!std::isfinite(pct) || pct <= 0 || pct > 100) {
            throw usage_error("--precision " + number_text(pct) + ": expected a half-width in percent of the median (0 < x <= 100)");
        }
        if (!config.precision) config.precision = PrecisionSpec{};
        config.precision->ci_pct = pct;
    }
    if (!request.time_budget.empty()) p.time_budget_s = parse_duration_s(request.time_budget, "--time-budget");
    if (!request.resume.empty()) {
        p.resume = load_results(request.resume);
        check_resumable(*p.resume, config, request.resume);
    }
    p.output = !request.output.empty() ? request.output : !request.resume.empty() ? request.resume : default_output(config);
    return p;
}

namespace {

LabInfo load_lab_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error("--lab-from " + path + ": cannot open");
    try {
        return Json::parse(in).get<LabInfo>();
    } catch (const Json::exception& e) {
        throw usage_error("--lab-from " + path + ": not a lab description (as `nicmatrix lab show --json` prints): " + e.what());
    }
}

// What a request asks that can be checked before a lab is made or anything is changed: lab or peer, the
// address family, the permission to change settings, the kind of far end and what it can do, the
// profiler, the CPUs of the config's affinity. Throws nm::Error (Usage).
void check_request(const SweepRequest& request, const PreparedSweep& prepared) {
    const SweepConfig& config = prepared.plan.config;
    if (request.lab == !request.iface.empty()) throw usage_error("sweep: give either --lab or --iface IF --peer HOST");
    if (!request.lab && request.peer.empty()) throw usage_error("sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)");
    if (request.ip_version != 0 && request.ip_version != 4 && request.ip_version != 6) {
        throw usage_error("sweep: ip_version " + std::to_string(request.ip_version) + ": expected 4 or 6");
    }
    if (!has_net_admin()) throw usage_error("sweep: changing interface settings needs CAP_NET_ADMIN; run as root");
    if (!request.peer_kind.empty() && request.peer_kind != "nicmatrix" && request.peer_kind != "iperf3") {
        throw usage_error("--peer-kind " + request.peer_kind +
                          ": expected nicmatrix (`nicmatrix serve` on the far end) or iperf3 (a stock `iperf3 -s`)");
    }
    if (request.peer_kind == "iperf3") check_iperf3_sweep(request, prepared.plan);
    // "profile": true is checked here, before a lab is made or a setting changed.
    TestSpec profiled;
    profiled.profile = config.profile;
    profiled.profile_hz = config.profile_hz;
    profiled.profile_categories = request.profile_categories;
    try {
        check_profiling(profiled);
    } catch (const Error& e) {
        throw Error(e.kind(), "sweep " + config.name + ": \"profile\": true: " + e.what());
    }
    // Both ends of the lab run on this host; a peer checks its own CPUs when a test asks for them.
    const auto cpus = online_cpus();
    check_cpus(config.affinity.client, cpus, "client");
    if (request.lab) check_cpus(config.affinity.server, cpus, "server");
}

// The path probe's wait for its echo in a VM lab without KVM (see execute_sweep).
constexpr std::chrono::milliseconds kEmulatedProbeTimeout{4000};

// How the runner records the sweep: where, what it resumes, the command and the build, the order's seed
// and the time budget.
SweepOptions sweep_options(const SweepRequest& request, const PreparedSweep& prepared) {
    SweepOptions options;
    options.output_path = prepared.output;
    options.resume = prepared.resume;
    options.command = request.command;
    options.config_file = request.config_file;
    options.tool_version = kVersion;
    options.tool_commit = source_commit();
    options.seed = request.seed;
    options.time_budget_s = prepared.time_budget_s;
    return options;
}

}  // namespace

SweepOutcome execute_sweep(const SweepRequest& request, const PreparedSweep& prepared, const SweepBackends& backends, SweepObserver* observer,
                           std::stop_token stop) {
    const SweepConfig& config = prepared.plan.config;
    check_request(request, prepared);
    const bool iperf3_peer = request.peer_kind == "iperf3";
    const uint16_t port = request.port != 0 ? request.port : iperf3_peer ? iperf3::kDefaultPort : kDefaultPort;
    SweepOptions options = sweep_options(request, prepared);
    SteadyClock clock;
    ProcStatLoadProbe load(clock);
    const HostInfo host = read_host_info();

    if (request.lab) {
        make_parent(prepared.output, "-o");
        make_parent(request.journal, "--journal");
        const auto journal = backends.journal(request.journal);
        const std::string name = request.lab_name.empty() ? "nmsweep" + std::to_string(::getpid()) : request.lab_name;
        std::optional<LabSession> made;
        if (request.lab_from.empty()) {
            made.emplace(name, request.topology, iperf3_peer ? backends.iperf3_lab() : backends.lab(), request.ip_version == 6);
        } else {
            made.emplace(load_lab_file(request.lab_from), iperf3_peer ? backends.iperf3_lab() : backends.lab(), request.ip_version == 6);
        }
        LabSession& lab = *made;
        // Both ends of a VM lab are the guest's: what runs them is said with the results.
        HostInfo lab_host = host;
        if (lab.info().vm) lab_host.virtualization = lab.info().vm->virtualization;
        // An emulated CPU (QEMU's TCG, no /dev/kvm) answers an echo in tens of milliseconds when idle and can
        // stall for a second when the host is busy: the path probe waits 4 s there before it calls a size
        // a blackhole (resending every 250 ms as always), so a slow guest is not taken for a dropping path.
        if (lab.info().vm && lab.info().vm->accel == "tcg") options.probe_timeout = kEmulatedProbeTimeout;
        SweepServices services{*journal, lab.traffic(), lab.probe(), clock, observer, lab_host, lab_host, &load};
        SweepTarget target = lab.target();
        target.base.profile_categories = request.profile_categories;
        return run_sweep(prepared.plan, target, services, options, std::move(stop));
    }
    // Peer mode: find a missing key, an unreachable peer, and an agent that will not change its side,
    // before anything changes.
    const bool peer_changes = sweep_changes_end(prepared.plan, true);
    // The key also authenticates every test (a server started with --key-file wants it), so it is loaded
    // whenever one is given, not only when the peer's side changes.
    const std::string key_file = key_file_from(request.key_file);
    if (peer_changes && key_file.empty()) {
        throw usage_error("sweep " + config.name +
                          ": the config changes the peer's side, which its agent does only for a client holding the key: give "
                          "--key-file (or NICMATRIX_KEY_FILE), or set \"apply_to\" to \"local\"");
    }
    const std::optional<SecretKey> key = key_file.empty() ? std::nullopt : std::optional<SecretKey>(load_key(key_file));
    const std::string peer = resolve_peer(request.peer, request.ip_version);
    // A stock iperf3 logs an error for a connection that sends it nothing: its check is the empty test below.
    check_peer_reachable("", peer, port, kPeerCheckTimeout, !iperf3_peer);
    // The agent first: an agent that will not change the peer's side is a usage error (exit 2) whatever the
    // server would say about the tests.
    std::string peer_iface = request.peer_iface;
    const auto agent = peer_changes ? connect_agent(port, peer, prepared.plan, *key, peer_iface) : nullptr;
    // The peer's server takes each test of the config from us (its key, its limits), asked before any change.
    SweepTarget target;
    target.base.host = peer;
    target.base.port = port;
    target.base.iface = request.iface;
    const auto traffic = iperf3_peer ? backends.iperf3_traffic() : backends.traffic(key ? std::string(key->bytes()) : std::string());
    for (size_t i = 0; i < config.traffic.size(); ++i) {
        const auto& entry = config.traffic[i];
        if (entry.rfc2544) continue;
        const TestSpec spec = test_spec_for(entry, config, target.base);
        try {
            traffic->check_access(spec);
        } catch (const Error& e) {
            throw Error(e.kind(), "sweep: the server on " + request.peer + " refuses the test /traffic/" + std::to_string(i) + " (" + entry.name +
                                      "): " + e.what());
        }
    }
    make_parent(prepared.output, "-o");
    make_parent(request.journal, "--journal");
    const auto journal = backends.journal(request.journal);
    const auto device = backends.device();
    IcmpPathProbe probe("", peer);
    target.local = SweepEnd{device.get(), request.iface, ""};
    target.remote =
        agent ? SweepEnd{agent.get(), peer_iface, "", agent.get()} : SweepEnd{nullptr, "", "the sweep changes nothing on the peer", nullptr};
    target.base.profile_categories = request.profile_categories;
    // The peer's host as its agent reads it; unknown without an agent (or from one that cannot say).
    HostInfo remote_host;
    if (agent) {
        try {
            remote_host = agent->host_info(peer_iface);
        } catch (const Error& e) {
            if (observer) observer->on_note("the peer agent did not describe its host: " + std::string(e.what()));
        }
    }
    SweepServices services{*journal, *traffic, probe, clock, observer, host, remote_host, &load};
    return run_sweep(prepared.plan, target, services, options, std::move(stop));
}

}  // namespace nm
