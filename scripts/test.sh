#!/usr/bin/env bash
# Installs what is missing, builds build/, and runs every test suite CI runs, in this order: the Debian
# package's check beside the libFuzzer targets (clang, ASan and UBSan, in build-fuzz/, for a bounded time),
# then the unit tests under ASan and UBSan (in the same build-fuzz/), the tree's formatting against
# .clang-format, then every CTest suite in build/ (unit, integration: root, real veth in network namespaces
# the tests make and remove themselves; vm, python, browser, docs), whose summary closes the output. CI runs
# exactly this (.ci/run). Not run here: clang-tidy (scripts/lint.sh --tidy: about an hour on 2 cores),
# the fleet test and the fault trials.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# The Debian package: built from build/, installed, used, removed and purged, the machine left as it was
# (about two minutes once built, mostly apt, dpkg and lintian on one core; its check tools come from
# install-deps.sh package-check). It runs beside the fuzz step, which builds elsewhere (build-fuzz/) and
# touches nothing it checks; its output is printed when both are done, in one piece.
package_log=$(mktemp /tmp/nicmatrix-package-check.XXXXXX)
bash scripts/check-package.sh >"$package_log" 2>&1 &
package_pid=$!
# If the fuzz step fails, the package check is stopped (its EXIT trap purges what it installed)
# and waited for.
trap 'kill "$package_pid" 2>/dev/null || true; wait "$package_pid" 2>/dev/null || true; rm -f "$package_log"' EXIT
# The libFuzzer targets (control messages, sweep configs, test specs, the agent's session, results files):
# the layers built with clang, ASan and UBSan in build-fuzz/ (about 10 minutes cold on 2 cores beside the
# package check; the bound is against a hang, with room for that), 10 s each on the committed corpus (fuzz/corpus/).
timeout 1200 fuzz/run.sh 10
# The unit tests built with the fuzz step's flags (ASan, UBSan, no recovery) in build-fuzz/, whose layer
# libraries that step has just built: about 10 minutes here (the test code's compile, then 155 s of tests).
timeout 1500 bash scripts/test-sanitized.sh
package_status=0
wait "$package_pid" || package_status=$?
trap - EXIT
cat "$package_log"
rm -f "$package_log"
if [ "$package_status" -ne 0 ]; then
  echo "test.sh: scripts/check-package.sh failed (exit $package_status)" >&2
  exit "$package_status"
fi
# Formatting: every tracked C++ file as .clang-format lays it out (a few seconds; nothing is rewritten).
bash scripts/lint.sh --format
cd build
# Two tests at a time (the machine's two cores): every test holds on a loaded 2-core machine, and this is
# one (it also halves the wall time). The bound leaves room for the VM lab's suite (tests/vm: one guest
# boot for the suite and one for the SIGINT test, about 5 minutes under TCG) on a loaded machine.
timeout 2400 ctest --output-on-failure --no-tests=error -j2
