// sweep, report, compare: parse flags, call matrix, print. The rules that turn flags into a sweep live in
// matrix/sweep_request.hpp (shared with the Python module).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"
#include "core/device/sysctl_allow_list.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/model/report_types.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/profile_metrics.hpp"
#include "matrix/real_backends.hpp"
#include "matrix/report/frame_table.hpp"
#include "matrix/report/profile_report.hpp"
#include "matrix/report/report.hpp"
#include "matrix/report/report_html.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"
#include "matrix/sweep_request.hpp"
#include "matrix/sweep_stream.hpp"
#include "vmlab/vm_sweep.hpp"

namespace nm::cli {
namespace {

std::string clock_text(double s) {
    const long t = std::lround(s);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

// One line per visit: the cell's number, key and repetition (its settings at its first visit) when it
// starts; its result so far, elapsed and the estimate (and the budget) when done.
class ProgressPrinter final : public SweepObserver {
public:
    /// `precision`: the sweep's; the line gives the interval of the metric it judges each cell by.
    explicit ProgressPrinter(std::optional<PrecisionSpec> precision) : precision_(std::move(precision)) {}

    void on_note(const std::string& text) override {
        end_line();
        std::cout << "note: " << text << '\n' << std::flush;
    }
    void on_cell_start(const CellProgress& p) override {
        std::cout << '[';
        if (p.round > 0) std::cout << "round " << p.round << ", ";
        std::cout << p.number << '/' << p.total << "] " << p.cell->key;
        if (p.repetition <= 1) {
            std::cout << "  local: " << describe_settings(p.local) << "  peer: " << describe_settings(p.remote);
            if (!p.dut.empty()) std::cout << "  dut: " << describe_settings(p.dut);
        }
        if (p.round > 0) std::cout << "  repetition " << p.repetition;
        std::cout << " ... " << std::flush;
        open_ = true;
    }
    void on_cell_done(const CellProgress& p, const CellResult& r) override {
        std::cout << status_name(r.status);
        const std::string headline = headline_metric(p.cell->traffic.test);
        // The metric a precision judges the cell by gets the interval; when that is not the headline
        // figure, it follows under its own name.
        const std::string judged = precision_ ? precision_metric(*precision_, p.cell->traffic.test) : headline;
        if (const auto it = r.summary.find(headline); r.status == CellStatus::Ok && it != r.summary.end()) {
            std::cout << ' ' << format_metric(headline, it->second.median);
            if (judged == headline) {
                print_interval(it->second);
            } else {
                std::cout << " (n=" << it->second.n << ')';
                if (const auto j = r.summary.find(judged); j != r.summary.end()) {
                    std::cout << ' ' << judged << ' ' << format_metric(judged, j->second.median);
                    print_interval(j->second);
                }
            }
            if (const auto p99 = r.summary.find("rr_p99_us"); headline != "throughput_bps" && p99 != r.summary.end()) {
                std::cout << " p99 " << format_metric("rr_p99_us", p99->second.median);
            }
            const auto snd = r.summary.find("cpu_sender_pct");
            const auto rcv = r.summary.find("cpu_receiver_pct");
            if (snd != r.summary.end() && rcv != r.summary.end()) {
                std::cout << " cpu sender " << format_metric("cpu_sender_pct", snd->second.median) << " receiver "
                          << format_metric("cpu_receiver_pct", rcv->second.median);
            }
            if (!r.runs.empty() && r.runs.back().disturbed)
                std::cout << " [disturbed: busy " << fixed_text(r.runs.back().background->busy_pct, 0) << "%]";
            if (p.final && r.precision_met) std::cout << (*r.precision_met ? " precision met" : " precision NOT met");
        }
        if (r.rfc2544) std::cout << ' ' << r.rfc2544->rows.size() << " frame sizes";
        if (!r.error.empty()) std::cout << " (" << r.error << ')';
        std::cout << "  elapsed " << clock_text(p.elapsed_s) << " eta " << clock_text(p.eta_s);
        if (p.budget_s > 0) std::cout << " (budget " << clock_text(p.budget_s) << ')';
        std::cout << '\n' << std::flush;
        open_ = false;
    }
    // A cell cut short leaves its line open.
    void end_line() {
        if (open_) std::cout << "stopped\n";
        open_ = false;
    }

private:
    // " ±H% (C%, n=N)": the half-width of the median's interval in % of the median, and its confidence.
    static void print_interval(const MetricSummary& s) {
        if (s.median_ci_low && s.median_ci_high && s.median != 0) {
            const double half = std::max(s.median - *s.median_ci_low, *s.median_ci_high - s.median) / s.median * 100;
            std::cout << " ±" << fixed_text(half, 1) << "% (" << fixed_text(*s.median_ci_confidence, 1) << "%, n=" << s.n << ')';
        } else {
            std::cout << " (n=" << s.n << ')';
        }
    }
    static std::string fixed_text(double v, int digits) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
        return buf;
    }
    std::optional<PrecisionSpec> precision_;
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
    std::cout << todo << " of " << plan.size() << " cells to run, " << planned_repetitions(config) << " repetitions each"
              << (config.precision ? " expected (more until the precision is met, at most " + std::to_string(config.precision->max_repetitions) + ")"
                                   : "")
              << ", about " << clock_text(seconds) << " of measuring; nothing was changed (--dry-run)\n";
}

// What --metric is when not given (matrix/report/report.hpp default_metric).
constexpr const char* kDefaultMetricText = "throughput_bps, or rr_transactions_per_s when every cell is a request/response test";

void check_metric(const std::string& metric) {
    const auto known = known_metrics();
    if (std::find(known.begin(), known.end(), metric) != known.end() || is_profile_metric(metric)) return;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    list += ", cpu:<category> (a config with \"profile\": true)";
    throw usage_error("--metric " + metric + ": expected one of " + list);
}

struct SweepFlags {
    SweepRequest request;
    std::string lab;  ///< --lab's value: "veth" (no value) or "vm:DUT,PEER"; "" = not given
    std::string topology = "pair";
    bool dry_run = false;
    bool quiet = false;
    bool json_stream = false;
    size_t json_stream_queue = kDefaultJsonStreamQueue;
    std::string metric;  ///< empty: default_metric() of the results
    double precision = 0;
    bool precision_given = false;
    uint64_t seed = 0;
    bool seed_given = false;
};

// --lab takes an optional value, so `sweep --lab CONFIG` reads CONFIG as that value: put it back.
void settle_lab_flag(SweepFlags& f) {
    if (!f.lab.empty() && f.lab != "veth" && f.lab.rfind("vm:", 0) != 0 && f.request.config_file.empty()) {
        f.request.config_file = f.lab;
        f.lab = "veth";
    }
    if (f.request.config_file.empty()) throw usage_error("sweep: the config file is missing (nicmatrix sweep CONFIG ...)");
    if (f.lab == "veth") f.request.lab = true;
    else if (!f.lab.empty()) parse_vm_lab_spec(f.lab);  // a clear error for a bad vm: list before anything else
}

// `--lab vm:DUT,PEER`: the sweep runs in the guest; its output comes here as it goes.
void vm_sweep_command(SweepFlags& f, const PreparedSweep& prepared, std::stop_token stop) {
    VmSweepRequest vm;
    vm.lab_spec = f.lab;
    vm.config_file = f.request.config_file;
    vm.output = prepared.output;
    vm.resume = f.request.resume;
    vm.lab_name = f.request.lab_name;
    vm.command = f.request.command;
    if (f.request.ip_version == 6) vm.guest_flags.push_back("-6");
    if (f.precision_given) vm.guest_flags.insert(vm.guest_flags.end(), {"--precision", std::to_string(f.precision)});
    if (f.seed_given) vm.guest_flags.insert(vm.guest_flags.end(), {"--seed", std::to_string(f.seed)});
    if (!f.request.time_budget.empty()) vm.guest_flags.insert(vm.guest_flags.end(), {"--time-budget", f.request.time_budget});
    if (!f.metric.empty()) vm.guest_flags.insert(vm.guest_flags.end(), {"--metric", f.metric});
    if (f.quiet) vm.guest_flags.push_back("-q");
    if (f.json_stream) vm.guest_flags.push_back("--json-stream");
    const auto write = [](std::ostream& out, std::string_view chunk) {
        out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        out.flush();
    };
    const int status = run_vm_sweep(
        vm, stop, [&](std::string_view c) { write(std::cout, c); }, [&](std::string_view c) { write(std::cerr, c); });
    if (status != 0) throw ExitStatus{status};
}

void sweep_command(SweepFlags& f, std::stop_token stop) {
    settle_lab_flag(f);
    if (!f.metric.empty()) check_metric(f.metric);
    f.request.command = command_line();
    f.request.topology = Json(f.topology).get<LabTopology>();
    if (f.precision_given) f.request.precision_pct = f.precision;
    if (f.seed_given) f.request.seed = f.seed;
    const PreparedSweep prepared = prepare_sweep(f.request);
    if (f.dry_run) {
        print_plan(plan_sweep(prepared.plan, prepared.resume), prepared.plan.config);
        return;
    }
    if (!f.lab.empty() && f.lab != "veth") {
        vm_sweep_command(f, prepared, std::move(stop));
        return;
    }
    if (f.json_stream) {
        // Never blocks: a reader that stops reading costs events (counted in the results), not the sweep or
        // its restore. What is still queued at the end gets a few seconds, then is counted too.
        std::cout.flush();
        JsonLines lines(STDOUT_FILENO, f.json_stream_queue);
        SweepStreamWriter stream(lines);
        stream.start(prepared.plan.config.name, plan_sweep(prepared.plan, prepared.resume).size(), prepared.output, f.request.command);
        const SweepOutcome outcome = execute_sweep(f.request, prepared, real_backends(), &stream, stop);
        stream.end(prepared.output, outcome.results.cells.size(), outcome.interrupted, outcome.results.run.budget_reached);
        lines.drain(std::chrono::steady_clock::now() + (outcome.interrupted ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000)),
                    outcome.interrupted ? std::stop_token{} : stop);
        if (const auto lost = describe_stream_losses(lines.stats()); !lost.empty()) std::cerr << "nicmatrix: " << lost << '\n';
        if (outcome.interrupted) throw Error(ErrorKind::Failed, "sweep interrupted; interfaces restored; continue with --resume " + prepared.output);
        return;
    }
    ProgressPrinter printer(prepared.plan.config.precision);
    const SweepOutcome outcome = execute_sweep(f.request, prepared, real_backends(), f.quiet ? nullptr : &printer, std::move(stop));
    printer.end_line();
    if (!f.quiet) {
        const std::string metric = f.metric.empty() ? default_metric(outcome.results) : f.metric;
        std::cout << '\n' << render_results(outcome.results, metric, TableFormat::Text);
    }
    std::cout << "results: " << prepared.output << '\n';
    if (outcome.results.run.budget_reached) {
        std::cout << "time budget reached: some cells did not get all their repetitions; --resume " << prepared.output << " continues\n";
    }
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

struct ReportOptions {
    std::string file, other, format = "table", metric, against, output;  // metric empty: default_metric()
    double confidence = 95;
    std::string adjust = "holm";
    std::optional<double> margin_pct;
    bool cpu_breakdown = false;
    ComparisonOptions comparison() const { return ComparisonOptions{confidence, parse_adjustment(adjust), margin_pct}; }
};

// --adjust and --margin of compare and report (one wording for both).
void add_verdict_options(CLI::App* cmd, ReportOptions& opts) {
    cmd->add_option("--adjust", opts.adjust,
                    "How the cells' p-values are adjusted for being many: holm (the chance of any false * among all cells at most "
                    "1 - confidence), bh (Benjamini-Hochberg: the expected share of false * among the * at most that), none (each cell on its own)")
        ->check(CLI::IsMember({"holm", "bh", "none"}))
        ->capture_default_str();
    cmd->add_option("--margin", opts.margin_pct,
                    "Equivalence margin, percent (e.g. 3): mark a cell = when two one-sided tests show B/A inside [1 - m, 1 + m], "
                    "adjusted like --adjust")
        ->check(CLI::Range(0.01, 50.0));
}

void report_command(ReportOptions& o) {
    const auto results = load_results(o.file);
    std::optional<ResultsFile> other;
    if (!o.other.empty()) other = load_results(o.other);
    if (o.metric.empty()) o.metric = default_metric(results);
    std::string text;
    if (o.format == "html") {
        const HtmlReportRequest request{o.metric, o.against, o.comparison()};
        const HtmlReportFile a{results, o.file};
        if (other) {
            const HtmlReportFile b{*other, o.other};
            text = render_html_report(a, &b, request);
        } else {
            text = render_html_report(a, nullptr, request);
        }
    } else {
        const auto format = parse_table_format(o.format);
        if (other && !o.against.empty()) throw usage_error("--against takes one results file (or --format html)");
        if (other && o.cpu_breakdown) throw usage_error("--cpu-breakdown takes one results file");
        if (o.cpu_breakdown) text = render_cpu_breakdown(results, format);
        else if (other) text = render_comparison(compare_results(results, *other, o.metric, o.file, o.other, o.comparison()), format);
        else if (!o.against.empty()) text = render_against(compare_to_profile(results, o.metric, o.against, o.file, o.comparison()), format);
        else text = render_results(results, o.metric, format);
    }
    if (o.output.empty()) {
        std::cout << text;
    } else {
        write_file_atomically(o.output, text, 0644);
        std::cerr << "wrote " << o.output << '\n';
    }
}

void add_sweep_command(CLI::App& app, std::stop_token stop) {
    auto f = std::make_shared<SweepFlags>();
    auto& r = f->request;
    auto* sweep = app.add_subcommand("sweep", "Run a sweep: every offload profile x MTU x traffic cell of CONFIG, into a results file");
    sweep->add_option("config", r.config_file, "Sweep config (JSON, see configs/sweep.schema.json)");
    auto* lab = sweep
                    ->add_option("--lab", f->lab,
                                 "Run on a lab of its own (veth between two namespaces), taken down afterwards; --lab vm:DUT,PEER (e.g. "
                                 "vm:e1000e,8139cp): run the whole sweep inside the VM lab's guest on two emulated NICs and their real "
                                 "drivers (DUT the device under test, PEER its peer; a running VM lab with both on one hub, else one "
                                 "booted for the sweep and ended afterwards); the results file is written here")
                    ->expected(0, 1)
                    ->default_str("veth");
    auto* iface = sweep->add_option("--iface", r.iface, "Local interface to sweep (with --peer)");
    sweep->add_option("--peer", r.peer, "The peer running `nicmatrix serve`: an IPv4 or IPv6 address, or a name (resolved once)")->needs(iface);
    auto* v4 = sweep->add_flag_function(
        "-4,--ipv4", [f](int64_t) { f->request.ip_version = 4; },
        "Use IPv4: the lab's 198.18.0.0/24, or a --peer name's IPv4 address (the default on the lab)");
    sweep
        ->add_flag_function(
            "-6,--ipv6", [f](int64_t) { f->request.ip_version = 6; },
            "Use IPv6: the lab's 2001:2::/64, or a --peer name's IPv6 address; the path probe is then ICMPv6 with don't-fragment")
        ->excludes(v4);
    sweep->add_option("--port", r.port, "The peer's control port (default 5301; 5201 with --peer-kind iperf3)");
    sweep->add_option("--peer-iface", r.peer_iface,
                      "The peer's interface to change (default: the one its agent allows; not with --peer-kind iperf3)");
    sweep
        ->add_option("--peer-kind", r.peer_kind,
                     "What runs on the far end: nicmatrix (`nicmatrix serve`, the default) or iperf3 (a stock `iperf3 -s`, driven with "
                     "iperf3's own protocol: TCP stream tests, only the local interface changes; with --lab, Debian's iperf3 -s runs in "
                     "the lab's server namespace). Each run records the server's own figures and version under \"peer\"")
        ->check(CLI::IsMember({"nicmatrix", "iperf3"}));
    sweep->add_option("--key-file", r.key_file,
                      "Pre-shared key of the peer agent (default $NICMATRIX_KEY_FILE; 32 to 4096 bytes, readable by its owner only); "
                      "needed when the config changes the peer's side. The agent must prove it holds the same key, or the sweep "
                      "stops before changing anything; a lost agent is reconnected for up to 15 s, else the sweep restores this side, "
                      "saves the finished cells and exits 1");
    lab->excludes(iface);
    sweep->add_option("--lab-from", r.lab_from,
                      "With --lab: run on the existing lab this file describes (the JSON `nicmatrix lab show` prints; its client and server "
                      "interfaces are the ends), left in place afterwards (the VM lab runs its sweeps in the guest so)");
    sweep->add_option("--lab-name", r.lab_name, "Name of the lab --lab makes (default nmsweep<pid>); its namespaces are NAME-a, NAME-b");
    sweep
        ->add_option("--topology", f->topology,
                     "--lab shape: pair (veth between the ends) or bridge (a Linux bridge between, its ports at MTU 1500; \"apply_to\": \"dut\" "
                     "sweeps the bridge's ports)")
        ->check(CLI::IsMember({"pair", "bridge"}))
        ->capture_default_str();
    sweep->add_option("-o,--output", r.output, "Results file (default nicmatrix-results/<config name>-<UTC stamp>.json in the current directory)");
    sweep->add_option("--resume", r.resume,
                      "Continue this results file: measure only what it is missing (cells not visited, repetitions still wanted)");
    sweep->add_flag("--dry-run", f->dry_run, "Print the cells and the settings each would apply; change nothing");
    sweep->add_flag("-q,--quiet", f->quiet, "No progress lines and no table; print only the results file");
    sweep->add_flag("--json-stream", f->json_stream,
                    "Print only JSON lines as the sweep goes: start, note, cell_start, progress (live), interval, repetition, cell, end "
                    "(results/STREAM.md, results/stream.schema.json). Written without ever blocking the sweep: a reader that "
                    "stops reading costs events, counted in the results (run.json_stream), never the sweep or its restore");
    sweep
        ->add_option("--json-stream-queue", f->json_stream_queue,
                     "Lines --json-stream holds for a slow reader; an event that finds them all waiting is dropped and counted")
        ->check(CLI::Range(size_t{1}, size_t{1000000}))
        ->capture_default_str();
    sweep->add_option("--journal", r.journal,
                      "Where the original settings are journalled until restored (default $NICMATRIX_JOURNAL or "
                      "/run/nicmatrix/journal.json, as for restore). At start the entries of processes that are gone are "
                      "restored; an interface a running nicmatrix holds there is refused (exit 1, naming its pid) before "
                      "anything changes. At the end the sweep restores from the originals it read, then drops its entries");
    sweep->add_option("--metric", f->metric,
                      std::string("Metric of the table printed at the end (as for report; default ") + kDefaultMetricText + ")");
    sweep
        ->add_option("--precision", f->precision,
                     "Repeat each cell until the interval of its median is within ±PCT% (sets the config's precision.ci_pct; "
                     "95% confidence, 3..12 repetitions unless the config says otherwise)")
        ->each([f](const std::string&) { f->precision_given = true; });
    sweep->add_option("--time-budget", r.time_budget,
                      "Cap the whole sweep: no repetition starts that would end after DURATION (600, 90s, 15m, 1h30m)");
    sweep->add_option("--seed", f->seed, "Seed of the shuffled order (run.order.seed of a results file repeats its order)")
        ->each([f](const std::string&) { f->seed_given = true; });
    sweep->add_option("--profile-categories", r.profile_categories,
                      "Category table of the kernel profile a config with \"profile\": true takes (JSON, as "
                      "configs/profile-categories.json; default: the shipped one)");
    std::string sysctls;
    for (const auto& e : sysctl_allow_list()) sysctls += std::string("\n  ") + e.name + " - " + e.what;
    sweep->footer(
        "Tuning axes (each a list joining the product): channels, rings, coalesce, rps, xps, irq_affinity, napi, sysctl, "
        "qdisc (see nicmatrix-sweep(1)). Sysctls a config may set (the allow-list; per namespace unless host-wide):" +
        sysctls +
        "\n\n"
        "Every way out restores the interfaces: the end, Ctrl-C, SIGTERM or SIGHUP (the cell being measured is dropped; a "
        "second signal is only counted, the restore is never cut short), an error, a closed stdout (`| head`: printing "
        "stops, the sweep goes on). After SIGKILL or a crash, `nicmatrix restore` does it. Exit status: 0 done; 1 "
        "interrupted by a signal (continue with --resume), an interface held by another running nicmatrix, or a "
        "failure; 2 bad input (config, flags, interfaces), nothing changed. The same holds for channels, rings, coalescing, "
        "RPS/XPS, IRQ affinity, NAPI, sysctls and the root qdisc.");
    sweep->callback([f, stop] { sweep_command(*f, stop); });
}

void add_report_command(CLI::App& app) {
    auto o = std::make_shared<ReportOptions>();
    auto* report = app.add_subcommand("report",
                                      "Print a results file as the offload x traffic by MTU matrix, and the frame-size table of every rfc2544 cell; "
                                      "--format html writes one self-contained page");
    report->add_option("file", o->file, "Results file")->required();
    report->add_option("file2", o->other,
                       "A second results file (B): the page's compare view with html, the comparison table (as compare) otherwise");
    report->add_option("--format", o->format, "table, md (Markdown), csv, json (with --against or two files), or html (a page that opens offline)")
        ->check(CLI::IsMember({"table", "md", "csv", "json", "html"}))
        ->capture_default_str();
    report->add_option("-o,--output", o->output, "Write the report to this file (atomically) instead of stdout");
    std::string metrics;
    for (const auto& name : known_metrics()) metrics += (metrics.empty() ? "" : ", ") + name;
    report->add_option("--metric", o->metric,
                       "The figure to show: " + metrics +
                           "; with a kernel profile cpu:<category> (cpu:copy, cpu:gro, ...; two "
                           "hosts: cpu:sender:<category>, cpu:receiver:<category>). Default " +
                           kDefaultMetricText);
    report->add_flag("--cpu-breakdown", o->cpu_breakdown,
                     "Per cell, where the CPU went: the kernel profile's categories (median share of sampled CPU time), the "
                     "ends side by side (a sweep with \"profile\": true)");
    report->add_option("--against", o->against,
                       "Print every cell relative to the cell of this offload profile at the same MTU and traffic: B/A with its interval, "
                       "* where it excludes 1, ≈ where it includes 1 (html: under each cell's median)");
    report->add_option("--confidence", o->confidence, "Confidence of the intervals of B/A with --against or two files, percent")
        ->check(CLI::Range(50.0, 99.9))
        ->capture_default_str();
    add_verdict_options(report, *o);
    report->callback([o] { report_command(*o); });
}

void add_compare_command(CLI::App& app) {
    auto c = std::make_shared<ReportOptions>();
    auto* compare = app.add_subcommand(
        "compare", "Compare two results files cell by cell (matched by settings): A, B, B/A with its interval; * where it excludes 1");
    compare->add_option("a", c->file, "Results file A")->required();
    compare->add_option("b", c->other, "Results file B")->required();
    compare->add_option("--format", c->format, "table, md (Markdown), csv or json")
        ->check(CLI::IsMember({"table", "md", "csv", "json"}))
        ->capture_default_str();
    compare->add_option("--metric", c->metric, std::string("Metric to compare (as for report; default ") + kDefaultMetricText + ", of A)");
    compare->add_option("--confidence", c->confidence, "Confidence of the intervals of B/A, percent")
        ->check(CLI::Range(50.0, 99.9))
        ->capture_default_str();
    add_verdict_options(compare, *c);
    compare->callback([c] {
        const auto a = load_results(c->file);
        const auto b = load_results(c->other);
        if (c->metric.empty()) c->metric = default_metric(a);
        std::cout << render_comparison(compare_results(a, b, c->metric, c->file, c->other, c->comparison()), parse_table_format(c->format));
    });
}

}  // namespace

void add_sweep_commands(CLI::App& app, std::stop_token stop) {
    add_sweep_command(app, std::move(stop));
    add_report_command(app);
    add_compare_command(app);
}

}  // namespace nm::cli
