// nicmatrix: what checksum offload, scatter-gather, TSO/GSO/GRO and jumbo MTU buy on a NIC.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "core/base/stop_signal.hpp"
#include "core/base/version.hpp"

int main(int argc, char** argv) {
    nm::StopSignal stop_signal;   // before any thread starts: every later thread inherits the blocked signals
    CLI::App app{"nicmatrix: measure what NIC offloads and MTU buy, in throughput and CPU", "nicmatrix"};
    app.set_version_flag("--version", std::string("nicmatrix ") + nm::kVersion);
    app.require_subcommand(1);
    nm::cli::add_lab_commands(app);
    nm::cli::add_device_commands(app);
    nm::cli::add_traffic_commands(app, stop_signal.token());
    nm::cli::add_sweep_commands(app, stop_signal.token());
    nm::cli::add_plot_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    } catch (const nm::Error& e) {
        std::cerr << "nicmatrix: " << e.what() << '\n';
        return e.kind() == nm::ErrorKind::Usage ? 2 : 1;
    }
    return 0;
}
