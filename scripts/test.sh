#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite: unit, integration (root, real veth in
# network namespaces the tests make and remove themselves) and python. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
timeout 1500 ctest --output-on-failure --no-tests=error
# The libFuzzer targets (control-message decoder, sweep config parser): built with clang in build-fuzz/,
# 15 s each on the committed corpus (fuzz/corpus/).
cd ..
timeout 600 fuzz/run.sh 15
