#!/usr/bin/env bash
# Assembles the guest of the VM lab (`nicmatrix lab up --topology vm`, `sweep --lab vm:...`) under OUTDIR:
#   OUTDIR/vmlinuz     Debian 12's kernel (linux-image-6.1.*-amd64, the one linux-image-amd64 depends on)
#   OUTDIR/initrd.gz   busybox, the modules of the emulated NICs and of the 9p share (with their
#                      dependencies from modules.dep), nicmatrix, ethtool and ip with their shared libraries,
#                      and /init: mounts the share and runs the command loop the host talks to
#   OUTDIR/debs/       the two downloaded packages (about 70 MB, kept as the cache)
# Packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`: nothing is installed on the
# host and nothing is written outside OUTDIR. Run again, it rebuilds the initramfs only when nicmatrix (or
# this script) is newer than it, and downloads only what is missing.
#
# usage: scripts/vm-image.sh OUTDIR [NICMATRIX]    (NICMATRIX defaults to OUTDIR/../nicmatrix)
set -euo pipefail

out=${1:?usage: vm-image.sh OUTDIR [NICMATRIX]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nicmatrix=${2:-$out/../nicmatrix}
[ -x "$nicmatrix" ] || { echo "vm-image: $nicmatrix: no nicmatrix binary (build first)" >&2; exit 1; }
self=$(readlink -f "${BASH_SOURCE[0]}")
# One assembly at a time per OUTDIR (two nicmatrix starting labs at once both call this script).
exec 9>"$out/.lock"
flock -w 1800 9

# QEMU device models' drivers, and what the share and the sweep's axes need in the guest.
modules=(e1000e e1000 8139cp 8139too vmxnet3 virtio_net tulip 9p 9pnet_virtio virtio_pci
         sch_fq sch_fq_codel sch_htb sch_netem sch_prio sch_tbf sch_cake sch_sfq tcp_bbr)

need() { command -v "$1" >/dev/null || { echo "vm-image: $1 is missing (scripts/install-deps.sh vm)" >&2; exit 1; }; }
for t in apt-get apt-cache dpkg-deb depmod cpio gzip xz flock ldd ethtool ip dash; do need "$t"; done

# 1. The packages, downloaded once.
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$kpkg" ] || { echo "vm-image: apt-cache knows no linux-image-amd64 (apt-get update?)" >&2; exit 1; }
mkdir -p "$out/debs"
for p in "$kpkg" busybox-static; do
  if ! ls "$out/debs/${p}_"*.deb >/dev/null 2>&1; then
    echo "vm-image: downloading $p" >&2
    (cd "$out/debs" && timeout 900 apt-get download -q "$p" >&2)
  fi
done
kdeb=$(ls "$out/debs/${kpkg}_"*.deb | head -1)
bdeb=$(ls "$out/debs/busybox-static_"*.deb | head -1)

# 2. Up to date? The initramfs is newer than everything it is made of.
if [ -f "$out/initrd.gz" ] && [ -f "$out/vmlinuz" ] && [ "$out/initrd.gz" -nt "$nicmatrix" ] && [ "$out/initrd.gz" -nt "$self" ] &&
   [ "$out/initrd.gz" -nt "$kdeb" ]; then
  exit 0
fi
echo "vm-image: assembling the guest in $out" >&2

# The kernel package unpacked once (with the modules.dep depmod makes, which the package leaves to its
# install): a rebuild after nicmatrix changed takes seconds.
kdir=$out/kernel
if [ ! -f "$kdir/.from" ] || [ "$(cat "$kdir/.from")" != "${kdeb##*/}" ]; then
  rm -rf "$kdir" "$out/kernel.tmp"
  dpkg-deb -x "$kdeb" "$out/kernel.tmp"
  depmod -b "$out/kernel.tmp" "$(ls "$out/kernel.tmp/lib/modules" | head -1)"
  echo "${kdeb##*/}" >"$out/kernel.tmp/.from"
  mv "$out/kernel.tmp" "$kdir"
fi
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$bdeb" "$work/busybox"
krel=$(ls "$kdir/lib/modules" | head -1)
moddir=$kdir/lib/modules/$krel
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,run,tmp,share,etc,lib/modules}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"

# 3. Modules and their dependencies, in load order (a module after everything it depends on).
declare -A seen=()
order=()
add_module() {
  local name=${1//-/_} path dep
  path=$(awk -F: -v n="$name" '{ f=$1; sub(/.*\//, "", f); sub(/\.ko(\.[a-z]+)?$/, "", f); gsub(/-/, "_", f);
                                  if (f == n) { print $1; exit } }' "$moddir/modules.dep")
  if [ -z "$path" ]; then
    # Built into this kernel (modules.builtin) is fine; unknown is not.
    grep -q "/${1}.ko\$\|/${name}.ko\$" "$moddir/modules.builtin" && return 0
    echo "vm-image: module $1 is neither in modules.dep nor built in ($krel)" >&2; exit 1
  fi
  [ -n "${seen[$path]-}" ] && return 0
  seen[$path]=1
  for dep in $(awk -F: -v p="$path" '$1 == p { print $2 }' "$moddir/modules.dep"); do
    dep=${dep##*/}; dep=${dep%%.ko*}
    add_module "$dep"
  done
  order+=("$path")
}
for m in "${modules[@]}"; do add_module "$m"; done
: >"$root/etc/modules"
for path in "${order[@]}"; do
  base=${path##*/}
  case "$base" in
    *.ko.xz) xz -dc "$moddir/$path" >"$root/lib/modules/${base%.xz}"; base=${base%.xz} ;;
    *.ko.zst) zstd -qdc "$moddir/$path" >"$root/lib/modules/${base%.zst}"; base=${base%.zst} ;;
    *) cp "$moddir/$path" "$root/lib/modules/$base" ;;
  esac
  echo "$base" >>"$root/etc/modules"
done

# 4. Programs with their shared libraries (both userlands are Debian 12's).
copy_program() {
  local src=$1 dst=$2 lib
  cp -L "$src" "$root$dst"
  for lib in $(ldd "$src" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'); do
    [ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
  done
}
copy_program "$nicmatrix" /usr/bin/nicmatrix
copy_program "$(command -v ethtool)" /usr/sbin/ethtool
copy_program "$(command -v ip)" /usr/sbin/ip
# /bin/sh is dash: busybox's shell runs its own applets before PATH (its `ip` knows no netns).
copy_program /bin/dash /bin/dash
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$root/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }
echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
printf 'ipv4 0 IP\nipv6 41 IPv6\ntcp 6 TCP\nudp 17 UDP\nicmp 1 ICMP\nipv6-icmp 58 IPv6-ICMP\n' >"$root/etc/protocols"

# 5. /init: mount, load the modules, mount the share, then serve the host's commands.
#    The host drops SHARE/cmd/ID.sh; the loop moves it to SHARE/run/ID/cmd, runs it in the background with
#    stdout, stderr and its pid in that folder, and writes its exit code to rc (renamed into place, so the
#    host never reads half of it). SHARE/run/ID/stop asks for SIGTERM (a sweep then restores and ends).
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
ln -sf dash /bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/ TERM=dumb
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs run /run
mount -t tmpfs tmp /tmp
mkdir -p /run/netns /dev/pts
mount -t debugfs none /sys/kernel/debug 2>/dev/null
for m in $(cat /etc/modules); do insmod /lib/modules/$m 2>/dev/null || echo "nm-guest: insmod $m failed"; done
ip link set lo up
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 nmshare /share; then
  echo "nm-guest: cannot mount the share"; poweroff -f
fi
mkdir -p /share/cmd /share/run
cat /proc/version > /share/ready.tmp && mv /share/ready.tmp /share/ready
echo "nm-guest: ready"
run_one() {
  d=$1
  /bin/dash "$d/cmd" >"$d/out" 2>"$d/err" </dev/null &
  echo $! >"$d/pid"
  wait $!
  echo $? >"$d/rc.tmp"
  mv "$d/rc.tmp" "$d/rc"
}
while :; do
  for f in /share/cmd/*.sh; do
    [ -e "$f" ] || continue
    id=${f##*/}; id=${id%.sh}
    mkdir -p "/share/run/$id" && mv "$f" "/share/run/$id/cmd" || continue
    run_one "/share/run/$id" &
  done
  for s in /share/run/*/stop; do
    [ -e "$s" ] || continue
    d=${s%/stop}
    [ -s "$d/pid" ] || continue   # not started yet: the next round sends it
    kill -TERM "$(cat "$d/pid")" 2>/dev/null
    mv "$s" "$d/stopped"
  done
  [ -e /share/poweroff ] && poweroff -f
  sleep 0.1
done
EOF
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz.tmp"
cp "$kdir/boot/vmlinuz-$krel" "$out/vmlinuz.tmp"
echo "$krel" >"$out/kernel-release.tmp"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
mv "$out/kernel-release.tmp" "$out/kernel-release"
mv "$out/initrd.gz.tmp" "$out/initrd.gz"
echo "vm-image: $out/initrd.gz ($(du -h "$out/initrd.gz" | cut -f1)), kernel $krel" >&2
