// sweep, report, compare: parse flags, call matrix, print. The rules that turn flags into a sweep live in
// matrix/sweep_request.hpp (shared with the Python module).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "matrix/real_backends.hpp"
#include "matrix/frame_table.hpp"
#include "matrix/report.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"
#include "matrix/sweep_request.hpp"

namespace nm::cli {
namespace {

std::string clock_text(double s) {
    const long t = static_cast<long>(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

// One line per cell: its number, key and settings when it starts; its result, elapsed and ETA when done.
class ProgressPrinter final : public SweepObserver {
public:
    void on_note(const std::string& text) override {
        end_line();
        std::cout << "note: " << text << '\n' << std::flush;
    }
    void on_cell_start(const CellProgress& p) override {
        std::cout << '[' << p.number << '/' << p.total << "] " << p.cell->key << "  local: " << describe_settings(p.local)
                  << "  peer: " << describe_settings(p.remote);
        if (!p.dut.empty()) std::cout << "  dut: " << describe_settings(p.dut);
        std::cout << " ... " << std::flush;
        open_ = true;
    }
    void on_cell_done(const CellProgress& p, const CellResult& r) override {
        std::cout << status_name(r.status);
        if (const auto it = r.summary.find("throughput_bps"); r.status == CellStatus::Ok && it != r.summary.end()) {
            std::cout << ' ' << format_metric("throughput_bps", it->second.median);
            const auto snd = r.summary.find("cpu_sender_pct");
            const auto rcv = r.summary.find("cpu_receiver_pct");
            if (snd != r.summary.end() && rcv != r.summary.end()) {
                std::cout << " cpu sender " << format_metric("cpu_sender_pct", snd->second.median) << " receiver "
                          << format_metric("cpu_receiver_pct", rcv->second.median);
            }
        }
        if (r.rfc2544) std::cout << ' ' << r.rfc2544->rows.size() << " frame sizes";
        if (!r.error.empty()) std::cout << " (" << r.error << ')';
        std::cout << "  elapsed " << clock_text(p.elapsed_s) << " eta " << clock_text(p.eta_s) << '\n' << std::flush;
        open_ = false;
    }
    // A cell cut short leaves its line open.
    void end_line() {
        if (open_) std::cout << "stopped\n";
        open_ = false;
    }

private:
    bool open_ = false;
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

void print_plan(const std::vector<CellPlan>& plan, const SweepConfig& config) {
    size_t todo = 0;
    double seconds = 0;
    for (const auto& p : plan) {
        std::cout << (p.done ? "  done  " : "  ") << p.cell.key << "  local: " << describe_settings(p.local)
                  << "  peer: " << describe_settings(p.remote);
        if (!p.dut.empty()) std::cout << "  dut: " << describe_settings(p.dut);
        std::cout << '\n';
        if (!p.done) {
            ++todo;
            seconds += planned_seconds(config, p.cell);
        }
    }
    std::cout << todo << " of " << plan.size() << " cells to run, about " << clock_text(seconds)
              << " of measuring; nothing was changed (--dry-run)\n";
}

void check_metric(const std::string& metric) {
    const auto known = known_metrics();
    if (std::find(known.begin(), known.end(), metric) != known.end()) return;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    throw usage_error("--metric " + metric + ": expected one of " + list);
}

struct SweepFlags {
    SweepRequest request;
    std::string topology = "pair";
    bool dry_run = false;
    bool quiet = false;
    std::string metric = "throughput_bps";
};

void sweep_command(SweepFlags& f, std::stop_token stop) {
    check_metric(f.metric);
    f.request.command = command_line();
    f.request.topology = Json(f.topology).get<LabTopology>();
    const PreparedSweep prepared = prepare_sweep(f.request);
    if (f.dry_run) {
        print_plan(plan_sweep(prepared.config, prepared.resume), prepared.config);
        return;
    }
    ProgressPrinter printer;
    const SweepOutcome outcome = execute_sweep(f.request, prepared, real_backends(), f.quiet ? nullptr : &printer, std::move(stop));
    printer.end_line();
    if (!f.quiet) std::cout << '\n' << render_results(outcome.results, f.metric, TableFormat::Text);
    std::cout << "results: " << prepared.output << '\n';
    if (!outcome.stopped_because.empty()) {
        throw Error(ErrorKind::Failed, "sweep stopped: " + outcome.stopped_because + "; the local side is restored and the " +
                                           std::to_string(outcome.results.cells.size()) + " finished cells are saved; continue with --resume " +
                                           prepared.output);
    }
    if (outcome.interrupted) {
        throw Error(ErrorKind::Failed, "sweep interrupted after " + std::to_string(outcome.results.cells.size()) +
                                           " cells; interfaces restored; continue with --resume " + prepared.output);
    }
}

}  // namespace

void add_sweep_commands(CLI::App& app, std::stop_token stop) {
    auto f = std::make_shared<SweepFlags>();
    auto& r = f->request;
    auto* sweep = app.add_subcommand("sweep", "Run a sweep: every offload profile x MTU x traffic cell of CONFIG, into a results file");
    sweep->add_option("config", r.config_file, "Sweep config (JSON, see configs/sweep.schema.json)")->required();
    auto* lab = sweep->add_flag("--lab", r.lab, "Run on a lab of its own (veth between two namespaces), taken down afterwards");
    auto* iface = sweep->add_option("--iface", r.iface, "Local interface to sweep (with --peer)");
    sweep->add_option("--peer", r.peer, "IPv4 address of the peer running `nicmatrix serve`")->needs(iface);
    sweep->add_option("--port", r.port, "The peer's control port")->capture_default_str();
    sweep->add_option("--peer-iface", r.peer_iface, "The peer's interface to change (default: the one its agent allows)");
    sweep->add_option("--key-file", r.key_file,
                      "Pre-shared key of the peer agent (default $NICMATRIX_KEY_FILE; 32 to 4096 bytes, readable by its owner only); "
                      "needed when the config changes the peer's side. The agent must prove it holds the same key, or the sweep "
                      "stops before changing anything; a lost agent is reconnected for up to 15 s, else the sweep restores this side, "
                      "saves the finished cells and exits 1");
    lab->excludes(iface);
    sweep->add_option("--lab-name", r.lab_name, "Name of the lab --lab makes (default nmsweep<pid>); its namespaces are NAME-a, NAME-b");
    sweep->add_option("--topology", f->topology, "--lab shape: pair (veth between the ends) or bridge (a Linux bridge between, its ports at MTU 1500; \"apply_to\": \"dut\" sweeps the bridge's ports)")
        ->check(CLI::IsMember({"pair", "bridge"}))
        ->capture_default_str();
    sweep->add_option("-o,--output", r.output, "Results file (default results/<config name>-<UTC stamp>.json)");
    sweep->add_option("--resume", r.resume, "Continue this results file: run only its missing cells");
    sweep->add_flag("--dry-run", f->dry_run, "Print the cells and the settings each would apply; change nothing");
    sweep->add_flag("-q,--quiet", f->quiet, "No progress lines and no table; print only the results file");
    sweep->add_option("--journal", r.journal, "Where the original settings are journalled until restored (default $NICMATRIX_JOURNAL or /run/nicmatrix/journal.json, as for restore)");
    sweep->add_option("--metric", f->metric, "Metric of the table printed at the end")->capture_default_str();
    sweep->callback([f, stop] { sweep_command(*f, stop); });

    struct ReportOptions {
        std::string file, other, format = "table", metric = "throughput_bps";
    };
    auto o = std::make_shared<ReportOptions>();
    auto* report = app.add_subcommand("report", "Print a results file as the offload x traffic by MTU matrix, and the frame-size table of every rfc2544 cell");
    report->add_option("file", o->file, "Results file")->required();
    report->add_option("--format", o->format, "table, md (Markdown) or csv")->check(CLI::IsMember({"table", "md", "csv"}))->capture_default_str();
    report->add_option("--metric", o->metric,
                       "throughput_bps, packets_per_s, cpu_sender_pct, cpu_receiver_pct, system_busy_pct, softirq_pct, "
                       "tcp_retransmits, loss_pct, service_demand_us_per_kb")
        ->capture_default_str();
    report->callback([o] { std::cout << render_results(load_results(o->file), o->metric, parse_table_format(o->format)); });

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
