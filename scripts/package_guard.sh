# shellcheck shell=bash
# Sourced by the checks that install and purge the Debian package on this machine (scripts/check-package.sh,
# tests/fleet/fleet.sh): what dpkg says of nicmatrix, and the refusal to start as a user, or where dpkg has
# the package already (the check's purge would take away what someone installed).

# installed, config-files, half-installed, ...; nothing or not-installed when dpkg does not have it.
package_state() { dpkg-query -W -f='${db:Status-Status}' nicmatrix 2>/dev/null || true; }

# True when dpkg has nicmatrix in any state (installed, or config files left).
package_present() { [ -n "$(package_state)" ] && [ "$(package_state)" != not-installed ]; }

# package_guard NAME WHY WHAT: exits 1 with "NAME: run as root (WHY)" unless root, and with "NAME: dpkg
# has nicmatrix already (STATE); this WHAT installs and purges it: purge it first" when dpkg has it.
package_guard() {
  local name=$1 why=$2 what=$3
  if [ "$(id -u)" -ne 0 ]; then
    echo "$name: run as root ($why)" >&2
    exit 1
  fi
  if package_present; then
    echo "$name: dpkg has nicmatrix already ($(package_state)); this $what installs and purges it: purge it first" >&2
    exit 1
  fi
}
