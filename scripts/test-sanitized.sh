#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer: built in build-fuzz/ (clang, -O0,
# the layer libraries the fuzz targets use, configured by fuzz/configure.sh, so after fuzz/run.sh only the
# test code and the CLI compile) and run through CTest (label unit). Any sanitizer report aborts its test,
# which fails. Usage: scripts/test-sanitized.sh [extra ctest arguments, e.g. -R PATTERN].
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/fuzz/configure.sh"
cmake --build "$here/build-fuzz" -j2 --target nm_unit_tests
# detect_leaks: the unit tests own everything they make; strict_string_checks and the init-order checks
# cost nothing here. UBSan's reports already abort (-fno-sanitize-recover=all); ask for their stacks.
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$here/build-fuzz"
ctest --output-on-failure --no-tests=error -L unit -j2 "$@"
