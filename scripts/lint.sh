#!/usr/bin/env bash
# Style and static checks of the tracked C++ files: clang-format-14 against .clang-format (--dry-run
# -Werror: nothing is rewritten) and clang-tidy-14 with .clang-tidy (tests/.clang-tidy for the tests) through
# the compile commands of build-lint/, which it configures itself (nothing is built): precompiled headers
# off, since the tests' GCC-made PCH is nothing clang can read.
# Usage: scripts/lint.sh [--format | --tidy] [FILE...]   (default: both, on every tracked C++ file;
# FILEs limit it, e.g. scripts/lint.sh $(git diff --name-only main -- '*.cpp' '*.hpp')). Exit 1 on a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
format=1 tidy=1
case "${1:-}" in
  --format) tidy=0; shift ;;
  --tidy) format=0; shift ;;
esac
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cxx' '*.h')
fi
status=0
if [ "$format" = 1 ]; then
  echo "lint: clang-format-14 on ${#files[@]} files"
  clang-format-14 --dry-run -Werror "${files[@]}" || status=1
fi
if [ "$tidy" = 1 ]; then
  cmake -S . -B build-lint -DCMAKE_BUILD_TYPE=Release -DNM_BUILD_TESTS=ON -DNM_BUILD_PYTHON=ON -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  # clang-tidy reads each translation unit the build compiles; headers are checked through them
  # (HeaderFilterRegex in .clang-tidy).
  units=()
  for f in "${files[@]}"; do
    case "$f" in *.cpp | *.cxx) grep -q "\"file\": \"$PWD/$f\"" build-lint/compile_commands.json && units+=("$PWD/$f") ;; esac
  done
  echo "lint: clang-tidy-14 on ${#units[@]} translation units"
  if [ "${#units[@]}" -gt 0 ]; then
    run-clang-tidy-14 -p build-lint -quiet -j "$(nproc)" "${units[@]}" >/tmp/nicmatrix-lint.$$ 2>&1 || status=1
    grep -E "(warning|error):" /tmp/nicmatrix-lint.$$ | sort -u || true
    rm -f /tmp/nicmatrix-lint.$$
  fi
fi
exit "$status"
