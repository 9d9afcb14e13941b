"""Plots of results files (matplotlib): a heatmap of a metric over offload profile x MTU, throughput against
CPU per cell, two results files side by side, the per-interval samples of chosen cells over time, the
repetitions of each cell as box plots, CDFs of per-interval throughput or of request/response latency, and
the kernel profile's breakdown stacked per cell. Each function returns a matplotlib Figure (made without
pyplot, so it works under any backend and in threads); save it with `save(fig, "out.png")`.

The command line is this module: `python3 -m nicmatrix.plot FILE [FILE2] -o out.png
[--kind heatmap|scatter|bars|timeseries|box|cdf|breakdown] [--metric M] [--cells KEY,...] [--of intervals|latency]
[--end sender|receiver]`; `nicmatrix plot ...` runs it.
"""
import argparse
import fnmatch
import json
import math
import os
import statistics
import sys

try:
    from matplotlib.figure import Figure
except ImportError as _e:
    raise ImportError(f"nicmatrix.plot needs matplotlib ({_e}): apt-get install python3-matplotlib",
                      name="matplotlib") from _e

from . import _nicmatrix
from ._results import Results, _as_results, check_labels, check_metric, compare, label_settings, require_metric

KINDS = ("heatmap", "scatter", "bars", "timeseries", "box", "cdf", "breakdown")
# What timeseries and cdf --of intervals draw: the runs' intervals (runs[].intervals), or the request/response
# intervals (runs[].rr.intervals, by request time) for rr_transactions_per_s.
INTERVAL_METRICS = ("throughput_bps", "packets_per_s", "rr_transactions_per_s")


def _human(metric, value):
    return _nicmatrix.format_metric(metric, value)


def _axis(metric):
    """(divisor, axis label) for a metric: bits/s are shown in Gbit/s, the rest as they are."""
    if metric.endswith("_bps"):
        return 1e9, f"{metric} (Gbit/s)"
    return 1.0, metric


def heatmap(results, metric=None, rows=None, columns="mtu"):
    """One panel per traffic pattern: a row per combination of the `rows` settings (default the offload
    profile and every tuning axis the sweep has, so no two cells share a square), a column per value of
    `columns` (default mtu); colour and label the cell's median of `metric` with the interval of that median
    below it (as the file records it), "?" after a median whose cell did not reach the asked precision; a
    cell without a figure shows its status (duplicate, infeasible, ...). Rows and columns are any of
    profile, mtu and the tuning axes (channels, rps, ...); together they must name every setting the sweep
    varies. metric: default the file's default_metric(), as `nicmatrix report`."""
    res = _as_results(results)
    metric = metric or res.default_metric()
    check_metric(metric)
    s = res.summary()
    require_metric(s, metric)
    if rows is None:
        rows = [n for n in label_settings(s) if n != columns]
    rows = [rows] if isinstance(rows, str) else list(rows)
    check_labels(s, rows, "--rows")
    check_labels(s, [columns], "--columns")
    varied = [n for n in label_settings(s) if s[n].nunique() > 1]
    missing = [n for n in varied if n not in rows and n != columns]
    if missing:
        raise _nicmatrix.Error(f"--rows {','.join(rows)} --columns {columns}: the sweep also varies {', '.join(missing)}; "
                               "name it in --rows (two cells would share a square)")
    s = s.copy()
    s["_row"] = s[rows].astype(str).agg(" / ".join, axis=1)
    traffics = list(dict.fromkeys(s["traffic"]))
    profiles = list(dict.fromkeys(s["_row"]))
    mtus = sorted(set(s[columns])) if columns == "mtu" else list(dict.fromkeys(s[columns]))
    fig = Figure(figsize=(1.8 + 1.6 * len(mtus), 1.2 + (0.6 * len(profiles) + 0.9) * max(1, len(traffics))),
                 layout="constrained")
    axes = fig.subplots(max(1, len(traffics)), 1, squeeze=False)[:, 0]
    values = s[f"{metric}_median"]
    finite = values[values.notna()]
    vmin, vmax = (finite.min(), finite.max()) if len(finite) else (0, 1)
    image = None
    for ax, traffic in zip(axes, traffics):
        grid = [[math.nan] * len(mtus) for _ in profiles]
        labels = [[""] * len(mtus) for _ in profiles]
        for _, row in s[s["traffic"] == traffic].iterrows():
            i, j = profiles.index(row["_row"]), mtus.index(row[columns])
            value = row[f"{metric}_median"]
            if row["status"] == "ok" and not math.isnan(value):
                grid[i][j] = value
                labels[i][j] = _human(metric, value) + (" ?" if row.get("precision_met") is False else "")
                lo, hi = row.get(f"{metric}_median_ci_low", math.nan), row.get(f"{metric}_median_ci_high", math.nan)
                if not (math.isnan(lo) or math.isnan(hi)):
                    labels[i][j] += f"\n[{_human(metric, lo)} .. {_human(metric, hi)}]"
            else:
                labels[i][j] = row["status"]
        image = ax.imshow(grid, cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(len(profiles)):
            for j in range(len(mtus)):
                if labels[i][j]:
                    dark = not math.isnan(grid[i][j]) and grid[i][j] < (vmin + vmax) / 2
                    ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=8, color="white" if dark else "black")
        ax.set_xticks(range(len(mtus)), [f"MTU {m}" if columns == "mtu" else str(m) for m in mtus])
        ax.set_ylabel(" / ".join(rows), fontsize=8)
        ax.set_yticks(range(len(profiles)), profiles)
        ax.set_title(f"{traffic}: median {metric}")
    if image is not None:
        fig.colorbar(image, ax=list(axes), label=_axis(metric)[1].replace("(Gbit/s)", "(bit/s)"))
    foot = "[..] = the distribution-free interval of the median over the cell's repetitions"
    if (s["precision_met"] == False).any():  # noqa: E712 (None means no precision was asked)
        foot += "; ? = the asked precision was not met"
    fig.suptitle(f"{res.config['name']} ({os.path.basename(res.path or '')})\n{foot}", fontsize=9)
    return fig


def scatter(results, metric=None, cpu="cpu_receiver_pct"):
    """Each measured cell as a point: x its median CPU (`cpu`, default the receiving engine's CPU in % of
    one core, where GRO and checksum offload show; system_busy_pct is the whole machine's), y its median
    `metric`, with the spread of the repetitions as error bars; one marker per offload profile, one colour
    per MTU. metric: default the file's default_metric()."""
    res = _as_results(results)
    metric = metric or res.default_metric()
    check_metric(metric)
    check_metric(cpu)
    s = res.summary()
    require_metric(s, metric)
    require_metric(s, cpu)
    s = s[(s["status"] == "ok") & s[f"{metric}_median"].notna() & s[f"{cpu}_median"].notna()]
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.subplots()
    markers = "os^Dv<>pPX*"
    mtus = sorted(set(s["mtu"]))
    colours = {m: f"C{k % 10}" for k, m in enumerate(mtus)}
    div, label = _axis(metric)
    for k, profile in enumerate(dict.fromkeys(s["profile"])):
        for mtu in mtus:
            part = s[(s["profile"] == profile) & (s["mtu"] == mtu)]
            if part.empty:
                continue
            y = part[f"{metric}_median"] / div
            ax.errorbar(part[f"{cpu}_median"], y,
                        yerr=[y - part[f"{metric}_min"] / div, part[f"{metric}_max"] / div - y],
                        fmt=markers[k % len(markers)], color=colours[mtu], label=f"{profile}, MTU {mtu}", capsize=3)
            for (_, row), yv in zip(part.iterrows(), y):
                ax.annotate(row["traffic"], (row[f"{cpu}_median"], yv), fontsize=7,
                            textcoords="offset points", xytext=(4, 4))
    ax.set_xlabel(f"median {cpu}")
    ax.set_ylabel(f"median {label}")
    ax.set_title(f"{res.config['name']}: {metric} against {cpu}, per cell")
    ax.grid(True, alpha=0.3)
    if len(s):
        ax.legend(fontsize=7, loc="best")
    return fig


def bars(a, b, metric=None):
    """Two results files side by side: for each cell found in both (matched as `nicmatrix compare` does),
    A's and B's median of `metric` with the range of their repetitions, and B/A above each pair (with a
    '*' where compare finds the difference beyond the spread). metric: default A's default_metric()."""
    ra, rb = _as_results(a), _as_results(b)
    metric = metric or ra.default_metric()
    check_metric(metric)
    df = compare(ra, rb, metric=metric)
    df = df[df["in_both"]].reset_index(drop=True)
    fig = Figure(figsize=(max(6.0, 0.7 * len(df) + 2), 5.5), layout="constrained")
    ax = fig.subplots()
    xs = list(range(len(df)))
    width = 0.4
    label_a = os.path.basename(ra.path or "A")
    label_b = os.path.basename(rb.path or "B")
    div, label = _axis(metric)
    for side, offset, name in (("a", -width / 2, label_a), ("b", width / 2, label_b)):
        median = df[f"{side}_median"].fillna(0) / div
        # The repetitions' range (min..max): with two or three runs a t-based interval says little.
        spread = [median - df[f"{side}_min"].fillna(0) / div, df[f"{side}_max"].fillna(0) / div - median]
        ax.bar([x + offset for x in xs], median, width, yerr=spread, label=name, capsize=2)
    for x, (_, row) in zip(xs, df.iterrows()):
        top = max(v for v in (row["a_median"], row["b_median"], 0) if not math.isnan(v)) / div
        text = f"{row['ratio']:.2f}{'*' if row['significant'] else ''}" if not math.isnan(row["ratio"]) else (row["status_b"] if row["status_a"] == "ok" else row["status_a"])
        ax.annotate(text, (x, top), ha="center", va="bottom", fontsize=7, textcoords="offset points", xytext=(0, 3))
    ax.set_xticks(xs, [f"{r.profile}\nMTU {r.mtu}\n{r.traffic}" for r in df.itertuples()], fontsize=7)
    ax.set_ylabel(f"median {label}")
    ax.set_title(f"{label_a} (A) vs {label_b} (B)\nB/A above the bars, * beyond the spread", fontsize=10)
    ax.legend()
    return fig


def _chosen_cells(res, cells):
    """The cells named by `cells` (keys or shell-style patterns such as "all-on/*/tcp-p1"), in the file's
    order; every measured cell when None. Raises Error for a pattern no cell matches, listing the keys."""
    measured = [c for c in res.cells if c["status"] == "ok" and c["runs"]]
    if not cells:
        return measured
    if isinstance(cells, str):
        cells = [c for c in cells.split(",") if c]
    out = []
    for pattern in cells:
        hits = [c for c in res.cells if fnmatch.fnmatchcase(c["key"], pattern)]
        if not hits:
            raise _nicmatrix.Error(f"--cells {pattern}: no such cell; the file has {', '.join(c['key'] for c in res.cells)}")
        out.extend(c for c in hits if c not in out)
    return out


def _runs_of(cells, field):
    """(cell, run) pairs of the runs that recorded `field`."""
    return [(c, r) for c in cells for r in c["runs"] if r.get(field)]


def _interval_metric(res, metric, what):
    """The interval metric to draw: `metric`, or by default the file's default_metric() (transactions/s
    for a file of request/response cells). Raises Error naming what takes which otherwise."""
    metric = metric or res.default_metric()
    if metric not in INTERVAL_METRICS:
        raise _nicmatrix.Error(f"--metric {metric}: {what} {' or '.join(INTERVAL_METRICS)}")
    return metric


def _interval_points(run, metric):
    """(end_s, value) per interval of a run for an interval metric (see INTERVAL_METRICS)."""
    if metric == "rr_transactions_per_s":
        return [(iv["end_s"], iv["transactions_per_s"]) for iv in ((run.get("rr") or {}).get("intervals") or [])]
    return [(iv["end_s"], iv[metric]) for iv in (run.get("intervals") or [])]


def _interval_runs(cells, metric):
    """(cell, run, points) of the runs that have intervals of `metric`."""
    out = []
    for c in cells:
        for r in c["runs"]:
            points = _interval_points(r, metric)
            if points:
                out.append((c, r, points))
    return out


def timeseries(results, cells=None, metric=None):
    """The per-interval samples of the chosen cells over the measured window: one colour per cell, one line
    per repetition. `metric` is an interval field: throughput_bps (payload received), packets_per_s, or
    rr_transactions_per_s (the request/response intervals); default the file's default_metric()."""
    res = _as_results(results)
    metric = _interval_metric(res, metric, "timeseries draws the intervals'")
    chosen = _chosen_cells(res, cells)
    pairs = _interval_runs(chosen, metric)
    if not pairs:
        raise _nicmatrix.Error(f"timeseries: no run of the chosen cells has intervals of {metric} (runs[].intervals, runs[].rr.intervals)")
    div, label = _axis(metric)
    if metric == "packets_per_s":
        div, label = 1e3, "packets_per_s (kpps)"
    fig = Figure(figsize=(9, 5.5), layout="constrained")
    ax = fig.subplots()
    colours = {c["key"]: f"C{k % 10}" for k, c in enumerate(chosen)}
    labelled = set()
    for cell, _, points in pairs:
        xs = [end for end, _ in points]
        ys = [value / div for _, value in points]
        key = cell["key"]
        ax.plot(xs, ys, marker="o", markersize=3, color=colours[key], alpha=0.8, label=None if key in labelled else key)
        labelled.add(key)
    ax.set_xlabel("seconds into the measured window (end of each interval)")
    ax.set_ylabel(f"{label}, per interval")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{res.config['name']}: {metric} per interval, one line per repetition", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def box(results, metric=None, cells=None):
    """The repetitions of each measured cell as a box plot of `metric` (box: quartiles, line: the median,
    whiskers: 1.5 IQR), every repetition drawn as a point over it. metric: default the file's
    default_metric()."""
    res = _as_results(results)
    metric = metric or res.default_metric()
    check_metric(metric)
    df = res.to_dataframe()
    keys = [c["key"] for c in _chosen_cells(res, cells)]
    data = [(k, df[(df["key"] == k) & df[metric].notna()][metric].tolist()) for k in keys]
    data = [(k, v) for k, v in data if v]
    if not data:
        raise _nicmatrix.Error(f"box: no measured cell has {metric}")
    div, label = _axis(metric)
    fig = Figure(figsize=(max(6.0, 0.55 * len(data) + 2), 5.5), layout="constrained")
    ax = fig.subplots()
    ax.boxplot([[x / div for x in v] for _, v in data], widths=0.6)
    for i, (_, v) in enumerate(data, start=1):
        ax.plot([i] * len(v), [x / div for x in v], "o", color="C1", markersize=3, alpha=0.8)
    ax.set_xticks(range(1, len(data) + 1), [k.replace("/", "\n") for k, _ in data], fontsize=7)
    ax.set_ylabel(label)
    ax.set_title(f"{res.config['name']}: {metric}, every repetition of each cell (box: quartiles, line: median)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def _latency_points(rr):
    """(latency µs, cumulative fraction) of one run's request/response latency: the percentiles it recorded
    (p50, p90, p99, p99.9, max)."""
    lat = rr.get("latency_us") or {}
    return [(lat[p], q) for p, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999), ("max", 1.0)) if lat.get(p) is not None]


def cdf(results, of="intervals", cells=None, metric=None):
    """Cumulative distributions, one line per chosen cell: of="intervals" the per-interval `metric` of
    every repetition pooled (as timeseries: default the file's default_metric()); of="latency" the request/response latency of every transaction of the cell's
    runs (their rr.histogram merged, one point per bucket: within the histogram's 0.4%), or, for runs
    written without a histogram, through each run's recorded percentiles."""
    res = _as_results(results)
    chosen = _chosen_cells(res, cells)
    fig = Figure(figsize=(9, 5.5), layout="constrained")
    ax = fig.subplots()
    if of == "latency":
        pairs = _runs_of(chosen, "rr")
        if not pairs:
            raise _nicmatrix.Error("cdf --of latency: no run of the chosen cells has rr (request/response latency: a tcp_rr, udp_rr or tcp_crr test)")
        from_percentiles = False
        for k, cell in enumerate(chosen):
            runs = [r["rr"] for c, r in pairs if c is cell]
            histograms = [rr["histogram"] for rr in runs if isinstance(rr.get("histogram"), dict) and rr["histogram"].get("count")]
            if histograms and len(histograms) == len(runs):
                pts = _nicmatrix.latency_cdf(json.dumps(histograms))
                label = f"{cell['key']} ({sum(h['count'] for h in histograms)} transactions)"
                ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=f"C{k % 10}", label=label)
            else:
                pts = sorted(p for rr in runs for p in _latency_points(rr))
                if pts:
                    from_percentiles = True
                    ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=f"C{k % 10}", label=cell["key"] + " (percentiles)", marker=".")
        ax.set_xscale("log")
        ax.set_xlabel("request/response latency (µs, log scale)")
        how = ("every transaction, the runs' histograms merged" + ("; (percentiles): through each run's p50, p90, p99, p99.9, max" if from_percentiles else ""))
        ax.set_title(f"{res.config['name']}: latency CDF per cell ({how})", fontsize=10)
    elif of == "intervals":
        metric = _interval_metric(res, metric, "cdf --of intervals takes")
        pairs = _interval_runs(chosen, metric)
        if not pairs:
            raise _nicmatrix.Error(f"cdf: no run of the chosen cells has intervals of {metric} (runs[].intervals, runs[].rr.intervals)")
        div, label = _axis(metric)
        for k, cell in enumerate(chosen):
            values = sorted(value / div for c, _, points in pairs if c is cell for _, value in points)
            if values:
                ax.step(values, [(i + 1) / len(values) for i in range(len(values))], where="post", color=f"C{k % 10}", label=cell["key"])
        ax.set_xlabel(f"{label}, per interval")
        ax.set_title(f"{res.config['name']}: CDF of per-interval {metric}, every repetition pooled per cell", fontsize=10)
    else:
        raise _nicmatrix.Error(f"--of {of}: expected intervals or latency")
    ax.set_ylabel("fraction of samples at or below")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def breakdown(results, end="receiver", cells=None):
    """The kernel profile (runs[].cpu_profile) stacked per cell: for each cell, the median over its
    repetitions of each category's share of all samples on `end`'s host (percent, idle included), as
    `report --cpu-breakdown` gives it; categories in the category table's order."""
    if end not in ("sender", "receiver"):
        raise _nicmatrix.Error(f"--end {end}: expected sender or receiver")
    res = _as_results(results)
    chosen = _chosen_cells(res, cells)
    rows = []
    for cell in chosen:
        shares = [r["cpu_profile"][end]["categories"] for r in cell["runs"]
                  if isinstance(r.get("cpu_profile"), dict) and isinstance(r["cpu_profile"].get(end), dict)
                  and r["cpu_profile"][end].get("categories")]
        if shares:
            cats = list(dict.fromkeys(k for s in shares for k in s))
            rows.append((cell["key"], {k: statistics.median(s.get(k, 0.0) for s in shares) for k in cats}, len(shares)))
    if not rows:
        raise _nicmatrix.Error(f"breakdown: no run in {res.path or 'the results'} has cpu_profile.{end} (the kernel profile; "
                               "a sweep whose config has \"profile\": true records it)")
    seen = list(dict.fromkeys(k for _, s, _ in rows for k in s))
    order = list(_nicmatrix.profile_categories())
    cats = [c for c in order if c in seen] + [c for c in seen if c not in order]
    fig = Figure(figsize=(max(7.0, 0.6 * len(rows) + 3), 5.5), layout="constrained")
    ax = fig.subplots()
    xs = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    from matplotlib import colormaps
    colours = colormaps["tab20"]   # 20 distinct colours: every category of the shipped table its own
    for k, cat in enumerate(cats):
        heights = [s.get(cat, 0.0) for _, s, _ in rows]
        ax.bar(xs, heights, bottom=bottom, label=cat, color=colours(k % 20))
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(xs, [key.replace("/", "\n") + f"\n({n} runs)" for key, _, n in rows], fontsize=7)
    ax.set_ylabel(f"% of all samples on the {end}'s host\n(each category's median: the stack is near, not at, 100)")
    ax.set_ylim(0, 105)
    ax.set_title(f"{res.config['name']}: where the {end}'s CPU went (kernel profile, median over repetitions)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def save(fig, path, dpi=100):
    """Writes a figure as PNG (or any format matplotlib knows from the file's extension)."""
    fig.savefig(os.fspath(path), dpi=dpi)
    return path


def main(argv=None):
    """`nicmatrix plot`: exit 0 with the image written, 2 for bad arguments or input, 1 on other errors."""
    parser = argparse.ArgumentParser(prog="nicmatrix plot", description="Plot one results file, or two side by side.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="results file(s): one, or two for --kind bars")
    parser.add_argument("-o", "--output", required=True, help="image to write (PNG; the extension picks the format)")
    parser.add_argument("--kind", choices=KINDS, help="heatmap (default for one file), scatter, bars (default for two), "
                        "timeseries, box, cdf or breakdown")
    parser.add_argument("--metric", help="metric to plot (as for nicmatrix report: default throughput_bps, or "
                        "rr_transactions_per_s when every cell is a request/response test; timeseries and cdf: "
                        "throughput_bps, packets_per_s or rr_transactions_per_s of the intervals)")
    parser.add_argument("--cpu", default="cpu_receiver_pct", help="scatter: the CPU metric on the x axis")
    parser.add_argument("--cells", help="timeseries, box, cdf, breakdown: the cells to draw, keys or patterns separated by "
                        "commas (all-on/*/tcp-p1); default every measured cell")
    parser.add_argument("--of", default="intervals", choices=("intervals", "latency"), help="cdf: of per-interval figures or of request/response latency")
    parser.add_argument("--end", default="receiver", choices=("sender", "receiver"), help="breakdown: whose kernel profile")
    parser.add_argument("--rows", help="heatmap: the settings that label the rows, separated by commas (profile, mtu, and the "
                        "sweep's tuning axes: channels, rps, ...); default profile and every tuning axis")
    parser.add_argument("--columns", default="mtu", help="heatmap: the setting along the columns (default mtu)")
    args = parser.parse_args(argv)
    if len(args.files) > 2:
        parser.error("at most two results files")
    kind = args.kind or ("bars" if len(args.files) == 2 else "heatmap")
    if (kind == "bars") != (len(args.files) == 2):
        parser.error(f"--kind {kind} takes {'two results files' if kind == 'bars' else 'one results file'}")
    try:
        if kind == "bars":
            fig = bars(args.files[0], args.files[1], metric=args.metric)
        elif kind == "scatter":
            fig = scatter(args.files[0], metric=args.metric, cpu=args.cpu)
        elif kind == "timeseries":
            fig = timeseries(args.files[0], cells=args.cells, metric=args.metric)
        elif kind == "box":
            fig = box(args.files[0], metric=args.metric, cells=args.cells)
        elif kind == "cdf":
            fig = cdf(args.files[0], of=args.of, cells=args.cells, metric=args.metric)
        elif kind == "breakdown":
            fig = breakdown(args.files[0], end=args.end, cells=args.cells)
        else:
            fig = heatmap(args.files[0], metric=args.metric, rows=args.rows.split(",") if args.rows else None,
                          columns=args.columns)
        save(fig, args.output)
    except _nicmatrix.Error as e:
        print(f"nicmatrix plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"nicmatrix plot: {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    print(args.output)
    return 0


__all__ = ["bars", "box", "breakdown", "cdf", "heatmap", "main", "save", "scatter", "timeseries", "Results"]

if __name__ == "__main__":
    sys.exit(main())
