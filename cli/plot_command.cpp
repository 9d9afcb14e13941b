// `nicmatrix plot`: the plots live in the Python package (nicmatrix.plot, matplotlib); this command checks
// its flags and replaces itself with `/usr/bin/python3 -m nicmatrix.plot ...`, so there is one plotting
// implementation. The package is found next to this executable: build/python/ in the build tree, or
// <prefix>/<one of NM_PYTHON_INSTALL_DIRS> after `cmake --install` or from the Debian package; else
// Python's own path.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "core/base/error.hpp"

#ifndef NM_PYTHON_INSTALL_DIRS
#define NM_PYTHON_INSTALL_DIRS ""
#endif

namespace nm::cli {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// The directory holding the package `nicmatrix` for this executable, or "" (then Python's own path).
// A package without its compiled module (a build tree where only the executable was built) is an error
// that says how to build it, not Python's "cannot import name '_nicmatrix' from partially initialized
// module".
std::string package_root() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    const auto dir = exe.parent_path();
    std::vector<std::filesystem::path> candidates{dir / "python"};
    std::istringstream installed{NM_PYTHON_INSTALL_DIRS};
    for (std::string rel; std::getline(installed, rel, ':');) {
        if (!rel.empty()) candidates.push_back(dir / ".." / rel);
    }
    for (const auto& c : candidates) {
        if (!std::filesystem::exists(c / "nicmatrix" / "__init__.py", ec)) continue;
        for (const auto& entry : std::filesystem::directory_iterator(c / "nicmatrix", ec)) {
            if (entry.path().filename().string().starts_with("_nicmatrix.")) {
                return std::filesystem::weakly_canonical(c, ec).string();
            }
        }
        throw Error(ErrorKind::Failed, "plot: the Python package in " + (c / "nicmatrix").string() +
                                           " has no compiled module _nicmatrix; build it with `cmake --build " + dir.string() +
                                           " --target _nicmatrix` (or `bash scripts/build.sh`)");
    }
    return "";
}

// The flags as given; one left empty is not passed on, so the defaults live in nicmatrix.plot only.
struct PlotOptions {
    std::vector<std::string> files;
    std::string output;
    std::string kind;
    std::string metric;
    std::string cpu;
    std::string cells;
    std::string of;
    std::string end;
    std::string rows;
    std::string columns;
};

[[noreturn]] void exec_plot(const PlotOptions& o) {
    std::vector<std::string> args{kPython, "-m", "nicmatrix.plot"};
    args.insert(args.end(), o.files.begin(), o.files.end());
    args.insert(args.end(), {"-o", o.output});
    for (const auto& [flag, value] : {std::pair{"--kind", &o.kind},
                                      {"--metric", &o.metric},
                                      {"--cpu", &o.cpu},
                                      {"--cells", &o.cells},
                                      {"--of", &o.of},
                                      {"--end", &o.end},
                                      {"--rows", &o.rows},
                                      {"--columns", &o.columns}}) {
        if (!value->empty()) args.insert(args.end(), {flag, *value});
    }

    if (const std::string root = package_root(); !root.empty()) {
        const char* old = std::getenv("PYTHONPATH");
        const std::string path = old && *old ? root + ":" + old : root;
        ::setenv("PYTHONPATH", path.c_str(), 1);
    }
    // main's StopSignal blocks SIGINT/SIGTERM/SIGHUP, and a blocked mask survives exec: unblock them so
    // Ctrl-C reaches Python.
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);

    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(kPython, argv.data());
    throw system_error(std::string("plot: run ") + kPython + " (Debian's python3 with python3-matplotlib)", errno);
}

}  // namespace

void add_plot_command(CLI::App& app) {
    auto o = std::make_shared<PlotOptions>();
    auto* plot = app.add_subcommand("plot", "Plot results files as PNG (the Python package nicmatrix.plot, matplotlib)");
    plot->add_option("files", o->files, "One results file, or two for --kind bars")->required()->expected(1, 2);
    plot->add_option("-o,--output", o->output, "Image to write (PNG; the extension picks the format)")->required();
    plot->add_option("--kind", o->kind,
                     "heatmap (a metric over offload profile x MTU with the median's interval, default for one file), scatter "
                     "(metric against CPU per cell), bars (two files side by side, default for two), timeseries (the intervals "
                     "of chosen cells over time), box (the repetitions of each cell), cdf (per-interval figures or latency) or "
                     "breakdown (the kernel profile stacked per cell)")
        ->check(CLI::IsMember({"heatmap", "scatter", "bars", "timeseries", "box", "cdf", "breakdown"}));
    plot->add_option("--metric", o->metric,
                     "Metric to plot, as for report (default throughput_bps, or rr_transactions_per_s "
                     "when every cell is a request/response test; timeseries and cdf: throughput_bps, "
                     "packets_per_s or rr_transactions_per_s of the intervals)");
    plot->add_option("--cpu", o->cpu, "scatter: the CPU metric on the x axis (default cpu_receiver_pct)");
    plot->add_option("--cells", o->cells,
                     "timeseries, box, cdf, breakdown: cells to draw, keys or patterns separated by commas "
                     "(all-on/*/tcp-p1); default every measured cell");
    plot->add_option("--of", o->of, "cdf: intervals (per-interval figures, default) or latency (request/response)")
        ->check(CLI::IsMember({"intervals", "latency"}));
    plot->add_option("--end", o->end, "breakdown: whose kernel profile, sender or receiver (default receiver)")
        ->check(CLI::IsMember({"sender", "receiver"}));
    plot->add_option("--rows", o->rows,
                     "heatmap: the settings that label the rows, separated by commas: profile, mtu and the "
                     "sweep's tuning axes (channels, rps, ...); default profile and every tuning axis");
    plot->add_option("--columns", o->columns, "heatmap: the setting along the columns (default mtu)");
    plot->callback([o] { exec_plot(*o); });
}

}  // namespace nm::cli
