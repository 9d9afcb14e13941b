#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the built-in veth lab: the offload x MTU sweep
# of configs/offload-mtu.json on a lab of its own (taken down afterwards), printing the matrix at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh nicmatrix
./build/nicmatrix sweep configs/offload-mtu.json --lab "$@"
