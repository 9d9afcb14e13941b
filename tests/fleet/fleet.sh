#!/usr/bin/env bash
# The Ansible collection (packaging/ansible, docs/fleet.md) run for real, as root: three "hosts", each a
# network namespace of this test running its own sshd, joined by veth to a controller namespace (ssh) and
# to each other (the pairs: h1 -> h2 and h3 -> h2, so both pairs share h2), an inventory, and
# ansible-playbook over ssh with a key made for the test. Checks:
#   run 1 (nicmatrix.lab.sweep_pairs): the package installed, the lab key made once (0600) and in place on
#     the hosts, an agent per peer interface running in its host's namespace with that key and listening
#     (ss), both pair sweeps done one after the other (their results files' times), fetched and merged
#     (comparison.md: each report and the compare), every interface of every namespace as it began
#     (ip -d link, ip addr, ethtool -k);
#   run 2, a play failing midway: while pair 1's sweep has the peer's MTU changed (seen with ip), that
#     agent is killed (SIGKILL: it cannot restore); the playbook fails naming pair 1, pair 2 still runs, and
#     every interface is as it began (the always block's `nicmatrix restore` is the only thing that can
#     have put the peer's MTU back);
#   run 3 (nicmatrix.lab.remove): agents gone, package purged with its key.
#
# What it does not exercise: the namespaces share this machine's filesystem, dpkg database and pid space,
# so "installing on each host" installs one package here (three apt runs, two of them finding it done);
# and the agents must run in their host's namespace, which systemd's units would not (they start in
# systemd's), so the inventory asks for the role's background-process path (start-stop-daemon), the one
# that runs anyway where systemd is not PID 1 (containers, CI).
#
# Leaves the machine as it was, also on failure (an EXIT trap): agents and sshd stopped by their pids, the
# ssh control masters closed, the package purged with what apt pulled in for it, the namespaces deleted,
# /run/sshd and /run/nicmatrix removed when the test made them. Refuses to run when dpkg has nicmatrix.
# NM_FLEET_DEB=FILE uses that .deb instead of building one with scripts/package.sh; NM_FLEET_LOGS=DIR keeps
# the logs (ansible-playbook's, sshd's) there.
#
# Prints one line per check ("ok    ..."/"FAIL  ..."), the time of each run, and exits 1 when one failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

# shellcheck source=scripts/package_guard.sh
. "$repo/scripts/package_guard.sh"
package_guard fleet "it makes namespaces, runs sshd, installs and purges the package" test
deps_log=$(mktemp /tmp/nicmatrix-fleet-deps.XXXXXX)
if ! bash "$repo/scripts/install-deps.sh" package-check >"$deps_log" 2>&1; then
  cat "$deps_log"; rm -f "$deps_log"; exit 1
fi
rm -f "$deps_log"
for tool in ansible-playbook /usr/sbin/sshd ssh ssh-keygen start-stop-daemon; do
  command -v "$tool" >/dev/null || { echo "fleet: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

tag=nmfl$(($$ % 100000))
ctl=$tag-ctl
hosts=(h1 h2 h3)
work=$(mktemp -d /tmp/nicmatrix-fleet.XXXXXX)
chmod 700 "$work"
sshd_pids=()
play_pid=
made_run_sshd=
made_run_nicmatrix=
[ -d /run/sshd ] || made_run_sshd=1
[ -d /run/nicmatrix ] || made_run_nicmatrix=1
[ -e /run/nicmatrix/journal.json ] && had_journal=1 || had_journal=

failures=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
# check DESCRIPTION COMMAND...: runs COMMAND (its output in $work/out), passes when it succeeds.
check() {
  local what=$1
  shift
  if "$@" >"$work/out" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/      /' "$work/out"; fi
}
# wait_for SECONDS DESCRIPTION CMD...
source "$repo/tests/support/wait_for.sh"

installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
installed_packages > "$work/packages-before"

ns() { echo "$tag-$1"; }
agent_pid() { cat "/run/nicmatrix/agent-$1.pid" 2>/dev/null; }
# is_our_agent PID IFACE: PID is a nicmatrix serve of IFACE (what a pid file names may be stale).
is_our_agent() { { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null | grep -q -- "serve --allow-control $2 "; }

cleanup() {
  local status=$?
  trap - EXIT
  set +e
  if [ -n "$play_pid" ] && kill -0 "$play_pid" 2>/dev/null; then
    kill "$play_pid"; wait "$play_pid" 2>/dev/null
  fi
  for sock in "$work"/cp/*; do
    [ -S "$sock" ] && timeout 10 ip netns exec "$ctl" ssh -o ControlPath="$sock" -O exit fleet-host >/dev/null 2>&1
  done
  for ifc in "${tag}2a" "${tag}2b"; do
    local pid
    pid=$(agent_pid "$ifc")
    if [ -n "$pid" ] && is_our_agent "$pid" "$ifc"; then
      kill -TERM "$pid"
      local deadline=$((SECONDS + 20))
      while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "/run/nicmatrix/agent-$ifc.pid" "/run/nicmatrix/agent-$ifc.log" "/run/nicmatrix/agent-$ifc.json" \
      "/run/nicmatrix/agent-$ifc.json.lock"
  done
  for pid in "${sshd_pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  if package_present; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get purge -y -q nicmatrix >/dev/null 2>&1
  fi
  local pulled
  pulled=$(installed_packages | comm -13 "$work/packages-before" -)
  if [ -n "$pulled" ]; then
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get purge -y -q $pulled >/dev/null 2>&1
  fi
  for h in ctl "${hosts[@]}"; do ip netns del "$(ns "$h")" 2>/dev/null; done
  if [ -n "$made_run_nicmatrix" ] && [ -d /run/nicmatrix ]; then
    [ -n "$had_journal" ] || rm -f /run/nicmatrix/journal.json /run/nicmatrix/journal.json.lock
    rmdir /run/nicmatrix 2>/dev/null
  fi
  [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
  if [ -n "${NM_FLEET_LOGS-}" ]; then mkdir -p "$NM_FLEET_LOGS" && cp "$work"/*.log "$NM_FLEET_LOGS/" 2>/dev/null; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- the package -----------------------------------------------------------------------------------
if [ -n "${NM_FLEET_DEB-}" ]; then
  deb=$(realpath "$NM_FLEET_DEB")
else
  if ! (cd "$repo" && timeout 1200 bash scripts/package.sh) >"$work/package.log" 2>&1; then
    cat "$work/package.log"; echo "fleet: scripts/package.sh failed" >&2; exit 1
  fi
  deb=$repo/$(tail -1 "$work/package.log")
fi
deb_version=$(dpkg-deb -f "$deb" Version)

# --- the lab: a controller namespace and three hosts -------------------------------------------------
# Management (ssh): controller 198.19.25N.1/24 <-> hN 198.19.25N.2/24. Data (the pairs):
#   h1 ${tag}1a 198.18.101.1/24 <-> h2 ${tag}2a 198.18.101.2/24      (pair 1: dut h1, peer h2)
#   h3 ${tag}3a 198.18.102.1/24 <-> h2 ${tag}2b 198.18.102.2/24      (pair 2: dut h3, peer h2)
# Interface names carry the tag: the hosts share /run/nicmatrix, where agents' files are named by interface.
for h in ctl "${hosts[@]}"; do
  ip netns add "$(ns "$h")"
  ip -n "$(ns "$h")" link set lo up
done
for i in 1 2 3; do
  ip -n "$ctl" link add "${tag}m$i" type veth peer name "${tag}g$i" netns "$(ns "h$i")"
  ip -n "$ctl" addr add "198.19.25$i.1/24" dev "${tag}m$i"
  ip -n "$ctl" link set "${tag}m$i" up
  ip -n "$(ns "h$i")" addr add "198.19.25$i.2/24" dev "${tag}g$i"
  ip -n "$(ns "h$i")" link set "${tag}g$i" up
done
data_link() {  # DUT_HOST DUT_IF DUT_ADDR PEER_HOST PEER_IF PEER_ADDR
  ip -n "$(ns "$1")" link add "$2" type veth peer name "$5" netns "$(ns "$4")"
  ip -n "$(ns "$1")" addr add "$3/24" dev "$2"
  ip -n "$(ns "$4")" addr add "$6/24" dev "$5"
  ip -n "$(ns "$1")" link set "$2" up
  ip -n "$(ns "$4")" link set "$5" up
}
data_link h1 "${tag}1a" 198.18.101.1 h2 "${tag}2a" 198.18.101.2
data_link h3 "${tag}3a" 198.18.102.1 h2 "${tag}2b" 198.18.102.2

# Everything about every interface of a namespace that a sweep may change, read with ip and ethtool.
ns_state() {
  local n=$1 ifc
  ip -n "$n" -d -o link show | sed -E 's/^[0-9]+: //'
  ip -n "$n" -o addr show | sed -E 's/^[0-9]+: //; s/valid_lft.*//'
  for ifc in $(ip -n "$n" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
    echo "== ethtool -k $ifc"
    ip netns exec "$n" ethtool -k "$ifc"
  done
}
lab_state() { for h in ctl "${hosts[@]}"; do echo "### $h"; ns_state "$(ns "$h")"; done; }
# The snapshot is of settled links: carrier up, IPv6 duplicate address detection done (addresses no
# longer "tentative"), link-local addresses in place.
settled() {
  local h
  for h in ctl "${hosts[@]}"; do
    ! ip -n "$(ns "$h")" -o link show | grep -q NO-CARRIER || return 1
    ! ip -n "$(ns "$h")" -o addr show | grep -q tentative || return 1
    [ "$(ip -n "$(ns "$h")" -o -6 addr show scope link | wc -l)" -eq "$(ip -n "$(ns "$h")" -o link show | grep -vc LOOPBACK)" ] || return 1
  done
}
wait_for 60 "the lab's links to settle" settled
lab_state > "$work/state-before"
check_lab_state() {  # DESCRIPTION
  lab_state > "$work/state-now"
  check "$1" diff -u "$work/state-before" "$work/state-now"
}

# --- sshd in each host ------------------------------------------------------------------------------
[ -n "$made_run_sshd" ] && mkdir -m 0755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -C nicmatrix-fleet-test -f "$work/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -C nicmatrix-fleet-host -f "$work/host_key"
cp "$work/id_ed25519.pub" "$work/authorized_keys"
for i in 1 2 3; do
  cat > "$work/sshd_config-h$i" <<EOF
ListenAddress 198.19.25$i.2
Port 22
HostKey $work/host_key
PidFile $work/sshd-h$i.pid
AuthorizedKeysFile $work/authorized_keys
# The key files live under /tmp (world-writable), which StrictModes refuses.
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
MaxSessions 64
MaxStartups 64
Subsystem sftp internal-sftp
EOF
  ip netns exec "$(ns "h$i")" /usr/sbin/sshd -D -e -f "$work/sshd_config-h$i" >"$work/sshd-h$i.log" 2>&1 &
  sshd_pids+=($!)
done
sshd_answers() { ip netns exec "$ctl" timeout 2 bash -c "exec 3<>/dev/tcp/198.19.25$1.2/22"; }
for i in 1 2 3; do
  wait_for 30 "sshd of h$i" sshd_answers "$i" || { cat "$work/sshd-h$i.log"; exit 1; }
done
pass "sshd runs in each host's namespace (h1, h2, h3: 198.19.251-253.2)"

# --- the inventory and Ansible's settings -------------------------------------------------------------
mkdir -p "$work/lab" "$work/results"
cat > "$work/lab/inventory.yml" <<EOF
all:
  hosts:
    h1: {ansible_host: 198.19.251.2}
    h2: {ansible_host: 198.19.252.2}
    h3: {ansible_host: 198.19.253.2}
  vars:
    ansible_user: root
    ansible_ssh_private_key_file: $work/id_ed25519
    ansible_python_interpreter: /usr/bin/python3
    nicmatrix_deb: $deb
    nicmatrix_config: $repo/tests/fleet/fleet-sweep.json
    nicmatrix_results_dir: $work/results
    # systemd, where it is PID 1, would start the agents in its own network namespace, not in the
    # "host's": the agents run as background processes, started from within each host's sshd session.
    nicmatrix_agent_service: background
    nicmatrix_pairs:
      - {dut: h1, dut_iface: ${tag}1a, peer: h2, peer_iface: ${tag}2a}
      - {dut: h3, dut_iface: ${tag}3a, peer: h2, peer_iface: ${tag}2b}
EOF
: > "$work/ansible.cfg"
# Nothing of Ansible's outside $work: its home, temporary files (local and "remote", which is here too),
# ssh control sockets; no host key checking against anyone's known_hosts.
export ANSIBLE_CONFIG=$work/ansible.cfg ANSIBLE_HOME=$work/ansible-home ANSIBLE_LOCAL_TEMP=$work/ansible-local \
  ANSIBLE_REMOTE_TMP=$work/ansible-remote ANSIBLE_SSH_CONTROL_PATH_DIR=$work/cp \
  ANSIBLE_COLLECTIONS_PATH=$repo/packaging/ansible ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_PIPELINING=True \
  ANSIBLE_FORKS=10 ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=False ANSIBLE_DISPLAY_SKIPPED_HOSTS=False \
  ANSIBLE_SSH_ARGS="-o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR"
# playbook NAME LOG: ansible-playbook NAME from the controller's namespace; its exit status.
playbook() {
  ip netns exec "$ctl" timeout 600 ansible-playbook -i "$work/lab/inventory.yml" "$1" >"$2" 2>&1
}
# play NAME LOG LINES: playbook NAME, a check that it succeeded (with the time it took); when it failed, the
# last LINES lines of LOG.
play() {
  local start=$SECONDS
  if playbook "$1" "$2"; then
    pass "ansible-playbook $1 succeeded ($((SECONDS - start)) s)"
  else
    fail "ansible-playbook $1 succeeded ($((SECONDS - start)) s)"; tail -"$3" "$2" | sed 's/^/      /'
  fi
}
lab_key=$work/lab/nicmatrix-lab.key

# --- run 1: install, agents, two sweeps, merge ---------------------------------------------------------
echo "== run 1: nicmatrix.lab.sweep_pairs (3 hosts, 2 pairs)"
play nicmatrix.lab.sweep_pairs "$work/run1.log" 60
check "the role said it runs the agents as background processes (PID 1 here: $(ps -o comm= -p 1))" \
  grep -q 'so the agents run as plain background processes' "$work/run1.log"
check "the package is installed ($deb_version, dpkg)" bash -c \
  "[ \"\$(dpkg-query -W -f='\${db:Status-Status} \${Version}' nicmatrix)\" = 'installed $deb_version' ]"
check "the lab key was made on the controller: 65 bytes (64 letters and digits, a newline), mode 600" bash -c \
  "[ \"\$(stat -c '%s %a' $lab_key)\" = '65 600' ] && head -c 64 $lab_key | grep -qxE '[A-Za-z0-9]{64}'"
check "/etc/nicmatrix/agent.key is the lab key, root's, mode 600" bash -c \
  "cmp $lab_key /etc/nicmatrix/agent.key && [ \"\$(stat -c '%a %U' /etc/nicmatrix/agent.key)\" = '600 root' ]"
cp "$lab_key" "$work/lab-key-run1" 2>/dev/null || true
h2_netns=$(stat -L -c %i "/run/netns/$(ns h2)")
check_agent() {  # IFACE ADDRESS
  local pid
  pid=$(agent_pid "$1") && [ -n "$pid" ] && kill -0 "$pid" || { echo "no live pid in /run/nicmatrix/agent-$1.pid"; return 1; }
  is_our_agent "$pid" "$1" || { tr '\0' ' ' < "/proc/$pid/cmdline"; return 1; }
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- '--key-file /etc/nicmatrix/agent.key ' || return 1
  [ "$(readlink "/proc/$pid/ns/net")" = "net:[$h2_netns]" ] || { echo "in $(readlink "/proc/$pid/ns/net"), h2 is $h2_netns"; return 1; }
  ip netns exec "$(ns h2)" ss -Hltnp "src $2:5301" | grep -q "pid=$pid," || { ip netns exec "$(ns h2)" ss -ltnp; return 1; }
}
check "h2's agent for ${tag}2a runs in h2's namespace with the key, listening on 198.18.101.2:5301 (ss)" check_agent "${tag}2a" 198.18.101.2
check "h2's agent for ${tag}2b runs in h2's namespace with the key, listening on 198.18.102.2:5301 (ss)" check_agent "${tag}2b" 198.18.102.2

run1_dir=$(ls -d "$work"/results/*/ 2>/dev/null | head -1)
pair1=h1-${tag}1a--h2-${tag}2a
pair2=h3-${tag}3a--h2-${tag}2b
# The results files: valid against results/results.schema.json, every cell ok, the right interfaces on
# each end, the peer's MTU 9000 applied by its agent; pair 2 started after pair 1 finished.
cat > "$work/check_results.py" <<'EOF'
import json, sys, jsonschema
from datetime import datetime
repo, pair1, pair2, dut1, peer1, dut2, peer2 = sys.argv[1:8]
# As tests/python/test_schemas.py: the results schema refers to the sweep config's.
sweep_schema = json.load(open(repo + "/configs/sweep.schema.json"))
schema = json.load(open(repo + "/results/results.schema.json"))
store = {sweep_schema["$id"]: sweep_schema, schema["$id"]: schema}
validator = jsonschema.Draft202012Validator(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))
times = []
for path, dut, peer in ((pair1, dut1, peer1), (pair2, dut2, peer2)):
    doc = json.load(open(path))
    validator.validate(doc)
    local, remote = doc["hosts"]["local"]["interface"]["name"], doc["hosts"]["remote"]["interface"]["name"]
    assert (local, remote) == (dut, peer), (path, local, remote)
    statuses = [c["status"] for c in doc["cells"]]
    assert statuses == ["ok", "ok"], (path, statuses)
    mtus = sorted(c["applied"]["remote"]["mtu"] for c in doc["cells"])
    assert mtus == [1500, 9000], (path, mtus)
    times.append((datetime.fromisoformat(doc["run"]["started"].replace("Z", "+00:00")),
                  datetime.fromisoformat(doc["run"]["finished"].replace("Z", "+00:00"))))
    print(path.rsplit("/", 1)[1], "cells", statuses, "peer MTUs", mtus, "from", times[-1][0], "to", times[-1][1])
assert times[0][1] <= times[1][0], f"pair 2 started {times[1][0]} before pair 1 finished {times[0][1]}"
EOF
check "both pairs' results fetched: schema-valid, 2 ok cells each, the peer's MTU 9000 applied, pair 2 after pair 1" \
  /usr/bin/python3 "$work/check_results.py" "$repo" "$run1_dir/$pair1.json" "$run1_dir/$pair2.json" \
  "${tag}1a" "${tag}2a" "${tag}3a" "${tag}2b"
sed 's/^/      /' "$work/out"
check "comparison.md merges them: each pair's report and the compare of pair 2 against pair 1" bash -c "
  grep -qxF '## $pair1.json' $run1_dir/comparison.md && grep -qxF '## $pair2.json' $run1_dir/comparison.md &&
  grep -qxF '## $pair1.json (A) against $pair2.json (B)' $run1_dir/comparison.md &&
  grep -qF 'mtu9000' $run1_dir/comparison.md"
sweep_times=$(/usr/bin/python3 -c "import json; print(', '.join(f\"{p['name']} {float(p['pair_seconds']):.1f} s (sweep {float(p['sweep_seconds']):.1f} s)\" for p in json.load(open('$run1_dir/pairs.json'))))" 2>&1 || true)
echo "      time per pair, its Ansible tasks included (2 cells of 1 s): $sweep_times"
check_lab_state "every interface of every namespace as it began (ip -d link, ip addr, ethtool -k)"

# --- run 2: a play failing midway --------------------------------------------------------------------
echo "== run 2: pair 1's peer agent killed (SIGKILL) while its MTU is changed"
rm -rf "$work/results"/*
peer_mtu_changed() { ip -n "$(ns h2)" -o link show "${tag}2a" | grep -q ' mtu 9000 '; }
start=$SECONDS
playbook nicmatrix.lab.sweep_pairs "$work/run2.log" &
play_pid=$!
# What the kill must find: the agent has changed its interface (seen with ip), so only a restore of its
# journal can put it back.
play_runs_and_mtu_unchanged() { kill -0 "$play_pid" 2>/dev/null && ! peer_mtu_changed; }
deadline=$((SECONDS + 300))
while play_runs_and_mtu_unchanged && ((SECONDS < deadline)); do sleep 0.05; done
if peer_mtu_changed; then
  killed=$(agent_pid "${tag}2a")
  kill -KILL "$killed"
  pass "pair 1's sweep set ${tag}2a to MTU 9000 through h2's agent (ip); agent $killed killed (SIGKILL)"
else
  fail "pair 1's sweep never set ${tag}2a to MTU 9000 (ip)"
fi
play_status=0
wait "$play_pid" || play_status=$?
play_pid=
if ((play_status != 0)) && grep -q "pair $pair1 failed at" "$work/run2.log"; then
  pass "the playbook failed ($play_status, $((SECONDS - start)) s), naming pair 1"
else
  fail "the playbook failed, naming pair 1 (exit $play_status)"; tail -40 "$work/run2.log" | sed 's/^/      /'
fi
run2_dir=$(ls -d "$work"/results/*/ 2>/dev/null | head -1)
check "pairs.json: pair 1 failed, pair 2 swept after it; pair 2's results fetched" /usr/bin/python3 -c "
import json, os
p = json.load(open('$run2_dir/pairs.json'))
print(p)
assert [r['status'] for r in p] == ['failed', 'ok'], p
assert os.path.exists('$run2_dir/$pair2.json')"
# The hosts share /run/nicmatrix here, so the restore on the DUT would find the peer agent's journal too
# (an entry names its interface by namespace and ifindex, found from any namespace of this machine); the
# always block restores the peer first, and that is the restore checked.
check "the always block's restore on h2 put ${tag}2a back to MTU 1500 from the killed agent's journal" /usr/bin/python3 -c "
import json
p = json.load(open('$run2_dir/pairs.json'))[0]
print(p['restore_peer'])
text = ' '.join(p['restore_peer'])
assert '${tag}2a' in text and 'mtu: 1500 (was 9000)' in text"
check_lab_state "every interface of every namespace as it began, the killed agent's one included (ip, ethtool)"
check "the lab key is unchanged by a second run" cmp "$work/lab-key-run1" "$lab_key"

# --- run 3: remove -------------------------------------------------------------------------------------
echo "== run 3: nicmatrix.lab.remove"
play nicmatrix.lab.remove "$work/run3.log" 40
no_agents() {
  local ifc pid
  for ifc in "${tag}2a" "${tag}2b"; do
    [ ! -e "/run/nicmatrix/agent-$ifc.pid" ] || { echo "/run/nicmatrix/agent-$ifc.pid is left"; return 1; }
  done
  for pid in $(pgrep -x nicmatrix || true); do
    if { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "--allow-control $tag"; then echo "agent $pid still runs"; return 1; fi
  done
}
check "no agent of the lab runs, no pid file left" no_agents
check "nothing of the lab's agents left in /run/nicmatrix (pid files, logs, journals, their lock files)" bash -c \
  "! ls /run/nicmatrix/ 2>/dev/null | grep -F '$tag'"
check "dpkg no longer has nicmatrix, /etc/nicmatrix (and the key) gone" bash -c \
  "[ -z \"\$(dpkg-query -W -f='\${db:Status-Status}' nicmatrix 2>/dev/null | grep -vx not-installed)\" ] && [ ! -e /etc/nicmatrix ]"
check_lab_state "every interface of every namespace as it began, after the removal"

echo
if ((failures)); then
  echo "fleet: $failures check(s) failed (logs of the runs were in $work, removed)"
  for f in run1 run2 run3; do [ -f "$work/$f.log" ] && { echo "--- $f.log (end)"; tail -30 "$work/$f.log"; }; done
  exit 1
fi
echo "fleet: every check passed"
