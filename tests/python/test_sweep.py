"""nicmatrix.sweep and nicmatrix.run on the real kernel: the lab's veth pair in namespaces, the C++ engine,
checked with ethtool, ip and the results file read with the json module."""
import json
import os
import signal
import subprocess
import textwrap
import threading
import time

import pytest

import nicmatrix as nm
from conftest import needs_root, reaped, run, run_script, serving, unique_name

pytestmark = needs_root


def tiny_config(name, offloads, mtu, duration_s=1, apply_to="both", order="shuffled"):
    return {
        "name": name,
        "offloads": offloads,
        "mtu": mtu,
        "traffic": [{"name": "tcp-p1", "protocol": "tcp", "streams": 1}],
        "duration_s": duration_s, "omit_s": 0.2, "repetitions": 1, "cooldown_s": 0,
        "apply_to": apply_to, "order": order,
    }


def ethtool_k(netns, iface):
    """`ethtool -k` as a dict name -> on (bool), "[fixed]" annotations dropped."""
    out = run("ip", "netns", "exec", netns, "ethtool", "-k", iface).stdout
    features = {}
    for line in out.splitlines()[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            features[name.strip()] = value.split()[0] == "on"
    return features


def link_mtu(netns, iface):
    return json.loads(run("ip", "-n", netns, "-j", "link", "show", "dev", iface).stdout)[0]["mtu"]


def wait_until(predicate, timeout_s, what):
    """Polls `predicate` until it holds; fails naming `what` when `timeout_s` passes first."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)


def namespaces():
    return run("ip", "netns", "list").stdout


def test_short_lab_sweep_from_python(tmp_path):
    lab = unique_name("nmpys")
    config = tiny_config("py-short", [{"name": "tso-off", "features": {"tso": "off"}},
                                      {"name": "all-on", "features": {"tso": "on", "gso": "on"}}], [1500])
    events, seen_by_ethtool = [], {}

    def progress(event):
        events.append(event)
        if event["event"] == "cell_done":
            # While the cell's settings are still applied: what the kernel says, with ethtool.
            seen_by_ethtool[event["key"]] = ethtool_k(f"{lab}-a", "nm-a")["tcp-segmentation-offload"]

    # The GIL is released while the engine runs: a Python thread keeps ticking meanwhile.
    ticks, stop = [0], threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.005)

    ticker = threading.Thread(target=tick)
    ticker.start()
    out = tmp_path / "short.json"
    started = time.monotonic()
    try:
        res = nm.sweep(config, lab=True, lab_name=lab, output=out, journal=str(tmp_path / "journal.json"), progress=progress)
    finally:
        stop.set()
        ticker.join()
    elapsed = time.monotonic() - started
    assert ticks[0] > 0.1 * elapsed / 0.005, (ticks[0], elapsed)

    doc = json.loads(out.read_text())
    assert res.path == str(out)
    assert [c["key"] for c in doc["cells"]] == ["tso-off/mtu1500/tcp-p1", "all-on/mtu1500/tcp-p1"]
    assert [c["status"] for c in doc["cells"]] == ["ok", "ok"]
    assert doc["run"]["finished"]
    df = res.to_dataframe()
    assert len(df) == 2
    for row, cell in zip(df.to_dict("records"), doc["cells"]):
        assert row["throughput_bps"] == cell["runs"][0]["throughput_bps"] > 1e6
        assert row["cpu_sender_sys_s"] == cell["runs"][0]["cpu"]["sender"]["sys_s"]
        # No write_size in the config: the sender wrote whole segments of its MSS, and the frame says how many bytes.
        mss = cell["runs"][0]["streams"][0]["mss"]
        assert row["socket_write_size"] == cell["runs"][0]["socket"]["write_size"] > 0
        assert row["socket_write_size"] % mss == 0 and row["socket_write_size"] <= 128 * 1024
    # The recorded effective state is what ethtool saw while the cell ran.
    assert seen_by_ethtool == {"tso-off/mtu1500/tcp-p1": False, "all-on/mtu1500/tcp-p1": True}
    assert df.set_index("key").loc["tso-off/mtu1500/tcp-p1", "local:tx-tcp-segmentation"] == False  # noqa: E712
    kinds = [e["event"] for e in events]
    assert kinds.count("cell_start") == 2 and kinds.count("cell_done") == 2
    done = [e for e in events if e["event"] == "cell_done"]
    # One round (one repetition each), in a shuffled order.
    assert sorted(e["number"] for e in done) == [1, 2] and all(e["total"] == 2 for e in done)
    assert all(e["round"] == 1 and e["repetition"] == 1 and e["final"] for e in done)
    assert {e["cell"]["key"]: e["status"] for e in done} == {"tso-off/mtu1500/tcp-p1": "ok", "all-on/mtu1500/tcp-p1": "ok"}
    assert doc["run"]["order"]["mode"] == "shuffled" and isinstance(doc["run"]["order"]["seed"], int)
    assert f"{lab}-a" not in namespaces()   # the sweep's own lab is gone


def test_progress_callback_exception_stops_the_sweep(tmp_path):
    lab = unique_name("nmpyx")
    config = tiny_config("py-stop", [{"name": "a", "features": {"tso": "off"}}, {"name": "b", "features": {"gso": "off"}}], [1500, 1400])

    def progress(event):
        if event["event"] == "cell_done":
            raise RuntimeError("enough")

    out = tmp_path / "stop.json"
    with pytest.raises(RuntimeError, match="enough"):
        nm.sweep(config, lab=True, lab_name=lab, output=out, journal=str(tmp_path / "journal.json"), progress=progress)
    doc = json.loads(out.read_text())
    assert 1 <= len(doc["cells"]) < 4
    assert f"{lab}-a" not in namespaces()


SWEEP_SCRIPT = textwrap.dedent("""
    import sys, json
    import nicmatrix as nm
    config, output, journal, peer = sys.argv[1:5]
    def progress(event):
        if event["event"] == "cell_done":
            print("DONE", event["key"], flush=True)
    try:
        nm.sweep(config, iface="nm-a", peer=peer, output=output, journal=journal, progress=progress)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(3)
    print("FINISHED", flush=True)
""")


def sweep_child(tmp_path, netns, config, out):
    """SWEEP_SCRIPT in `netns` as a child process: `config` swept against the peer 198.18.0.2 into `out`,
    its journal tmp_path/journal.json; stdout and stderr pipes."""
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP_SCRIPT)
    return subprocess.Popen(["ip", "netns", "exec", netns, "/usr/bin/python3", str(script), str(config_file), str(out),
                             str(tmp_path / "journal.json"), "198.18.0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def test_ctrl_c_restores_the_interfaces_and_keeps_finished_cells(tmp_path, cli_lab):
    # A lab that outlives the sweep (peer mode: the sweep runs in the client's namespace against a
    # `nicmatrix serve` in the server's), so its interface can be checked with ethtool and ip afterwards.
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    before_features, before_mtu = ethtool_k(ns_a, "nm-a"), link_mtu(ns_a, "nm-a")
    with serving(ns_b) as server:
        config = tiny_config("py-interrupt", [{"name": "off", "features": {"tso": "off", "gso": "off", "gro": "off"}},
                                              {"name": "on", "features": {}}], [1400, 1300], duration_s=2, apply_to="local",
                             order="sequential")   # the cells in turn, so the test knows which one Ctrl-C stops
        out = tmp_path / "interrupted.json"
        with reaped(sweep_child(tmp_path, ns_a, config, out)) as child:
            first = child.stdout.readline()
            assert first.startswith("DONE off/mtu1400/tcp-p1"), first + child.stderr.read() if not first else first
            # The second cell (off at MTU 1300) is applied next and then measured for 2.2 s.
            wait_until(lambda: link_mtu(ns_a, "nm-a") == 1300, 5, "the second cell's MTU on nm-a")
            child.send_signal(signal.SIGINT)
            rest, err = child.communicate(timeout=30)
        assert child.returncode == 3, rest + err
        assert "KeyboardInterrupt" in rest
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)

    assert ethtool_k(ns_a, "nm-a") == before_features
    assert link_mtu(ns_a, "nm-a") == before_mtu
    doc = json.loads(out.read_text())
    assert [c["key"] for c in doc["cells"]][:1] == ["off/mtu1400/tcp-p1"]
    assert len(doc["cells"]) < 4
    assert doc["cells"][0]["status"] == "ok" and doc["cells"][0]["runs"][0]["throughput_bps"] > 0
    assert doc["run"]["finished"] in ("", None)
    assert not (tmp_path / "journal.json").exists() or json.loads((tmp_path / "journal.json").read_text()) in ({}, [])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_the_sweep_like_ctrl_c_and_restore(tmp_path, cli_lab, signum):
    # Without handlers of its own, Python dies of SIGTERM/SIGHUP at once with the interface changed.
    # sweep() stops through the normal path instead, restores, saves, and then lets the signal end the
    # process as it asked (the default action: killed by that signal).
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    before_features, before_mtu = ethtool_k(ns_a, "nm-a"), link_mtu(ns_a, "nm-a")
    with serving(ns_b) as server:
        config = tiny_config("py-term", [{"name": "off", "features": {"tso": "off", "gso": "off", "gro": "off"}}],
                             [1400, 1300, 1420], duration_s=2, apply_to="local")
        out = tmp_path / "term.json"
        with reaped(sweep_child(tmp_path, ns_a, config, out)) as child:
            wait_until(lambda: link_mtu(ns_a, "nm-a") == 1400, 15, "the first cell's MTU on nm-a")
            child.send_signal(signum)
            rest, err = child.communicate(timeout=30)
        assert child.returncode == -signum, rest + err
        assert "FINISHED" not in rest
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)

    assert ethtool_k(ns_a, "nm-a") == before_features
    assert link_mtu(ns_a, "nm-a") == before_mtu
    doc = json.loads(out.read_text())
    assert len(doc["cells"]) < 3
    assert doc["run"]["finished"] in ("", None)
    assert not (tmp_path / "journal.json").exists()


RUN_SCRIPT = textwrap.dedent("""
    import json, sys
    import nicmatrix as nm
    print(json.dumps(nm.run(host="198.18.0.2", duration_s=1, streams=2)))
""")


def rx_bytes(netns, iface):
    return json.loads(run("ip", "-n", netns, "-j", "-s", "link", "show", "dev", iface).stdout)[0]["stats64"]["rx"]["bytes"]


def test_run_one_test_from_python(tmp_path, cli_lab):
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    with serving(ns_b, "--once") as server:
        before = rx_bytes(ns_b, "nm-b")
        out = run_script(ns_a, tmp_path / "run.py", RUN_SCRIPT)
        after = rx_bytes(ns_b, "nm-b")
        server.wait(timeout=10)
    result = json.loads(out.stdout)
    assert result["status"] == "ok"
    assert len(result["streams"]) == 2
    assert result["throughput_bps"] > 1e6
    # What the engine counted crossed nm-b, as ip -s link counts it (headers on top of the payload).
    assert 0 < result["bytes"] <= after - before


KEYED_RUN_SCRIPT = """
import json, sys
import nicmatrix as nm
try:
    nm.run(host="198.18.0.2", duration_s=0.5)
    print("no-key: ran")
except nm.Error as e:
    print("no-key:", e)
r = nm.run(host="198.18.0.2", duration_s=0.5, key_file=sys.argv[1])
print(json.dumps(r))
"""


def test_run_with_key_file_from_python(tmp_path, cli_lab):
    """run(key_file=...) as `run --key-file`: a server started with --key-file refuses the test without the
    key and runs it with it."""
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    key = tmp_path / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    with serving(ns_b, "--key-file", str(key)):
        out = run_script(ns_a, tmp_path / "keyed.py", KEYED_RUN_SCRIPT, str(key))
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("no-key:") and "ran" not in first and "key" in first
    result = json.loads(second)
    assert result["status"] == "ok"
    assert result["bytes"] > 0


def test_run_bad_input_raises_error_before_sending_anything():
    with pytest.raises(nm.Error, match="protocol|sctp"):
        nm.run(host="198.18.0.2", protocol="sctp")
