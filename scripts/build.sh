#!/usr/bin/env bash
# Installs what is missing (Debian packages only) and builds nicmatrix into build/ (Release, warnings as
# errors). Usage: scripts/build.sh [TARGET ...] — every target (tests, Python module) unless some are named.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNM_WERROR=ON -DNM_BUILD_TESTS=ON -DNM_BUILD_PYTHON=ON >/dev/null
if (($#)); then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
