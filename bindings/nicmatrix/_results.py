"""Results files as pandas DataFrames, and compare. The file is read by the C++ reader; the figures a sweep
summarizes (run_metrics) and the matching of cells in compare come from the C++ core too, so these tables
show the numbers `nicmatrix report` and `nicmatrix compare` show."""
import math
import os

import pandas as pd

from . import _nicmatrix

# Per-run figures taken as they are from a run (`nicmatrix run --json` keys): column -> path in the run.
# Units are in the names: bits/s (_bps), per second (_per_s), seconds (_s), percent (_pct).
RUN_COLUMNS = [
    ("bytes", ("bytes",)),
    ("packets", ("packets",)),
    ("duration_s", ("duration_s",)),
    ("cpu_sender_user_s", ("cpu", "sender", "user_s")),
    ("cpu_sender_sys_s", ("cpu", "sender", "sys_s")),
    ("cpu_receiver_user_s", ("cpu", "receiver", "user_s")),
    ("cpu_receiver_sys_s", ("cpu", "receiver", "sys_s")),
    *[(f"system_{end}_{f}_pct", ("cpu", "system", end, f"{f}_pct"))
      for end in ("sender", "receiver") for f in ("busy", "user", "sys", "irq", "softirq", "steal")],
    *[(f"system_{end}_{f}", ("cpu", "system", end, f))
      for end in ("sender", "receiver") for f in ("busiest_cpu", "busiest_cpu_busy_pct", "busy_cpu_s")],
    ("loss_sent", ("loss", "sent")),
    ("loss_received", ("loss", "received")),
    ("loss_lost", ("loss", "lost")),
    ("loss_duplicates", ("loss", "duplicates")),
    ("loss_reordered", ("loss", "reordered")),
    ("loss_jitter_ms", ("loss", "jitter_ms")),
    ("io_calls", ("io_calls",)),
    ("calls_per_s", ("calls_per_s",)),
    ("ms_per_call", ("ms_per_call",)),
    ("socket_write_size", ("socket", "write_size")),
    *[(f"napi_{end}_{f}", ("napi", end, f))
      for end in ("sender", "receiver") for f in ("processed", "dropped", "time_squeeze", "interrupts")],
    ("nic_receiver_rx_bytes", ("nic", "receiver", "rx_bytes_delta")),
    ("nic_receiver_rx_packets", ("nic", "receiver", "rx_packets_delta")),
    ("background_busy_pct", ("background", "busy_pct")),
    ("background_steal_pct", ("background", "steal_pct")),
    ("background_waited_s", ("background", "waited_s")),
]

# The tuning axes a sweep may have (the C++ kTuningAxes, in the same order).
TUNING_AXES = ("channels", "rings", "coalesce", "rps", "xps", "irq_affinity", "napi", "sysctl", "qdisc")

# The test's fields as setting columns (the traffic entry of the cell's params): column, JSON key, from the
# C++ field table (core/traffic/test_spec_fields.hpp) in its order.
TEST_COLUMNS = [(f["column"], f["key"]) for f in _nicmatrix.test_spec_fields() if f["column"]]

# The columns of an RFC 2544 frame-size row (Results.frames): column, path in the row of `rfc2544.rows[]`.
FRAME_COLUMNS = [
    ("frame", ("frame",)), ("mean_frame_bytes", ("mean_frame_bytes",)), ("found", ("found",)),
    ("throughput_fps", ("throughput_fps",)), ("layer2_bps", ("layer2_bps",)), ("line_rate_fps", ("line_rate_fps",)),
    ("line_rate_pct", ("line_rate_pct",)), ("loss_pct", ("loss_pct",)), ("confirmed", ("confirmed",)),
    ("confirmation_loss_pct", ("confirmation", "loss_pct")), ("trials", ("trials",)),
    ("generator_limited", ("generator_limited",)), ("generator_max_fps", ("generator_max_fps",)),
    ("cpu_sender_pct", ("cpu", "sender_pct")), ("cpu_receiver_pct", ("cpu", "receiver_pct")),
    ("softirq_pct", ("cpu", "softirq_pct")), ("irq_pct", ("cpu", "irq_pct")), ("frame_error", ("error",)),
]

SUMMARY_STATS = ("n", "median", "median_ci_low", "median_ci_high", "median_ci_confidence", "mean", "stddev", "min", "max", "ci95")

# The columns of a comparison row, as `nicmatrix compare --format json` writes them.
COMPARE_COLUMNS = ("ratio", "ratio_ci_low", "ratio_ci_high", "ratio_ci_confidence", "verdict", "significant", "why",
                   "p_value", "p_adjusted", "equivalent", "equivalence_p_value", "equivalence_p_adjusted", "verdict_unadjusted")


def check_metric(metric):
    """Raises Error unless `metric` is one the C++ core summarizes (the CLI's --metric message), or a
    kernel profile's cpu:<category> (cpu:sender:<category>, cpu:receiver:<category>)."""
    known = list(_nicmatrix.known_metrics())
    if metric not in known and not _nicmatrix.is_profile_metric(metric):
        raise _nicmatrix.Error(f"--metric {metric}: expected one of {', '.join(known)}, "
                               f"cpu:<category> (a sweep with \"profile\": true)")


def profile_column(metric):
    """The DataFrame column of a profile metric: cpu:copy -> cpu_copy_pct, cpu:sender:gro -> cpu_sender_gro_pct."""
    return metric.replace(":", "_") + "_pct"


def _profile_metrics(cells):
    """The profile metrics the cells' summaries have, in first-seen order."""
    found = {}
    for cell in cells:
        for name in cell.get("summary", {}):
            if _nicmatrix.is_profile_metric(name):
                found[name] = True
    return list(found)


def label_settings(summary):
    """The settings a matrix can label its rows and columns with, in order: the offload profile, the MTU and
    every tuning axis the file's sweep has (its value names: "ch2", "rps-all")."""
    return ["profile", "mtu"] + [a for a in TUNING_AXES if a in summary.columns and summary[a].notna().any()]


def check_labels(summary, names, flag):
    """Raises Error naming `flag` unless every name is one of label_settings(summary)."""
    known = label_settings(summary)
    for name in names:
        if name not in known:
            raise _nicmatrix.Error(f"{flag} {name}: expected one of {', '.join(known)} (the settings this file's sweep has)")


def require_metric(summary, metric):
    """Raises Error when no cell of a summary DataFrame has `metric` (a profile metric of an unprofiled file)."""
    if f"{metric}_median" not in summary or summary[f"{metric}_median"].isna().all():
        raise _nicmatrix.Error(f"--metric {metric}: no cell has this metric"
                               + ("; sweep with \"profile\": true" if _nicmatrix.is_profile_metric(metric) else ""))


def _dig(value, path):
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return math.nan
        value = value[key]
    return value


class Results:
    """A results file (nicmatrix/results/v1) as the C++ reader decoded it.

    `data` is the file as a dict, `path` where it came from (or was written), `config` the sweep config,
    `cells` the cells in the config's order."""

    def __init__(self, native, path=None):
        self._native = native
        self.path = os.fspath(path) if path is not None else None
        self.data = native.to_dict()

    @property
    def cells(self):
        return self.data["cells"]

    @property
    def config(self):
        return self.data["run"]["config"]

    def __len__(self):
        return len(self.cells)

    def __repr__(self):
        statuses = {}
        for c in self.cells:
            statuses[c["status"]] = statuses.get(c["status"], 0) + 1
        return f"<nicmatrix.Results {self.path or ''} {self.config['name']}: {len(self)} cells {statuses}>"

    def _settings(self, cell):
        params = cell["params"]
        row = {
            "key": cell["key"],
            "profile": params["offloads"],
            "traffic": params["traffic"],
            "mtu": params["mtu"],
        }
        test = params.get("test", {})
        for column, field in TEST_COLUMNS:
            row[column] = test.get(field)
        row["status"] = cell["status"]
        row["error"] = cell["error"]
        row["duplicate_of"] = cell.get("duplicate_of")
        row["overhead_s"] = cell.get("overhead_s", math.nan)
        row["repetitions_run"] = cell.get("repetitions_run", len(cell.get("runs", [])))
        row["precision_met"] = cell.get("precision_met")
        for name, wanted in sorted(params.get("features_requested", {}).items()):
            row[f"requested:{name}"] = wanted
        # The tuning axes' value names, as labels (rps = "rps-all"), like profile for the offloads.
        for axis in TUNING_AXES:
            if axis in params:
                row[axis] = params[axis]
        for end in ("local", "remote"):
            applied = cell.get("applied", {}).get(end)
            row[f"mtu_{end}"] = applied["mtu"] if applied else math.nan
            for name, active in sorted((applied or {}).get("features", {}).items()):
                row[f"{end}:{name}"] = active
            # The effective tuning read back: `local:channels.rx`, `local:rps.rx-0`, `local:qdisc`.
            for kind in TUNING_AXES:
                value = (applied or {}).get(kind)
                if kind == "qdisc" and isinstance(value, dict):
                    row[f"{end}:qdisc"] = value.get("kind")
                elif isinstance(value, dict):
                    for k, v in sorted(value.items()):
                        row[f"{end}:{kind}.{k}"] = v
        return row

    def to_dataframe(self):
        """A tidy DataFrame: one row per cell x repetition, in the file's order.

        Settings: key, profile, traffic, mtu, the test's fields (protocol, direction, streams, threads,
        write_size, window, test_bytes, target_rate_bps, target_rate_pps, udp_gso, udp_gro), status, error,
        duplicate_of, overhead_s, repetitions_run, precision_met (None when no precision was asked),
        `requested:<name>` for each feature the profile names, the value name of every tuning axis the sweep
        has (channels, rings, coalesce, rps, xps, irq_affinity, napi, sysctl, qdisc), and what each end really
        had: mtu_local, mtu_remote, `local:<kernel feature>`, `remote:<kernel feature>`, and the tuning read
        back: `local:channels.rx`, `local:rps.rx-0`, `local:sysctl.net.ipv4.tcp_congestion_control`,
        `local:qdisc` (its kind). Per run: started (UTC, when the sweep started it), disturbed (measured under
        interference; None before the sweep sampled load), packets_source ("interface", "estimate" or
        "datagrams"), placement_sender and placement_receiver (the CPUs the engine threads ran on, "0,1"; None
        in files written before it was recorded), socket_write_size (bytes per send() of the TCP stream
        senders, `socket.write_size`: whole send units unless the test's write_size fixed it; 0 for UDP and
        request/response, NaN in files written before it).
        Measurements (numeric, NaN where a cell has none): the sweep's metrics (throughput_bps,
        packets_per_s, segments_per_packet, cpu_sender_pct, cpu_receiver_pct (the engines' own threads),
        system_busy_pct, softirq_pct, busiest_cpu_busy_pct, tcp_retransmits, loss_pct,
        engine_service_demand_us_per_kb, sender_service_demand_us_per_kb and
        receiver_service_demand_us_per_kb (netperf's, per host), link_down_s and settle_s (on the first run
        after each of the sweep's changes: how long a link was down and how long the sweep waited before
        measuring; NaN on the visit's other runs), computed by the C++ core as for the summaries) and the run's raw figures (bytes, duration_s, cpu_sender_user_s, cpu_sender_sys_s,
        system_receiver_softirq_pct, system_sender_busiest_cpu, system_sender_busiest_cpu_busy_pct,
        system_sender_steal_pct, loss_lost, napi_receiver_processed, background_busy_pct, ...). With a kernel
        profile ("profile": true), `cpu_<category>_pct` per category (the share of sampled CPU time of the
        run's host; both hosts pooled when the ends are on two) and, for two hosts, `cpu_sender_<category>_pct`
        and `cpu_receiver_<category>_pct`. A cell without runs (duplicate, infeasible, blackhole,
        failed before measuring) is one row with repetition NaN: no cell is dropped."""
        metrics = self._native.run_metrics()
        metric_names = list(_nicmatrix.known_metrics())
        profile_names = _profile_metrics(self.cells)
        rows = []
        for cell, cell_metrics in zip(self.cells, metrics):
            settings = self._settings(cell)
            if not cell["runs"]:
                row = dict(settings, repetition=math.nan, run_status=None, run_error=None, started=None, disturbed=None,
                           packets_source=None, placement_sender=None, placement_receiver=None)
                row.update({m: math.nan for m in metric_names})
                row.update({c: math.nan for c, _ in RUN_COLUMNS})
                row.update({profile_column(m): math.nan for m in profile_names})
                rows.append(row)
                continue
            for number, (run, figures) in enumerate(zip(cell["runs"], cell_metrics), start=1):
                row = dict(settings, repetition=number, run_status=run.get("status"), run_error=run.get("error"),
                           started=run.get("started"), disturbed=run.get("disturbed"))
                row.update({m: figures.get(m, math.nan) for m in metric_names})
                row.update({c: _dig(run, path) for c, path in RUN_COLUMNS})
                row.update({profile_column(m): figures.get(m, math.nan) for m in profile_names})
                row["packets_source"] = run.get("packets_source") or None   # "" in files written before it
                for end in ("sender", "receiver"):
                    cpus = run.get("placement", {}).get(end)
                    row[f"placement_{end}"] = ",".join(str(c) for c in cpus) if cpus else None
                rows.append(row)
        df = pd.DataFrame(rows)
        numeric = (metric_names + [c for c, _ in RUN_COLUMNS] + [profile_column(m) for m in profile_names]
                   + ["repetition", "overhead_s", "mtu_local", "mtu_remote", "repetitions_run"])
        for column in numeric:
            if column in df:
                df[column] = pd.to_numeric(df[column], errors="coerce")
        return df

    def summary(self):
        """One row per cell: the settings (as in to_dataframe) and, per metric of the cell's summary,
        `<metric>_<stat>` for stat in n, median, median_ci_low, median_ci_high, median_ci_confidence (the
        median's order-statistic interval and its exact coverage in percent), mean, stddev, min, max, ci95
        (half-width of the mean's 95% t interval), as the sweep computed them; NaN for a cell that was not
        measured, and for the median's interval in files written before it was recorded or with one run. A
        profiled file also has them for every cpu:<category> metric (columns `cpu:copy_median`, ...)."""
        metric_names = list(_nicmatrix.known_metrics()) + _profile_metrics(self.cells)
        rows = []
        for cell in self.cells:
            row = self._settings(cell)
            summary = cell.get("summary", {})
            for metric in metric_names:
                for stat in SUMMARY_STATS:
                    value = summary.get(metric, {}).get(stat)
                    row[f"{metric}_{stat}"] = math.nan if value is None else value
            rows.append(row)
        df = pd.DataFrame(rows)
        for metric in metric_names:
            for stat in SUMMARY_STATS:
                df[f"{metric}_{stat}"] = pd.to_numeric(df[f"{metric}_{stat}"], errors="coerce")
        return df

    def frames(self):
        """The RFC 2544 frame-size tables as one DataFrame: a row per rfc2544 cell x frame size, in the
        file's order (the rows `nicmatrix report` prints). Settings as in to_dataframe (key, profile, mtu,
        status, ...), the table's line_rate_bps and line_rate_source ("link" or "configured"), then per
        frame size: frame ("64", ..., "imix"), mean_frame_bytes, found (some trial passed), throughput_fps
        (the highest passing rate, as sent), layer2_bps, line_rate_fps, line_rate_pct, loss_pct (of the
        trial the throughput comes from), confirmed and confirmation_loss_pct (the final trial at that
        rate), trials (search trials, the confirmation not counted), generator_limited and
        generator_max_fps (the generator could not send the offered rate: the figure is the generator's,
        not the device's), cpu_sender_pct and cpu_receiver_pct (the engines, % of one core, at the reported
        rate), softirq_pct and irq_pct (the receiver's side, system-wide, % of all cores), frame_error (why
        the row has no figures, "" otherwise). An rfc2544 cell that was not measured is one row with frame
        None; a file without rfc2544 cells gives an empty DataFrame with these columns."""
        columns = [c for c, _ in FRAME_COLUMNS]
        rows = []
        for cell in self.cells:
            if cell["params"].get("test", {}).get("test") != "rfc2544":
                continue
            settings = self._settings(cell)
            table = cell.get("rfc2544") or {}
            settings["line_rate_bps"] = table.get("line_rate_bps", math.nan)
            settings["line_rate_source"] = table.get("line_rate_source")
            frame_rows = table.get("rows") or [None]
            for frame_row in frame_rows:
                row = dict(settings)
                row.update({c: (None if frame_row is None else _dig(frame_row, path)) for c, path in FRAME_COLUMNS})
                rows.append(row)
        df = pd.DataFrame(rows, columns=None if rows else ["key", "status", "line_rate_bps", "line_rate_source"] + columns)
        words = {"frame", "found", "confirmed", "generator_limited", "frame_error"}   # the rest are figures
        for column in [c for c in columns if c not in words] + ["line_rate_bps", "mtu"]:
            if column in df:
                df[column] = pd.to_numeric(df[column], errors="coerce")
        return df

    def default_metric(self):
        """What report, matrix, compare and against show when no metric is given, as `nicmatrix report`:
        "rr_transactions_per_s" when every cell (frame-size tables aside) is a request/response test,
        "throughput_bps" otherwise."""
        return _nicmatrix.default_metric(self._native)

    def matrix(self, metric=None):
        """The matrix as `nicmatrix report` builds it, as a DataFrame: rows (profile, every tuning axis the
        sweep has, traffic), columns MTU, values the cell's median of `metric` (default: default_metric()),
        or NaN where the cell has no figure (see status_matrix)."""
        metric = metric or self.default_metric()
        check_metric(metric)
        s = self.summary()
        require_metric(s, metric)
        column = f"{metric}_median"
        index = [n for n in label_settings(s) if n != "mtu"] + ["traffic"]
        return s.pivot_table(index=index, columns="mtu", values=column, aggfunc="first", sort=False)

    def status_matrix(self):
        """Rows (profile, traffic), columns MTU: each cell's status."""
        s = self.summary()
        return s.pivot_table(index=["profile", "traffic"], columns="mtu", values="status", aggfunc="first", sort=False)

    def report(self, metric=None, format="table"):
        """The text `nicmatrix report` prints (format "table", "md" or "csv"; metric: default_metric())."""
        return _nicmatrix.render_matrix(self._native, metric or self.default_metric(), format)


def _as_results(value):
    if isinstance(value, Results):
        return value
    path = os.fspath(value)
    return Results(_nicmatrix.load_results(path), path)


def _comparison_frame(c, ra, rb):
    rows = []
    for r in c["rows"]:
        row = {k: r[k] for k in ("profile", "traffic", "mtu", "key_a", "key_b", "status_a", "status_b")}
        row["features_requested"] = r["features_requested"]
        row["test"] = r["test"]
        for side in ("a", "b"):
            summary = r[side] or {}
            for stat in SUMMARY_STATS:
                value = summary.get(stat)
                row[f"{side}_{stat}"] = math.nan if value is None else value
        for column in COMPARE_COLUMNS:
            row[column] = r[column]
        row["in_both"] = True
        rows.append(row)
    for side, keys, results in (("a", c["only_a"], ra), ("b", c["only_b"], rb)):
        by_key = {cell["key"]: cell for cell in results.cells} if results is not None else {}
        for key in keys:
            cell = by_key.get(key, {"params": {}, "status": None})
            params = cell["params"]
            rows.append({"profile": params.get("offloads"), "traffic": params.get("traffic"), "mtu": params.get("mtu"),
                         f"key_{side}": key, f"status_{side}": cell["status"], "ratio": math.nan, "verdict": "not_testable",
                         "verdict_unadjusted": "not_testable", "significant": False, "equivalent": False, "in_both": False})
    columns = (["profile", "traffic", "mtu", "key_a", "key_b", "status_a", "status_b", "features_requested", "test"]
               + [f"{side}_{stat}" for side in ("a", "b") for stat in SUMMARY_STATS] + list(COMPARE_COLUMNS) + ["in_both"])
    df = pd.DataFrame(rows, columns=columns)
    for column in [f"{side}_{stat}" for side in ("a", "b") for stat in SUMMARY_STATS] + ["ratio", "ratio_ci_low", "ratio_ci_high",
                                                                                      "ratio_ci_confidence", "p_value", "p_adjusted",
                                                                                      "equivalence_p_value", "equivalence_p_adjusted"]:
        df[column] = pd.to_numeric(df[column], errors="coerce")
    df["significant"] = df["significant"].fillna(False).astype(bool)
    df["equivalent"] = df["equivalent"].fillna(False).astype(bool)
    df.attrs.update(metric=c["metric"], confidence=c["confidence"], method=c["method"], only_a=list(c["only_a"]),
                    only_b=list(c["only_b"]), label_a=c["a"], label_b=c["b"], reference=c["reference"],
                    adjustment=c["adjustment"], tested_cells=c["tested_cells"], margin_pct=c["margin_pct"])
    return df


def compare(a, b, metric=None, text=False, format="table", confidence=95, adjust="holm", margin=None):
    """Two results files (paths or Results) cell by cell, as `nicmatrix compare A B` does: cells matched by
    their settings (requested features, MTU and the test's fields), by the C++ core, which also computes
    every figure here (the same code as `nicmatrix compare --format json`, so the two cannot disagree).

    Returns a DataFrame, one row per cell of A found in B (in A's order): profile, traffic, mtu, key_a,
    key_b, status_a, status_b, features_requested and test (the matched settings), a_<stat> and b_<stat>
    for the metric's n, median, median_ci_low, median_ci_high, median_ci_confidence, mean, stddev, min,
    max, ci95; ratio (median B / median A; NaN when either has no figure), ratio_ci_low, ratio_ci_high
    (the `confidence`% Hodges-Lehmann/Mann-Whitney interval of B/A on log values), ratio_ci_confidence (its
    exact coverage, percent), verdict (adjusted: "significant", "not_significant", "too_few", "not_testable",
    "equivalent"), verdict_unadjusted (the interval's own), p_value (the exact two-sided Mann-Whitney
    p-value), p_adjusted (adjusted over the tested cells by `adjust`: "holm" by default, "bh"
    Benjamini-Hochberg, "none"), significant (p_adjusted <= 1 - confidence/100; never with too few
    repetitions), with `margin` (percent) equivalence_p_value, equivalence_p_adjusted (two one-sided tests
    that B/A lies in [1 - margin, 1 + margin]) and equivalent, and why. Cells found in one file only
    follow, with in_both False. df.attrs holds metric, confidence, method, adjustment, tested_cells,
    margin_pct, only_a and only_b. text=True returns `nicmatrix compare`'s text instead (format table,
    md, csv or json). metric: default A's default_metric(), as `nicmatrix compare`."""
    ra, rb = _as_results(a), _as_results(b)
    metric = metric or ra.default_metric()
    label_a, label_b = ra.path or "A", rb.path or "B"
    if text:
        return _nicmatrix.render_comparison(ra._native, rb._native, metric, label_a, label_b, format, float(confidence), adjust,
                                            None if margin is None else float(margin))
    c = _nicmatrix.compare(ra._native, rb._native, metric, label_a, label_b, float(confidence), adjust,
                           None if margin is None else float(margin))
    return _comparison_frame(c, ra, rb)


def against(results, reference, metric=None, text=False, format="table", confidence=95, adjust="holm", margin=None):
    """Every cell of one results file against the cell of the `reference` offload profile at the same MTU
    and traffic, as `nicmatrix report FILE --against REFERENCE` does (A = the reference cell, B = the
    cell). The same columns as compare(); text=True returns the report's text. metric: default
    default_metric()."""
    r = _as_results(results)
    metric = metric or r.default_metric()
    label = r.path or "results"
    if text:
        return _nicmatrix.render_against(r._native, metric, reference, label, format, float(confidence), adjust,
                                         None if margin is None else float(margin))
    c = _nicmatrix.compare_to_profile(r._native, metric, reference, label, float(confidence), adjust,
                                      None if margin is None else float(margin))
    return _comparison_frame(c, r, r)
