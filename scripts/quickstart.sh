#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the built-in veth lab: the offload x MTU sweep
# of configs/offload-mtu.json on a lab of its own (taken down afterwards), printing the matrix at the end.
# It builds what the README uses next (target nm_installed: the executable, the Python module for
# `nicmatrix plot` and `import nicmatrix`, the man pages, the completions), not the tests.
# The sweep runs where this script is called from: its results file lands in ./nicmatrix-results/ there
# (the sweep's default; -o FILE chooses another).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && bash scripts/build.sh nm_installed)
"$root/build/nicmatrix" sweep "$root/configs/offload-mtu.json" --lab "$@"
