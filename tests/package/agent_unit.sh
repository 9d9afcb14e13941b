#!/usr/bin/env bash
# The packaged agent works for what it advertises: with the package installed (scripts/check-package.sh
# runs this between install and remove), boots a container whose systemd runs the installed unit
# nicmatrix-agent@IFACE on a veth, and through it applies and restores every kind of setting the agent
# offers, each checked from outside with ip, ethtool, tc, sysctl or the sysfs file (tests/package/
# agent_kinds.py); first with the unit as installed (mtu, offloads, channels, rings, coalesce; rps, xps,
# napi and qdisc named unavailable), then with each shipped drop-in added.
#
# The container (systemd-nspawn -b) is an overlay on this machine's root (the installed package
# included), with a private network namespace, masked udev, and booted to basic.target. Its unit is the
# installed one with its two device lines removed (BindsTo=/After=sys-subsystem-net-devices-%i.device:
# .device units come from udev, which a container does not run; checked to be the only difference). The
# container's /proc/sys/net is writable (SYSTEMD_NSPAWN_API_VFS_WRITABLE=network) and so is the sysfs of
# its own network namespace (remounted here), as on a host: it is the unit's sandbox that makes them
# read-only again, which is what is tested. Leaves nothing behind: the container is powered off, the
# overlay unmounted, the namespace deleted (an EXIT trap), and this machine's links and sysctls are
# compared before and after.
#
# NM_AGENT_UNIT_STAGE=DIR: a tree laid over the container's root before it boots (usr/bin/nicmatrix, the
# unit, /etc/nicmatrix, the examples), to try a build without installing the package; check-package.sh
# does not set it.
#
# Prints one line per check ("ok    ..."/"FAIL  ..."), exits 1 when one failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=nmpu$(($$ % 100000))
ns=$tag-c
agent_if=${tag}a
client_if=${tag}b
unit=nicmatrix-agent@$agent_if.service
work=$(mktemp -d /tmp/nicmatrix-unit.XXXXXX)
nspawn_pid=
leader=
failures=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
# in_container CMD...: runs CMD in the container (its mount, network and pid namespaces: systemctl
# reaches the container's systemd).
in_container() { timeout 60 nsenter -t "$leader" -m -n -p -u -i "$@"; }
# wait_for SECONDS DESCRIPTION CMD...
source "$here/../support/wait_for.sh"
host_state() {
  ip -o link show | awk -F': ' '{ print $2 }' | sort
  sysctl -a 2>/dev/null | grep -E '^(net|kernel\.(core|sched_|printk|pid_max)|fs\.(nr_open|file-max)|vm\.)' |
    grep -vE 'stat|_count|random|ns_last_pid|dirty_|nr_|inode|dentry' | sort
}

cleanup() {
  local status=$?
  trap - EXIT
  if [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null; then
    timeout 20 nsenter -t "$leader" -m -p systemctl poweroff >/dev/null 2>&1 || true
  fi
  if [ -n "$nspawn_pid" ]; then
    local deadline=$((SECONDS + 30))
    while kill -0 "$nspawn_pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  mountpoint -q "$work/root" && umount "$work/root"
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

host_state > "$work/host-before"

# The container's root: this machine's, under an overlay whose upper layer takes every write.
mkdir -p "$work/upper/etc/systemd/system" "$work/overlay-work" "$work/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$work/root"
if [ -n "${NM_AGENT_UNIT_STAGE-}" ]; then cp -a "$NM_AGENT_UNIT_STAGE/." "$work/root/"; fi
root=$work/root
for u in systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service systemd-udevd-control.socket \
         systemd-udevd-kernel.socket systemd-sysctl.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount; do
  ln -sf /dev/null "$root/etc/systemd/system/$u"
done
sed -e '/^BindsTo=sys-subsystem-net-devices-%i\.device$/d' -e 's/^After=sys-subsystem-net-devices-%i\.device /After=/' \
  "$root/lib/systemd/system/nicmatrix-agent@.service" > "$work/unit"
cp "$work/unit" "$root/etc/systemd/system/nicmatrix-agent@.service"
diff "$root/lib/systemd/system/nicmatrix-agent@.service" "$work/unit" | grep '^[<>]' > "$work/unit.diff" || true
if [ "$(cat "$work/unit.diff")" = "< BindsTo=sys-subsystem-net-devices-%i.device
< After=sys-subsystem-net-devices-%i.device network-online.target
> After=network-online.target" ]; then
  pass "the container's unit is the installed one but for its two device lines"
else
  fail "the container's unit differs from the installed one by more than its device lines"; sed 's/^/      /' "$work/unit.diff"
fi

SYSTEMD_NSPAWN_API_VFS_WRITABLE=network systemd-nspawn -q -D "$work/root" --private-network --register=no --keep-unit \
  -b -- --unit=basic.target > "$work/boot.log" 2>&1 < /dev/null &
nspawn_pid=$!
find_leader() { leader=$(pgrep -P "$nspawn_pid" -x systemd) && [ -n "$leader" ]; }
wait_for 30 "the container's systemd" find_leader
container_up() { in_container systemctl is-system-running | grep -qE '^(running|degraded)$'; }
wait_for 90 "the container to boot" container_up || { tail -20 "$work/boot.log"; exit 1; }
pass "a container booted with systemd-nspawn (its systemd: $(in_container systemctl is-system-running))"

# The agent's interface in the container, its peer in a namespace of ours (the client's).
ip netns add "$ns"
ip -n "$ns" link add "$client_if" type veth peer name "$agent_if"
ip -n "$ns" link set "$agent_if" netns "$leader"
ip -n "$ns" addr add 198.19.200.1/24 dev "$client_if"
ip -n "$ns" link set "$client_if" up
in_container ip addr add 198.19.200.2/24 dev "$agent_if"
in_container ip link set "$agent_if" up
# The sysfs of the container's namespace, writable as a host's is (only the unit's sandbox may say no).
for m in $(in_container awk '$9 == "sysfs" { print $5 }' /proc/self/mountinfo); do in_container mount -o remount,rw "$m"; done

journal_lines() { in_container journalctl -q -u "$unit" -o cat --no-pager 2>/dev/null || true; }
# start_agent: (re)starts the unit and waits until it serves (its log says what it allows).
start_agent() {
  in_container systemctl daemon-reload
  in_container systemctl restart "$unit"
  serving() { in_container systemctl is-active -q "$unit" && ip netns exec "$ns" timeout 2 bash -c 'exec 3<>/dev/tcp/198.19.200.2/5301'; }
  wait_for 30 "$unit to serve" serving || { in_container systemctl status --no-pager "$unit" | sed 's/^/      /'; return 1; }
  pass "$unit serves ($1)"
}
# check_kinds OFFERED UNAVAILABLE: the challenge's kinds, and every one applied and restored (agent_kinds.py).
check_kinds() {
  if ! ip netns exec "$ns" timeout 120 /usr/bin/python3 "$here/agent_kinds.py" 198.19.200.2 5301 "$root/etc/nicmatrix/agent.key" \
      "$agent_if" "$leader" --expect-kinds "$1" --expect-unavailable "$2" > "$work/kinds.out" 2>&1; then
    failures=$((failures + 1))
  fi
  sed 's/^/  /' "$work/kinds.out"
}
dropins=/etc/systemd/system/nicmatrix-agent@.service.d

echo "== the unit as installed"
start_agent "the installed unit"
check_kinds mtu,offloads,channels,rings,coalesce rps,xps,napi,qdisc
if journal_lines | grep -q 'rps is allowed but cannot be changed here, so it is not offered: .*Read-only file system'; then
  pass "the agent's log says rps is not offered, and why"
else
  fail "the agent's log says rps is not offered, and why"; journal_lines | tail -5 | sed 's/^/      /'
fi

echo "== with nicmatrix-agent-files.conf"
in_container mkdir -p "$dropins"
in_container cp /usr/share/doc/nicmatrix/examples/nicmatrix-agent-files.conf "$dropins/"
start_agent "files drop-in"
check_kinds mtu,offloads,channels,rings,coalesce,rps,xps,napi qdisc

echo "== with nicmatrix-agent-qdisc.conf too"
in_container cp /usr/share/doc/nicmatrix/examples/nicmatrix-agent-qdisc.conf "$dropins/"
start_agent "files and qdisc drop-ins"
check_kinds mtu,offloads,channels,rings,coalesce,rps,xps,napi,qdisc ""

echo "== with nicmatrix-agent-sysctl.conf too"
in_container cp /usr/share/doc/nicmatrix/examples/nicmatrix-agent-sysctl.conf "$dropins/"
start_agent "files, qdisc and sysctl drop-ins"
check_kinds mtu,offloads,channels,rings,coalesce,rps,xps,napi,qdisc,sysctl ""

echo "== the unit stops, the container powers off"
in_container systemctl stop "$unit"
if in_container test -e "/run/nicmatrix/agent-$agent_if.json"; then fail "a clean stop leaves no journal"; else pass "a clean stop leaves no journal"; fi
timeout 20 nsenter -t "$leader" -m -p systemctl poweroff >/dev/null 2>&1 || true
wait_for 30 "the container to power off" bash -c "! kill -0 $nspawn_pid"
ip netns del "$ns"
host_state > "$work/host-after"
if diff "$work/host-before" "$work/host-after" > "$work/host.diff"; then
  pass "this machine's links and sysctls are as before"
else
  fail "this machine's links and sysctls are as before"; sed 's/^/      /' "$work/host.diff"
fi
exit $((failures > 0))
