#!/bin/sh
# Builds the libFuzzer targets with clang (a build directory of their own, the layer libraries built with
# ASan and UBSan) and runs each for a bounded time on its committed corpus, with inputs up to just over
# the 64 KiB control-message cap. Usage: fuzz/run.sh [seconds per target, default 30]. Exit non-zero on a
# crash, a leak or a sanitizer report; the reproducer is left in build-fuzz/.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
build="$here/build-fuzz"
targets="control_message sweep_config traffic_spec agent_session results_file iperf3_results"
"$here/fuzz/configure.sh"
cmake --build "$build" -j2 --target $(for t in $targets; do printf 'nm_fuzz_%s ' "$t"; done)
for target in $targets; do
  work="$build/corpus-$target"
  mkdir -p "$work"
  echo "fuzz: $target for ${secs}s"
  (cd "$build" && "./fuzz/nm_fuzz_$target" -max_total_time="$secs" -max_len=70000 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work" "$here/fuzz/corpus/$target")
done
