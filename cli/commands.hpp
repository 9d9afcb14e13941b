#pragma once
// One function per subcommand family; each adds its subcommands to the app with callbacks that build the
// concrete objects and call the layers below. Errors propagate as nm::Error to main's single catch.
#include <CLI/CLI.hpp>
#include <stop_token>

namespace nm::cli {

/// Ends the program with this status and no message (`lab exec` passes on its command's status).
struct ExitStatus {
    int code = 0;
};

/// lab up/down/show/exec; `stop` interrupts booting a VM lab or a command in it.
void add_lab_commands(CLI::App& app, std::stop_token stop);
void add_device_commands(CLI::App& app);  // show, set, restore
/// serve: the traffic server and peer agent; `stop` (from the StopSignal in main) ends it cleanly.
void add_serve_command(CLI::App& app, std::stop_token stop);
/// run: one test (or an RFC 2544 table) against a server; `stop` ends it cleanly.
void add_run_command(CLI::App& app, std::stop_token stop);
/// sweep, report, compare. `stop` ends a running sweep through its normal path (restore, save).
void add_sweep_commands(CLI::App& app, std::stop_token stop);
/// plot: runs the Python package's nicmatrix.plot (one plotting implementation) in place of this process.
void add_plot_command(CLI::App& app);
/// schema: JSON Schema fragments, and run's flags, generated from the field tables (core/traffic/test_spec_fields.hpp).
void add_schema_command(CLI::App& app);

}  // namespace nm::cli
