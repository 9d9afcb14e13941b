#!/usr/bin/python3
"""Applies and restores, through a running `nicmatrix serve` (the packaged unit in check-package's
container), every kind of setting the agent advertises, each judged from outside with ip, ethtool, tc,
sysctl or the sysfs file itself, run in the agent's namespace by `nsenter -t PID`.

  agent_kinds.py HOST PORT KEY_FILE IFACE NS_PID --expect-kinds K,K --expect-unavailable K,K

Prints one line per check ("ok    ..." / "FAIL  ..."); exits 1 when one failed. A kind the device does not
have (rings and coalescing on a veth) must be reported by the agent's `unsupported` op, with ethtool
agreeing that the device has none; it is then not applied.
"""
import argparse, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from agent_client import AgentSession, canonical as D  # noqa: E402  (the one client of the agent's session)

ap = argparse.ArgumentParser()
ap.add_argument("host"); ap.add_argument("port", type=int); ap.add_argument("key"); ap.add_argument("ifname"); ap.add_argument("ns_pid")
ap.add_argument("--expect-kinds", required=True); ap.add_argument("--expect-unavailable", default="")
args = ap.parse_args()
IF = args.ifname
failures = 0


def report(ok, what, detail=""):
    global failures
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures += 1
        if detail:
            print("      " + str(detail).replace("\n", "\n      "), flush=True)


def outside(*cmd):
    """A command in the agent's network and mount namespaces (its /sys shows the agent's interfaces)."""
    return subprocess.run(["timeout", "10", "nsenter", "-t", args.ns_pid, "-n", "-m", *cmd], capture_output=True, text=True).stdout


# The agent's session (agent/agent_protocol.hpp; core/control/message_auth.cpp), as the review's key holder's client.
session = AgentSession(args.host, args.port, open(args.key, "rb").read(), timeout=20)
ch = session.challenge
if session.welcome.get("type") != "welcome":
    sys.exit("not welcome: " + D(session.welcome))


def request(body):
    session.send_request(body)
    while True:
        r = session.receive()
        if r.get("type") in ("reply", "error"):
            return r


kinds, unavailable = ch["kinds"], ch.get("unavailable", {})
expect = args.expect_kinds.split(",")
expect_unavailable = [k for k in args.expect_unavailable.split(",") if k]
report(kinds == expect, f"the agent offers {','.join(expect)}", f"it offers {kinds}, unavailable {unavailable}")
report(sorted(unavailable) == sorted(expect_unavailable), f"the agent names unavailable: {','.join(expect_unavailable) or 'none'}",
       f"it names {unavailable}")
report(ch.get("protocol") == 5, "the challenge speaks agent protocol 5", ch.get("protocol"))

# Each kind: the setting asked, and its oracle (what ip/ethtool/tc/sysctl/sysfs says now).
def mtu():
    return json.loads(outside("ip", "-j", "link", "show", IF))[0]["mtu"]


def tso():
    for line in outside("ethtool", "-k", IF).splitlines():
        if line.startswith("tcp-segmentation-offload:"):
            return line.split()[1]


def rx_channels():
    lines = outside("ethtool", "-l", IF).split("Current hardware settings:")[-1]
    return next(l.split()[1] for l in lines.splitlines() if l.startswith("RX:"))


def sysfs(rel):
    return outside("cat", f"/sys/class/net/{IF}/{rel}").strip()


def root_qdisc():
    return json.loads(outside("tc", "-j", "qdisc", "show", "dev", IF, "root") or "[{}]")[0].get("kind")


def sysctl():
    return outside("sysctl", "-n", "net.ipv4.tcp_sack").strip()


mtu0 = mtu()
cases = {
    "mtu": ({"mtu": mtu0 - 100}, mtu, "ip -j link show"),
    "offloads": ({"features": {"tso": tso() != "on"}}, tso, "ethtool -k tcp-segmentation-offload"),
    "channels": ({"tuning": {"channels": {"rx": 2 if rx_channels() == "1" else 1}}}, rx_channels, "ethtool -l RX"),
    "rings": ({"tuning": {"rings": {"rx": 256}}}, None, "ethtool -g"),
    "coalesce": ({"tuning": {"coalesce": {"rx-usecs": 10}}}, None, "ethtool -c"),
    "rps": ({"tuning": {"rps": {"rx-0": "1"}}}, lambda: sysfs("queues/rx-0/rps_cpus"), "queues/rx-0/rps_cpus"),
    "xps": ({"tuning": {"xps": {"tx-0": "1"}}}, lambda: sysfs("queues/tx-0/xps_cpus"), "queues/tx-0/xps_cpus"),
    "napi": ({"tuning": {"napi": {"gro_flush_timeout": 20000}}}, lambda: sysfs("gro_flush_timeout"), "gro_flush_timeout"),
    "qdisc": ({"tuning": {"qdisc": {"kind": "pfifo", "limit": 100}}}, root_qdisc, "tc qdisc show root"),
    "sysctl": ({"tuning": {"sysctl": {"net.ipv4.tcp_sack": "0" if sysctl() == "1" else "1"}}}, sysctl, "sysctl -n net.ipv4.tcp_sack"),
}
device_lacks = {"rings": ["ethtool", "-g", IF], "coalesce": ["ethtool", "-c", IF]}

for kind in kinds:
    settings, oracle, how = cases[kind]
    why = request({"op": "unsupported", "ifname": IF, "settings": settings})
    if kind in device_lacks:
        has = subprocess.run(["timeout", "10", "nsenter", "-t", args.ns_pid, "-n", *device_lacks[kind]], capture_output=True).returncode == 0
        if not has:
            report(why.get("type") == "reply" and why.get("why", "").startswith(IF) and kind in why.get("why", ""),
                   f"{kind}: {' '.join(device_lacks[kind][:2])} says {IF} has none, and the agent's unsupported says so before any change",
                   D(why))
            continue
    report(why.get("type") == "reply" and why.get("why") == "", f"{kind}: the agent's unsupported finds nothing in the way", D(why))
    before = oracle()
    r = request({"op": "apply", "ifname": IF, "settings": settings, "confirm_ms": 60000})
    after = oracle()
    report(r.get("type") == "reply" and after != before, f"{kind}: applied through the unit ({how}: {before} -> {after})", D(r))
    if r.get("type") == "reply":
        request({"op": "confirm", "change": r["change"]})
    r = request({"op": "restore"})
    back = oracle()
    report(r.get("type") == "reply" and back == before, f"{kind}: restored through the unit ({how}: {back})", D(r))

# A kind the agent allows but cannot change where it runs: refused at apply, named by unsupported.
for kind in unavailable:
    if kind not in cases:
        continue
    settings, oracle, how = cases[kind]
    why = request({"op": "unsupported", "ifname": IF, "settings": settings})
    report(f"{kind}: the agent cannot change it where it runs" in why.get("why", ""), f"{kind}: unsupported gives the agent's reason", D(why))
    before = oracle() if oracle else None
    r = request({"op": "apply", "ifname": IF, "settings": settings, "confirm_ms": 60000})
    report(r.get("type") == "error" and r.get("kind") == "refused" and (oracle is None or oracle() == before),
           f"{kind}: apply refused with nothing changed", D(r))

session.close()
sys.exit(1 if failures else 0)
