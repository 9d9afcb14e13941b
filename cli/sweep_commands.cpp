// sweep, report, compare: parse flags, build the world (lab or peer), call matrix, print.
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "core/base/clock.hpp"
#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/version.hpp"
#include "matrix/config.hpp"
#include "matrix/host_info.hpp"
#include "matrix/icmp_path_probe.hpp"
#include "matrix/lab_session.hpp"
#include "matrix/real_backends.hpp"
#include "matrix/report.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"

namespace nm::cli {
namespace {

struct SweepOptionsCli {
    std::string config;
    bool lab = false;
    std::string iface;
    std::string peer;
    uint16_t port = kDefaultPort;
    std::string output;
    std::string resume;
    bool dry_run = false;
    bool quiet = false;
    std::string journal = kDefaultJournalPath;
    std::string lab_name;
    std::string topology = "pair";
    std::string metric = "throughput_bps";
    std::string command;
};

std::string clock_text(double s) {
    const long t = static_cast<long>(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

// One line per cell: its number, key and settings when it starts; its result, elapsed and ETA when done.
class ProgressPrinter final : public SweepObserver {
public:
    void on_note(const std::string& text) override { std::cout << "note: " << text << '\n' << std::flush; }
    void on_cell_start(const CellProgress& p) override {
        std::cout << '[' << p.number << '/' << p.total << "] " << p.cell->key << "  local: " << describe_settings(p.local)
                  << "  peer: " << describe_settings(p.remote) << " ... " << std::flush;
    }
    void on_cell_done(const CellProgress& p, const CellResult& r) override {
        std::cout << status_name(r.status);
        if (const auto it = r.summary.find("throughput_bps"); r.status == CellStatus::Ok && it != r.summary.end()) {
            std::cout << ' ' << format_metric("throughput_bps", it->second.median);
            if (const auto cpu = r.summary.find("system_busy_pct"); cpu != r.summary.end()) std::cout << " cpu " << format_metric("system_busy_pct", cpu->second.median);
        }
        if (!r.error.empty()) std::cout << " (" << r.error << ')';
        std::cout << "  elapsed " << clock_text(p.elapsed_s) << " eta " << clock_text(p.eta_s) << '\n' << std::flush;
    }
};

// The command line as typed, for the results file (/proc/self/cmdline: NUL-separated arguments).
std::string command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string all = text.str();
    std::replace(all.begin(), all.end(), '\0', ' ');
    while (!all.empty() && all.back() == ' ') all.pop_back();
    return all;
}

bool have_net_admin() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    return ::syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << CAP_NET_ADMIN)) != 0;
}

std::string default_output(const SweepConfig& config) {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return "results/" + config.name + "-" + stamp + ".json";
}

void print_plan(const std::vector<CellPlan>& plan, const SweepConfig& config) {
    size_t todo = 0;
    for (const auto& p : plan) {
        std::cout << (p.done ? "  done  " : "  ") << p.cell.key << "  local: " << describe_settings(p.local)
                  << "  peer: " << describe_settings(p.remote) << '\n';
        if (!p.done) ++todo;
    }
    const double per_cell = config.repetitions * (config.omit_s + config.duration_s) + config.cooldown_s;
    std::cout << todo << " of " << plan.size() << " cells to run, about " << clock_text(per_cell * static_cast<double>(todo))
              << " of measuring; nothing was changed (--dry-run)\n";
}

void run_sweep_command(const SweepOptionsCli& o, std::stop_token stop) {
    const SweepConfig config = load_sweep_config(o.config);
    if (const auto m = known_metrics(); std::find(m.begin(), m.end(), o.metric) == m.end()) {
        std::string list;
        for (const auto& name : m) list += (list.empty() ? "" : ", ") + name;
        throw usage_error("--metric " + o.metric + ": expected one of " + list);
    }
    std::optional<ResultsFile> resume;
    if (!o.resume.empty()) {
        resume = load_results(o.resume);
        check_resumable(*resume, config, o.resume);
    }
    if (o.dry_run) {
        print_plan(plan_sweep(config, resume), config);
        return;
    }
    if (o.lab == !o.iface.empty()) throw usage_error("sweep: give either --lab or --iface IF --peer HOST");
    if (!o.lab && o.peer.empty()) throw usage_error("sweep: --iface needs --peer HOST (the machine running `nicmatrix serve`)");
    if (!have_net_admin()) throw usage_error("sweep: changing interface settings needs CAP_NET_ADMIN; run as root");

    const std::string output = !o.output.empty() ? o.output : !o.resume.empty() ? o.resume : default_output(config);
    // Made only once every check before the first change has passed.
    const auto make_directories = [&] {
        if (const auto dir = std::filesystem::path(output).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
        if (const auto dir = std::filesystem::path(o.journal).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
    };

    SweepOptions options;
    options.output_path = output;
    options.resume = resume;
    options.command = o.command;
    options.config_file = o.config;
    options.tool_version = kVersion;
    ProgressPrinter printer;
    SteadyClock clock;
    const HostInfo host = read_host_info();

    SweepOutcome outcome;
    if (o.lab) {
        make_directories();
        const auto journal = real_journal(o.journal);
        const std::string name = o.lab_name.empty() ? "nmsweep" + std::to_string(::getpid()) : o.lab_name;
        LabSession lab(name, Json(o.topology).get<LabTopology>(), real_lab_factories());
        SweepServices services{*journal, lab.traffic(), lab.probe(), clock, o.quiet ? nullptr : &printer, host, host};
        outcome = run_sweep(config, lab.target(), services, options, stop);
    } else {
        const std::string no_agent = "the peer agent's authenticated settings control is not available yet";
        refuse_if_uncontrollable(config, true, no_agent);
        check_peer_reachable("", o.peer, o.port, std::chrono::seconds(2));
        make_directories();
        const auto journal = real_journal(o.journal);
        const auto device = real_device_control();
        const auto traffic = real_traffic_client();
        IcmpPathProbe probe("", o.peer);
        SweepTarget target;
        target.local = SweepEnd{device.get(), o.iface, ""};
        target.remote = SweepEnd{nullptr, "", no_agent};
        target.base.host = o.peer;
        target.base.port = o.port;
        target.base.iface = o.iface;
        HostInfo remote;
        SweepServices services{*journal, *traffic, probe, clock, o.quiet ? nullptr : &printer, host, remote};
        outcome = run_sweep(config, target, services, options, stop);
    }
    if (!o.quiet) std::cout << '\n' << render_matrix(build_matrix(outcome.results, o.metric), TableFormat::Text);
    std::cout << "results: " << output << '\n';
    if (outcome.interrupted) {
        throw Error(ErrorKind::Failed, "sweep interrupted after " + std::to_string(outcome.results.cells.size()) +
                                           " cells; interfaces restored; continue with --resume " + output);
    }
}

}  // namespace

void add_sweep_commands(CLI::App& app, std::stop_token stop) {
    auto o = std::make_shared<SweepOptionsCli>();
    auto* sweep = app.add_subcommand("sweep", "Run a sweep: every offload profile x MTU x traffic cell of CONFIG, into a results file");
    sweep->add_option("config", o->config, "Sweep config (JSON, see configs/sweep.schema.json)")->required();
    auto* lab = sweep->add_flag("--lab", o->lab, "Run on a lab of its own (veth between two namespaces), taken down afterwards");
    auto* iface = sweep->add_option("--iface", o->iface, "Local interface to sweep (with --peer)");
    sweep->add_option("--peer", o->peer, "IPv4 address of the peer running `nicmatrix serve`")->needs(iface);
    sweep->add_option("--port", o->port, "The peer's control port")->capture_default_str();
    lab->excludes(iface);
    sweep->add_option("--lab-name", o->lab_name, "Name of the lab --lab makes (default nmsweep<pid>); its namespaces are NAME-a, NAME-b");
    sweep->add_option("--topology", o->topology, "--lab shape: pair (veth between the ends) or bridge (a Linux bridge between, its ports at MTU 1500)")
        ->check(CLI::IsMember({"pair", "bridge"}))
        ->capture_default_str();
    sweep->add_option("-o,--output", o->output, "Results file (default results/<config name>-<UTC stamp>.json)");
    sweep->add_option("--resume", o->resume, "Continue this results file: run only its missing cells");
    sweep->add_flag("--dry-run", o->dry_run, "Print the cells and the settings each would apply; change nothing");
    sweep->add_flag("-q,--quiet", o->quiet, "No progress lines and no table; print only the results file");
    sweep->add_option("--journal", o->journal, "Where the original settings are journalled until restored")->capture_default_str();
    sweep->add_option("--metric", o->metric, "Metric of the table printed at the end")->capture_default_str();
    sweep->callback([o, stop] {
        o->command = command_line();
        run_sweep_command(*o, stop);
    });

    struct ReportOptions {
        std::string file, other, format = "table", metric = "throughput_bps";
    };
    auto r = std::make_shared<ReportOptions>();
    auto* report = app.add_subcommand("report", "Print a results file as the offload x traffic by MTU matrix");
    report->add_option("file", r->file, "Results file")->required();
    report->add_option("--format", r->format, "table, md (Markdown) or csv")->check(CLI::IsMember({"table", "md", "csv"}))->capture_default_str();
    report->add_option("--metric", r->metric, "throughput_bps, packets_per_s, cpu_sender_pct, cpu_receiver_pct, system_busy_pct, softirq_pct, tcp_retransmits, loss_pct, service_demand_us_per_kb")
        ->capture_default_str();
    report->callback([r] {
        std::cout << render_matrix(build_matrix(load_results(r->file), r->metric), parse_table_format(r->format));
    });

    auto c = std::make_shared<ReportOptions>();
    auto* compare = app.add_subcommand("compare", "Compare two results files cell by cell (matched by settings): A, B, B/A");
    compare->add_option("a", c->file, "Results file A")->required();
    compare->add_option("b", c->other, "Results file B")->required();
    compare->add_option("--format", c->format, "table, md (Markdown) or csv")->check(CLI::IsMember({"table", "md", "csv"}))->capture_default_str();
    compare->add_option("--metric", c->metric, "Metric to compare (as for report)")->capture_default_str();
    compare->callback([c] {
        const auto a = load_results(c->file);
        const auto b = load_results(c->other);
        std::cout << render_comparison(compare_results(a, b, c->metric, c->file, c->other), parse_table_format(c->format));
    });
}

}  // namespace nm::cli
