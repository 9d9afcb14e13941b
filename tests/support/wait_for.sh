# Sourced by the shell tests (tests/fleet/fleet.sh, tests/package/agent_unit.sh): a wait for an event with
# a deadline, never a fixed sleep.
#
# wait_for SECONDS DESCRIPTION CMD...: polls CMD (its output dropped) every 0.1 s until it succeeds; at the
# deadline says "SCRIPT: timed out waiting for DESCRIPTION" on stderr and returns 1.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then echo "${0##*/}: timed out waiting for $what" >&2; return 1; fi
    sleep 0.1
  done
}
