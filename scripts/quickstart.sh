#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the built-in veth lab.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
name="nmquick$$"
trap './build/nicmatrix lab down --name "$name" >/dev/null' EXIT
./build/nicmatrix lab up --name "$name"
for ns in "$name-a" "$name-b"; do
  echo "--- ip -br addr in $ns"
  ip netns exec "$ns" ip -br addr
done
