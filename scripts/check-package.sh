#!/usr/bin/env bash
# Checks the Debian package on this machine, as root: builds it (scripts/package.sh), installs it with
# apt-get, uses what it ships (the command, man pages, bash and zsh completion, the Python package from
# outside the tree, `nicmatrix plot` on the shipped example results, the systemd unit), runs lintian,
# runs the agent's unit in a systemd-nspawn container and applies and restores through it every kind of
# setting it offers, with each drop-in the package ships (tests/package/agent_unit.sh), then removes and
# purges it and checks that no file of it is left. Prints one line per check and exits 1
# if any failed.
#
# It leaves the machine as it found it, also when a step fails: the package is purged and the packages
# its installation pulled in are removed again (an EXIT trap). What it needs to check (lintian, man-db,
# systemd's systemd-analyze, bash-completion, zsh) is installed through `install-deps.sh package-check`
# and stays, like the build dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/package_guard.sh
. scripts/package_guard.sh
package_guard check-package "it installs and removes the package" check

bash scripts/install-deps.sh package-check
version=$(sed -n 's/^project(nicmatrix VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
# --version names the source commit the package was built from (none outside a git checkout).
commit=$(git describe --always --dirty --abbrev=12 --match=NO-TAGS-WANTED 2>/dev/null || true)
version_line="nicmatrix $version${commit:+ ($commit)}"

work=$(mktemp -d /tmp/nicmatrix-check.XXXXXX)
installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
installed_packages > "$work/before"

cleanup() {
  local status=$?
  trap - EXIT
  if package_present; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q nicmatrix >/dev/null 2>&1 || true
  fi
  # What `apt-get install ./nicmatrix.deb` pulled in (its dependencies and recommendations).
  local pulled
  pulled=$(installed_packages | comm -13 "$work/before" -)
  if [ -n "$pulled" ]; then
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $pulled >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP   # a signal ends the script through the EXIT trap too

if ! bash scripts/package.sh >"$work/package.log" 2>&1; then
  cat "$work/package.log"
  echo "check-package: scripts/package.sh failed" >&2
  exit 1
fi
deb=$(tail -1 "$work/package.log")

failures=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
# check_empty DESCRIPTION FILE: passes when FILE is empty, else lists it.
check_empty() {
  if [ -s "$2" ]; then fail "$1"; sed 's/^/      /' "$2"; else pass "$1"; fi
}
# check DESCRIPTION COMMAND...: runs COMMAND (its output in $work/out), passes when it succeeds.
check() {
  local what=$1
  shift
  if "$@" >"$work/out" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/      /' "$work/out"; fi
}

echo "== install $deb"
DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q "./$deb" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log"; fail "apt-get install ./$deb"; exit 1; }
pass "apt-get install ./$deb"
dpkg -L nicmatrix | sort > "$work/files"
dpkg-query -W -f='${Conffiles}\n' nicmatrix | awk 'NF { print $1 }' > "$work/conffiles"
while read -r path; do [ -e "$path" ] || echo "$path"; done < "$work/files" > "$work/missing"
check_empty "every file dpkg lists is there (a dpkg path-exclude, as in some container images, drops man pages)" "$work/missing"
newly=$(installed_packages | comm -13 "$work/before" - | grep -vx nicmatrix | tr '\n' ' ' || true)
echo "      pulled in: ${newly:-nothing}"

echo "== the command, its man pages, its completion"
check "nicmatrix --version is $version_line" bash -c "[ \"\$(/usr/bin/nicmatrix --version)\" = '$version_line' ]"
for page in nicmatrix nicmatrix-sweep; do
  check "man $page renders (from /usr/share/man)" bash -c "
    [ \"\$(man -w $page)\" = /usr/share/man/man1/$page.1.gz ] &&
    MANPAGER=cat MANWIDTH=100 man $page | tee $work/$page.txt | grep -q '^NAME' &&
    grep -q -- '$page *- ' $work/$page.txt"
done
check "man nicmatrix-sweep documents --lab" grep -q -- '--lab' "$work/nicmatrix-sweep.txt"
for cmd in $(/usr/bin/nicmatrix --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF { print $1 }'); do
  check "man nicmatrix-$cmd exists" man -w "nicmatrix-$cmd"
done
check "whatis nicmatrix-sweep (man-db's index has the page)" bash -c "whatis nicmatrix-sweep | grep -q 'nicmatrix-sweep (1)'"
complete_bash='COMP_WORDS=(nicmatrix sw); COMP_CWORD=1; COMPREPLY=(); _nicmatrix; [ "${COMPREPLY[*]}" = sweep ]'
check "bash: nicmatrix sw<TAB> gives sweep (the completion file sourced)" \
  bash --norc --noprofile -c "source /usr/share/bash-completion/completions/nicmatrix; $complete_bash"
check "bash: nicmatrix sw<TAB> gives sweep (loaded by bash-completion on demand)" \
  bash --norc --noprofile -c "source /usr/share/bash-completion/bash_completion; __load_completion nicmatrix; $complete_bash"
check "bash: nicmatrix sweep --la<TAB> gives --lab --lab-from --lab-name" bash --norc --noprofile -c \
  'source /usr/share/bash-completion/completions/nicmatrix; COMP_WORDS=(nicmatrix sweep --la); COMP_CWORD=2; _nicmatrix; [ "${COMPREPLY[*]}" = "--lab --lab-from --lab-name" ]'
check "zsh: nicmatrix sw<TAB> gives sweep (from zsh's default fpath)" bash -c \
  "[ \"\$(cd $work && zsh -f $PWD/tests/docs/zsh_complete.zsh '' 'nicmatrix sw')\" = sweep ]"

echo "== Python, plot, examples"
check "/usr/bin/python3 -c 'import nicmatrix' outside the tree imports the package's copy" bash -c "
  cd $work && env -u PYTHONPATH /usr/bin/python3 -c 'import nicmatrix; print(nicmatrix.__file__, nicmatrix.__version__)' |
  tee /dev/stderr | grep -qx '/usr/lib/python3/dist-packages/nicmatrix/__init__.py $version'"
check "nicmatrix plot on the shipped example results writes a PNG (read back with PIL)" bash -c "
  cd $work && env -u PYTHONPATH /usr/bin/nicmatrix plot /usr/share/nicmatrix/results/offload-mtu-lab.json -o $work/heat.png &&
  /usr/bin/python3 -c \"from PIL import Image; im = Image.open('$work/heat.png'); assert im.format == 'PNG' and min(im.size) > 100, im; print(im.format, im.size)\""
check "the shipped example notebook runs where it is installed (its plots to a writable directory)" bash -c "
  cd /usr/share/nicmatrix/results && env -u PYTHONPATH NM_PLOT_DIR=$work/plots timeout 300 /usr/bin/python3 -c \
    \"import nbformat, nbclient; nb = nbformat.read('example.ipynb', 4); nbclient.NotebookClient(nb, timeout=240).execute()\" &&
  [ -s $work/plots/heatmap.png ] && [ -s $work/plots/bars.png ]"
check "nicmatrix report on the shipped example results" bash -c \
  "/usr/bin/nicmatrix report /usr/share/nicmatrix/results/offload-mtu-lab.json | grep -q 'all-on / tcp-p1'"
check "nicmatrix sweep --dry-run on the shipped example config" bash -c \
  "/usr/bin/nicmatrix sweep /usr/share/nicmatrix/configs/offload-mtu.json --dry-run | grep -q 'all-off/mtu9000'"

echo "== the agent's systemd unit"
check "systemd-analyze verify nicmatrix-agent@eth1.service" systemd-analyze verify nicmatrix-agent@eth1.service
check "the unit runs serve --allow-control IFACE with the key from /etc/nicmatrix, the journal under /run" grep -qxF \
  'ExecStart=/usr/bin/nicmatrix serve --allow-control %I --key-file /etc/nicmatrix/agent.key --journal /run/nicmatrix/agent-%I.json $NICMATRIX_AGENT_KINDS $NICMATRIX_AGENT_OPTIONS' \
  /lib/systemd/system/nicmatrix-agent@.service
check "the options come from /etc/nicmatrix/agent.conf (a conffile)" grep -qx /etc/nicmatrix/agent.conf "$work/conffiles"
check "the key /etc/nicmatrix/agent.key was made: 32 bytes, mode 600, root's" bash -c \
  "[ \"\$(stat -c '%s %a %U' /etc/nicmatrix/agent.key)\" = '32 600 root' ]"
if systemd-analyze security --offline=yes nicmatrix-agent@eth1.service >"$work/security" 2>&1; then
  pass "systemd-analyze security: $(grep -o 'Overall exposure level.*' "$work/security")"
else
  fail "systemd-analyze security --offline=yes nicmatrix-agent@eth1.service"
  sed 's/^/      /' "$work/security"
fi

for dropin in files sysctl qdisc; do
  check "systemd-analyze verify with the example drop-in nicmatrix-agent-$dropin.conf" bash -c "
    mkdir -p $work/units/nicmatrix-agent@.service.d &&
    cp /lib/systemd/system/nicmatrix-agent@.service $work/units/ &&
    cp /usr/share/doc/nicmatrix/examples/nicmatrix-agent-$dropin.conf $work/units/nicmatrix-agent@.service.d/ &&
    SYSTEMD_UNIT_PATH=$work/units: systemd-analyze verify nicmatrix-agent@eth1.service; status=\$?;
    rm -rf $work/units; exit \$status"
done

echo "== the agent's unit applies and restores every kind it offers (systemd-nspawn)"
if timeout 600 bash tests/package/agent_unit.sh >"$work/unit-kinds" 2>&1; then
  sed 's/^/  /' "$work/unit-kinds"
  pass "the unit and each drop-in: every kind offered applied and restored, the others named unavailable"
else
  sed 's/^/  /' "$work/unit-kinds"
  fail "the unit and each drop-in: every kind offered applied and restored, the others named unavailable"
fi

echo "== lintian"
# --display-info too: lintian's hardening tags for the executable (hardening-no-fortify-functions, ...)
# are of that level, and none may be there.
lintian --pedantic --display-info "$deb" >"$work/lintian" 2>&1 || true
{ grep -v '^running with root privileges' "$work/lintian" || true; } | sed 's/^/      /'
if grep -q '^E:' "$work/lintian"; then fail "lintian: errors"; else pass "lintian: no errors ($(grep -c '^[WIP]:' "$work/lintian" || true) warnings/notes, listed above)"; fi
if grep -q ' hardening-' "$work/lintian"; then fail "lintian: the executable is not fully hardened"; else pass "lintian: no hardening tag"; fi

# The files of the package still present after `remove` (conffiles excepted: Debian keeps them until
# purge) or `purge`: every path dpkg listed that exists, except directories another package (or the base
# system: /, /usr, /lib) owns too.
# other_owners PATH: does a package other than nicmatrix list PATH? (`dpkg -S` still lists nicmatrix's
# files while it is in the config-files state, after remove.)
other_owners() {
  dpkg -S "$1" 2>/dev/null |
    awk -F': ' '{ n = split($1, owner, ", "); for (i = 1; i <= n; i++) if (owner[i] != "nicmatrix") found = 1 } END { exit !found }'
}
leftovers() {
  local path
  while read -r path; do
    [ "$path" = /. ] && continue
    if [ -d "$path" ]; then
      other_owners "$path" && continue
      [ "$1" = remove ] && grep -q "^$path/" "$work/conffiles" && continue
      echo "$path/"
    elif [ -e "$path" ] || [ -L "$path" ]; then
      [ "$1" = remove ] && grep -qxF "$path" "$work/conffiles" && continue
      echo "$path"
    fi
  done < "$work/files"
}
echo "== remove and purge"
check "apt-get remove nicmatrix" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q nicmatrix
leftovers remove > "$work/left-remove"
check_empty "remove leaves no file of the package but its conffiles (Python's byte-code included)" "$work/left-remove"
check "remove keeps the conffiles and the key (Debian's way: purge removes them)" bash -c \
  "while read -r f; do [ -f \"\$f\" ] || exit 1; done < $work/conffiles && [ -f /etc/nicmatrix/agent.key ]"
check "apt-get purge nicmatrix" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q nicmatrix
{ leftovers purge; [ ! -e /etc/nicmatrix ] || echo /etc/nicmatrix/; } > "$work/left-purge"
check_empty "purge leaves no file of the package, no key, no /etc/nicmatrix" "$work/left-purge"
check "dpkg no longer has nicmatrix" bash -c "[ -z \"\$(dpkg-query -W -f='\${db:Status-Status}' nicmatrix 2>/dev/null | grep -vx not-installed)\" ]"

echo
if ((failures)); then
  echo "check-package: $failures check(s) failed"
  exit 1
fi
echo "check-package: every check passed"
