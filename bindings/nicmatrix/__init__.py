"""nicmatrix: what NIC offloads and MTU buy, in throughput and CPU, from Python.

    import nicmatrix as nm
    res = nm.load("results/offload-mtu-lab.json")
    df = res.to_dataframe()          # one row per cell x repetition
    nm.compare(a, b)                 # the cells of two files matched by their settings, B/A with its interval
    nm.against(res, "all-off")       # every cell against the all-off cell at the same MTU and traffic
    nm.sweep("configs/offload-mtu.json", lab=True)

Reading, sweeping, running and comparing all go through the C++ core (the module _nicmatrix), so Python
and `nicmatrix` agree on the results schema, on what a sweep does and on how cells are matched. Errors
from the core are raised as nicmatrix.Error with its message.
"""
import inspect as _inspect
import json as _json
import os as _os
import shlex as _shlex
import signal as _signal
import sys as _sys
import tempfile as _tempfile
import threading as _threading

try:
    from . import _nicmatrix
except ImportError as _e:
    _here = _os.path.dirname(__file__)
    if any(f.startswith("_nicmatrix.") for f in _os.listdir(_here)):
        raise ImportError(f"nicmatrix: the compiled module _nicmatrix in {_here} does not load: {_e}",
                          name="nicmatrix._nicmatrix", path=_here) from _e
    # A build tree where only the executable was built has the package's .py files (copied at configure
    # time) but not the compiled module: say how to get it, not "partially initialized module".
    raise ImportError(
        f"nicmatrix: the compiled module _nicmatrix is missing from {_here}; build it with "
        "`cmake --build build --target _nicmatrix` (or `bash scripts/build.sh`) and use PYTHONPATH=build/python, "
        "or install the package (bash scripts/package.sh, then apt-get install ./dist/nicmatrix_*.deb)",
        name="nicmatrix._nicmatrix", path=_here) from None
try:
    import pandas as _pandas  # noqa: F401 (the DataFrames need it; say which Debian package has it)
except ImportError as _e:
    raise ImportError(f"nicmatrix needs pandas ({_e}): apt-get install python3-pandas", name="pandas") from _e
from ._nicmatrix import Error
from ._results import Results, against, compare

__version__ = _nicmatrix.__version__
# The source commit the module was built from (git describe --always --dirty), "" outside a git checkout.
__commit__ = _nicmatrix.__commit__

__all__ = ["Error", "Results", "__commit__", "__version__", "against", "compare", "known_metrics", "lab", "load", "run", "sweep"]


def lab(name="nmlab"):
    """The built-in lab NAME as a dict (namespaces, interfaces, addresses); raises Error if it is not up."""
    return _json.loads(_nicmatrix.lab_describe_json(name))


def load(path):
    """Reads a results file (nicmatrix/results/v1) through the C++ reader and returns a Results object.

    Raises Error naming the file and what is wrong (missing file, not JSON, another schema version, a
    missing or malformed field)."""
    path = _os.fspath(path)
    return Results(_nicmatrix.load_results(path), path)


def known_metrics():
    """The metric names summaries, report, compare and the plots know (throughput_bps, ...)."""
    return list(_nicmatrix.known_metrics())


def sweep(config, lab=False, iface=None, peer=None, port=None, output=None, resume=None, lab_name=None,
          topology="pair", journal=None, progress=None, precision=None, time_budget=None, seed=None,
          ip_version=None, peer_iface=None, key_file=None, profile_categories=None, lab_from=None, peer_kind=None):
    """Runs a sweep through the C++ engine, exactly as `nicmatrix sweep` does, and returns its Results.

    config: a sweep config file (path) or the config itself as a dict (written to a temporary file).
    lab=True runs on a lab of its own (taken down afterwards); else iface= (local interface) and peer=
    (an IPv4 or IPv6 address or a name of a host running `nicmatrix serve`). ip_version: 4 or 6, as
    `sweep -4`/`-6` (the lab's IPv6 addresses; which of a peer name's addresses). peer_iface and
    key_file: as --peer-iface and --key-file (the keyed two-machine sweep). output: the results file (default
    nicmatrix-results/<config name>-<UTC stamp>.json in the current directory); resume: a results file to complete. precision: as `sweep
    --precision PCT` (the config's precision.ci_pct); time_budget: as --time-budget (seconds, or "15m");
    seed: as --seed (the shuffled order's). progress: a callable given one dict per event ({"event":
    "cell_start"|"cell_done"|"note", "number", "total", "key", "round", "repetition", "final", "status",
    "cell", ...}; one cell_start and one cell_done per visit of a cell); an exception in it stops the
    sweep and is raised. profile_categories: the category table of a config with "profile": true
    (default: the shipped configs/profile-categories.json). lab_from: with lab=True, as `sweep --lab-from FILE`:
    run on the existing lab that file describes (as `nicmatrix lab show --json` prints), left in place.
    peer_kind: as --peer-kind, "nicmatrix" (the default) or "iperf3" (a stock `iperf3 -s` on the far end,
    port 5201 unless port= says otherwise).

    Needs CAP_NET_ADMIN. The GIL is released while the sweep runs. Ctrl-C (KeyboardInterrupt) stops the
    sweep through its normal path: the interfaces are restored, the file keeps every finished cell (resume
    it with resume=), then KeyboardInterrupt is raised. SIGTERM and SIGHUP (unless SIGHUP is ignored, as
    under nohup) stop it the same way when sweep() runs in the main thread; once the interfaces are
    restored, the signal is delivered again to the handler that was there before (the default one ends
    the process, as the signal asked). A second signal never cuts the restore short. Raises Error for a
    bad config (naming the field) or request, before anything is changed."""
    with _tempfile.TemporaryDirectory(prefix="nicmatrix-") as tmp:
        if isinstance(config, dict):
            config_file = _os.path.join(tmp, f"{config.get('name', 'sweep')}.json")
            with open(config_file, "w") as f:
                _json.dump(config, f)
        else:
            config_file = _os.fspath(config)
        request = {
            "config_file": config_file, "lab": bool(lab), "iface": iface, "peer": peer, "port": port,
            "ip_version": ip_version, "peer_iface": peer_iface, "peer_kind": peer_kind,
            "key_file": _os.fspath(key_file) if key_file is not None else None,
            "output": _os.fspath(output) if output is not None else None,
            "resume": _os.fspath(resume) if resume is not None else None,
            "lab_name": lab_name, "topology": topology, "journal": journal,
            "lab_from": _os.fspath(lab_from) if lab_from is not None else None,
            "profile_categories": _os.fspath(profile_categories) if profile_categories is not None else None,
            "precision": precision, "seed": seed, "time_budget": None if time_budget is None else str(time_budget),
            "command": " ".join(_shlex.quote(a) for a in [_sys.executable, *_sys.argv]) + " (nicmatrix.sweep)",
        }
        received = None
        try:
            with _StopOnSignals():
                results, path, _interrupted = _nicmatrix.sweep(request, progress)
        except _SignalStop as stop:
            received = stop.signum
    if received is not None:
        # The sweep has restored and saved; now the signal does what it was sent for.
        _signal.raise_signal(received)
        raise Error(f"sweep stopped by {_signal.Signals(received).name}; the interfaces were restored")
    return Results(results, path)


class _SignalStop(BaseException):
    """Raised by the SIGTERM/SIGHUP handlers sweep() installs: makes the C++ sweep stop through its normal
    path (like KeyboardInterrupt for Ctrl-C)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class _StopOnSignals:
    """While a sweep runs: SIGTERM and SIGHUP raise _SignalStop (which stops it) instead of ending the
    process at once with the interfaces changed. The previous handlers are put back afterwards. Only the
    main thread can set handlers; elsewhere nothing changes. SIGHUP ignored (nohup) stays ignored."""

    def __init__(self):
        self._old = {}

    def __enter__(self):
        if _threading.current_thread() is not _threading.main_thread():
            return self
        for signum in (_signal.SIGTERM, _signal.SIGHUP):
            old = _signal.getsignal(signum)
            if old is _signal.SIG_IGN:
                continue
            self._old[signum] = old
            _signal.signal(signum, self._handler)
        return self

    def _handler(self, signum, _frame):
        raise _SignalStop(signum)

    def __exit__(self, *exc):
        for signum, old in self._old.items():
            _signal.signal(signum, old if old is not None else _signal.SIG_DFL)
        return False


def run(host, *, key_file=None, peer_kind=None, **spec):
    """One test against a `nicmatrix serve` through the C++ engine (TrafficClient), like `nicmatrix run`.

    Keywords are TestSpec's JSON fields (the C++ field table, _nicmatrix.test_spec_fields()), `nicmatrix run`'s
    flags by their JSON names: protocol "tcp"|"udp", direction
    "forward"|"reverse"|"bidir", streams (-P), write_size (-l, bytes; the UDP payload; TCP without it: whole
    send units, the result's socket.write_size), window (-w, bytes), duration_s (-t), bytes (-n), omit_s,
    rate_bps (-b), rate_pps (--pps), udp_gso, udp_gro;
    a request/response test with test="rr" (--rr), connect_per_transaction=True (--crr), request_size,
    response_size (--rr-size), burst (--rr-burst); the socket knobs congestion (-C), nodelay (-N), mss
    (-M), dscp (--dscp, 0..63), zerocopy (-Z), skip_rx_copy, bind_dev, rx_spin_us (--rx-spin); profile
    (--profile: the kernel profile of the window, in the result's cpu_profile), profile_hz,
    profile_categories (a table file);
    affinity (-A) as {"client": [cpus], "server": [cpus]}; key_file (--key-file, default $NICMATRIX_KEY_FILE);
    peer_kind (--peer-kind): "nicmatrix" (the default) or "iperf3" for a stock `iperf3 -s` (TCP streams, port
    5201 unless given; the server's own figures are in the result's "peer").
    Returns the result as a dict, keyed as `nicmatrix run --json` prints it (throughput_bps, cpu, ...).
    Runs in the caller's network namespace with the GIL released. Raises Error for bad input or an
    unreachable server; Ctrl-C ends the run and raises KeyboardInterrupt."""
    unknown = [k for k in spec if k not in _TEST_SPEC_KEYS]
    if unknown:
        raise TypeError(f"run() got an unexpected keyword argument '{unknown[0]}'")
    spec = {k: v for k, v in spec.items() if v is not None}
    spec["host"] = host
    if "profile_categories" in spec:
        spec["profile_categories"] = _os.fspath(spec["profile_categories"])
    return _nicmatrix.run(spec, _os.fspath(key_file) if key_file is not None else "", peer_kind or "nicmatrix")


# run()'s keywords, read from the field table: its signature shows them (help(), inspect, editors).
_TEST_SPEC_KEYS = [f["key"] for f in _nicmatrix.test_spec_fields() if f["key"] != "host"]
run.__signature__ = _inspect.Signature(
    [_inspect.Parameter("host", _inspect.Parameter.POSITIONAL_OR_KEYWORD)] +
    [_inspect.Parameter(k, _inspect.Parameter.KEYWORD_ONLY, default=None) for k in _TEST_SPEC_KEYS + ["key_file", "peer_kind"]])
