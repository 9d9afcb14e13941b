"""Plots of results files (matplotlib): a heatmap of a metric over offload profile x MTU, throughput against
CPU per cell, and two results files side by side. Each function returns a matplotlib Figure (made without
pyplot, so it works under any backend and in threads); save it with `save(fig, "out.png")`.

The command line is this module: `python3 -m nicmatrix.plot FILE [FILE2] -o out.png [--kind heatmap|scatter|bars]
[--metric M]`; `nicmatrix plot ...` runs it.
"""
import argparse
import math
import os
import sys

try:
    from matplotlib.figure import Figure
except ImportError as _e:
    raise ImportError(f"nicmatrix.plot needs matplotlib ({_e}): apt-get install python3-matplotlib",
                      name="matplotlib") from _e

from . import _nicmatrix
from ._results import Results, _as_results, check_metric, compare

KINDS = ("heatmap", "scatter", "bars")


def _human(metric, value):
    return _nicmatrix.format_metric(metric, value)


def _axis(metric):
    """(divisor, axis label) for a metric: bits/s are shown in Gbit/s, the rest as they are."""
    if metric.endswith("_bps"):
        return 1e9, f"{metric} (Gbit/s)"
    return 1.0, metric


def heatmap(results, metric="throughput_bps"):
    """One panel per traffic pattern: rows offload profile, columns MTU, colour and label the cell's median
    of `metric`; a cell without a figure shows its status (duplicate, infeasible, ...)."""
    check_metric(metric)
    res = _as_results(results)
    s = res.summary()
    traffics = list(dict.fromkeys(s["traffic"]))
    profiles = list(dict.fromkeys(s["profile"]))
    mtus = sorted(set(s["mtu"]))
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
            i, j = profiles.index(row["profile"]), mtus.index(row["mtu"])
            value = row[f"{metric}_median"]
            if row["status"] == "ok" and not math.isnan(value):
                grid[i][j] = value
                labels[i][j] = _human(metric, value)
            else:
                labels[i][j] = row["status"]
        image = ax.imshow(grid, cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(len(profiles)):
            for j in range(len(mtus)):
                if labels[i][j]:
                    dark = not math.isnan(grid[i][j]) and grid[i][j] < (vmin + vmax) / 2
                    ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=8, color="white" if dark else "black")
        ax.set_xticks(range(len(mtus)), [f"MTU {m}" for m in mtus])
        ax.set_yticks(range(len(profiles)), profiles)
        ax.set_title(f"{traffic}: median {metric}")
    if image is not None:
        fig.colorbar(image, ax=list(axes), label=metric)
    fig.suptitle(f"{res.config['name']} ({os.path.basename(res.path or '')})")
    return fig


def scatter(results, metric="throughput_bps", cpu="cpu_receiver_pct"):
    """Each measured cell as a point: x its median CPU (`cpu`, default the receiving engine's CPU in % of
    one core, where GRO and checksum offload show; system_busy_pct is the whole machine's), y its median
    `metric`, with the spread of the repetitions as error bars; one marker per offload profile, one colour
    per MTU."""
    check_metric(metric)
    check_metric(cpu)
    res = _as_results(results)
    s = res.summary()
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


def bars(a, b, metric="throughput_bps"):
    """Two results files side by side: for each cell found in both (matched as `nicmatrix compare` does),
    A's and B's median of `metric` with the range of their repetitions, and B/A above each pair (with a
    '*' where compare finds the difference beyond the spread)."""
    check_metric(metric)
    ra, rb = _as_results(a), _as_results(b)
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


def save(fig, path, dpi=100):
    """Writes a figure as PNG (or any format matplotlib knows from the file's extension)."""
    fig.savefig(os.fspath(path), dpi=dpi)
    return path


def main(argv=None):
    """`nicmatrix plot`: exit 0 with the image written, 2 for bad arguments or input, 1 on other errors."""
    parser = argparse.ArgumentParser(prog="nicmatrix plot", description="Plot one results file, or two side by side.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="results file(s): one, or two for --kind bars")
    parser.add_argument("-o", "--output", required=True, help="image to write (PNG; the extension picks the format)")
    parser.add_argument("--kind", choices=KINDS, help="heatmap (default for one file), scatter, or bars (default for two)")
    parser.add_argument("--metric", default="throughput_bps", help="metric to plot (as for nicmatrix report)")
    parser.add_argument("--cpu", default="cpu_receiver_pct", help="scatter: the CPU metric on the x axis")
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
        else:
            fig = heatmap(args.files[0], metric=args.metric)
        save(fig, args.output)
    except _nicmatrix.Error as e:
        print(f"nicmatrix plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"nicmatrix plot: {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    print(args.output)
    return 0


__all__ = ["bars", "heatmap", "main", "save", "scatter", "Results"]

if __name__ == "__main__":
    sys.exit(main())
