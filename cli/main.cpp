// nicmatrix: what checksum offload, scatter-gather, TSO/GSO/GRO and jumbo MTU buy on a NIC.
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "core/base/stop_signal.hpp"
#include "core/base/version.hpp"

namespace {

// A second Ctrl-C while the first one's stop (and restore) runs: say why nothing more happens.
void on_repeated_signal(int sig, int count) {
    std::fprintf(stderr, "nicmatrix: %s again (%d): already stopping; the interfaces are being restored first\n",
                 sig == SIGINT    ? "SIGINT"
                 : sig == SIGTERM ? "SIGTERM"
                                  : "SIGHUP",
                 count);
}

}  // namespace

int main(int argc, char** argv) {
    // A closed stdout (`nicmatrix sweep ... | head -1`) must stop the printing, not the process: with
    // SIGPIPE ignored a write fails with EPIPE, std::cout goes bad and drops the rest, and the work (and
    // its restore) goes on to its normal end and exit status.
    std::signal(SIGPIPE, SIG_IGN);
    nm::StopSignal stop_signal(on_repeated_signal);  // before any thread starts: every later thread inherits the blocked signals
    CLI::App app{"nicmatrix: measure what NIC offloads and MTU buy, in throughput and CPU", "nicmatrix"};
    app.set_version_flag("--version", nm::version_line());
    app.require_subcommand(1);
    nm::cli::add_lab_commands(app, stop_signal.token());
    nm::cli::add_device_commands(app);
    nm::cli::add_serve_command(app, stop_signal.token());
    nm::cli::add_run_command(app, stop_signal.token());
    nm::cli::add_sweep_commands(app, stop_signal.token());
    nm::cli::add_plot_command(app);
    nm::cli::add_schema_command(app);

    // Every exception ends here, so the stack unwinds and every destructor (the sweep's restore among
    // them) runs; one that escaped main would end in std::terminate with nothing restored.
    const auto output_lost = [] {
        std::cout.flush();
        if (std::cout.bad()) std::cerr << "nicmatrix: standard output was closed; the output after that was dropped\n";
    };
    try {
        app.parse(argc, argv);
        output_lost();
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const nm::cli::ExitStatus& e) {
        output_lost();
        return e.code;
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    } catch (const nm::Error& e) {
        output_lost();
        std::cerr << "nicmatrix: " << e.what() << '\n';
        return e.kind() == nm::ErrorKind::Usage ? 2 : 1;
    } catch (const std::exception& e) {
        std::cerr << "nicmatrix: internal error: " << e.what() << '\n';
        return 1;
    } catch (...) {
        std::cerr << "nicmatrix: internal error: unknown exception\n";
        return 1;
    }
    return 0;
}
