#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite: the Debian package's check, the libFuzzer
# targets for a bounded time, then unit, integration (root, real veth in network namespaces the tests make
# and remove themselves), python and docs through CTest, whose summary closes the output. CI runs exactly
# this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# The Debian package: built from build/, installed, used, removed and purged, the machine left as it was
# (about a minute once built; its check tools come from install-deps.sh package-check).
bash scripts/check-package.sh
# The libFuzzer targets (control messages, sweep configs, test specs, the agent's session): the layers built
# with clang, ASan and UBSan in build-fuzz/ (a few minutes on an idle 2-core machine),
# 15 s each on the committed corpus (fuzz/corpus/).
timeout 600 fuzz/run.sh 15
cd build
# Two tests at a time (the machine's two cores): every test holds on a loaded 2-core machine, and this is
# one (it also halves the wall time).
timeout 1500 ctest --output-on-failure --no-tests=error -j2
