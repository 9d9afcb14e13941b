#!/usr/bin/env bash
# Installs exactly the Debian 12 packages nicmatrix builds and tests with. Idempotent: packages already
# present are left alone, and nothing is fetched from anywhere but Debian's archive.
# `install-deps.sh package-check` adds what scripts/check-package.sh uses to check the Debian package, and
# what tests/fleet/fleet.sh uses to run the Ansible collection against it.
set -euo pipefail

packages=(
  build-essential cmake pkg-config g++
  libmnl-dev libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
  nlohmann-json3-dev libcli11-dev catch2 pybind11-dev python3-dev libssl-dev libboost-dev zlib1g-dev clang-14
  clang-format-14  # scripts/lint.sh --format, which scripts/test.sh runs over the tree
  ethtool iproute2 iputils-ping iperf3 procps libcap2-bin tcpdump strace
  linux-cpupower  # cpupower idle-info: the oracle of the idle policy a results file records (hosts.*.cpu_idle)
  time  # GNU time: a server's voluntary context switches (its sleeps), the oracle of the --rx-spin test
  nftables  # drops chosen datagrams in a lab namespace: the oracle of the UDP_RR loss test
  python3-pytest python3-pandas python3-matplotlib python3-nbclient python3-ipykernel python3-nbformat python3-jsonschema python3-pil python3-scipy
  chromium python3-websocket  # the HTML report opened in headless Chromium by tests/browser
  # The VM lab (lab up --topology vm, sweep --lab vm:...): QEMU, and what scripts/vm-image.sh assembles the
  # guest with (the kernel and busybox themselves are downloaded into the build tree, not installed)
  qemu-system-x86 cpio kmod xz-utils util-linux
)
if [ "${1-}" = package-check ]; then
  # lintian; man-db to render the man pages; systemd for systemd-analyze verify; bash-completion and zsh
  # to load the completions the way a user's shell does; systemd-container (systemd-nspawn) to boot a
  # container whose systemd runs the agent's unit (tests/package/agent_unit.sh).
  packages+=(lintian man-db systemd bash-completion zsh systemd-container)
  # The fleet test (tests/fleet/fleet.sh): ansible-playbook over ssh to an sshd the test starts in each of
  # its namespaces. Where an init system starts services, Debian's openssh-server also starts the host's
  # own sshd on installation; the test never uses that one.
  packages+=(ansible-core openssh-server openssh-client)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages (${missing[*]}); run as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update -q
  timeout 1200 apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
