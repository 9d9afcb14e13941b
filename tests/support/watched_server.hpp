#pragma once
// A `nicmatrix serve --once` in a lab's server namespace, run under a tool that watches it from outside
// (strace, GNU time), and one `nicmatrix run` against it from the client namespace.
#include <string>

#include "tests/support/command.hpp"
#include "tests/support/scoped_lab.hpp"

namespace nm::test {

struct WatchedRun {
    CommandResult client;  ///< the client's `run ...` (its output: --json when run_args ask for it)
    std::string watched;   ///< what the watcher wrote about the server (its -o file)
};

/// One `run RUN_ARGS` against a `serve --once` started as `WATCHER -o FILE nicmatrix serve ...`; returns
/// the client's result and FILE's text. Waits (bounded) for the server to listen before the client starts.
WatchedRun run_against_watched_server(const ScopedLab& lab, const std::string& watcher, const std::string& run_args);

}  // namespace nm::test
