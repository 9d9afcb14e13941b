#!/bin/sh
# Configures build-fuzz/: the layer libraries built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (-DNM_FUZZ=ON, see CMakeLists.txt). Two users share it, so the layers compile once for both: the libFuzzer
# targets (fuzz/run.sh) and the unit tests run under the sanitizers (scripts/test-sanitized.sh); the test
# suites are configured but only built when asked for by target. Prints nothing; exit non-zero on failure.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
launcher=
if command -v ccache >/dev/null 2>&1; then launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache; fi
CXX=${CXX_FUZZ:-clang++-14} cmake -S "$here" -B "$here/build-fuzz" -DNM_FUZZ=ON -DNM_BUILD_TESTS=ON -DNM_BUILD_PYTHON=OFF \
  -DCMAKE_BUILD_TYPE=Debug $launcher >/dev/null
