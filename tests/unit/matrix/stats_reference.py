#!/usr/bin/python3
"""Reference figures for tests/unit/matrix/stats_test.cpp (Holm, Benjamini-Hochberg, the Mann-Whitney
p-value and the equivalence test, the mode test), computed without the code under test: the Mann-Whitney
null distribution by listing every arrangement (itertools), the adjustments from their textbook
definitions, the exact p-value also from scipy.stats.mannwhitneyu(method="exact"). Run it and compare
with the numbers in the test: `/usr/bin/python3 tests/unit/matrix/stats_reference.py`."""
import itertools
import math

from scipy.stats import mannwhitneyu


def u_null(m, n):
    """P(U = u) for u = 0..mn: every choice of which m of the m+n ranks are A's is equally likely."""
    counts = [0] * (m * n + 1)
    total = 0
    for ranks in itertools.combinations(range(m + n), m):
        # U = pairs (a, b) with a above b: for each A rank, the B ranks below it.
        u = sum(r - i for i, r in enumerate(ranks))
        counts[u] += 1
        total += 1
    return [c / total for c in counts]


def cdf(m, n, u):
    p = u_null(m, n)
    return sum(p[: int(math.floor(u)) + 1]) if u >= 0 else 0.0


def mw_two_sided(a, b):
    d = [math.log(y) - math.log(x) for x in a for y in b]
    above = sum(1 for v in d if v > 0)
    at_or_above = sum(1 for v in d if v >= 0)
    mn = len(a) * len(b)
    return min(1.0, 2 * min(cdf(len(a), len(b), at_or_above), cdf(len(a), len(b), mn - above)))


def tost(a, b, margin):
    d = [math.log(y) - math.log(x) for x in a for y in b]
    mn = len(a) * len(b)
    lo, hi = math.log(1 - margin), math.log(1 + margin)
    p_low = cdf(len(a), len(b), mn - sum(1 for v in d if v > lo))
    p_high = cdf(len(a), len(b), sum(1 for v in d if v >= hi))
    return max(p_low, p_high)


def holm(p):
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    out, running = [0.0] * n, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (n - rank) * p[i]))
        out[i] = running
    return out


def bh(p):
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    out, running = [0.0] * n, 1.0
    for rank in range(n - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, n * p[i] / (rank + 1)))
        out[i] = running
    return out


P = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]
print("p            ", P)
print("holm         ", [round(x, 12) for x in holm(P)])
print("bh           ", [round(x, 12) for x in bh(P)])

A = [10.0, 11.0, 12.0, 13.0, 14.0]
B = [20.0, 19.5, 23.0, 22.0, 21.0, 25.0]
print("mw(A, B)     ", repr(mw_two_sided(A, B)), " scipy:", repr(mannwhitneyu(B, A, method="exact").pvalue))
C = [10.0, 10.2, 9.9, 10.1, 10.05, 9.95]
D = [10.11, 10.01, 10.15, 9.92, 10.03, 10.08]
print("mw(C, D)     ", repr(mw_two_sided(C, D)), " scipy:", repr(mannwhitneyu(D, C, method="exact").pvalue))
print("tost(C, D, 5%)", repr(tost(C, D, 0.05)))
print("tost(C, D, 1%)", repr(tost(C, D, 0.01)))
print("tost(A, B, 5%)", repr(tost(A, B, 0.05)))
# Ties (equal figures on both sides) count against the claim tested: a larger p-value than the midrank's.
E = [10.0, 10.1, 10.2, 10.3]
F = [10.0, 10.1, 10.2, 10.4]
print("mw(E, F) ties", repr(mw_two_sided(E, F)), " scipy (midranks):", repr(mannwhitneyu(F, E, method="exact").pvalue))


# The gap test of matrix/modes.hpp, written again from its description.
def find_modes(values, min_runs=6, min_per_mode=2, min_gap_ratio=2.0, min_gap_pct=5.0):
    v = sorted(values)
    n = len(v)
    idx = sorted(range(n), key=lambda i: values[i])
    scale = abs(v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)

    def ratio(cuts):
        edges = [0] + list(cuts) + [n]
        groups = [v[edges[g]:edges[g + 1]] for g in range(len(edges) - 1)]
        if any(len(g) < min_per_mode for g in groups):
            return 0
        widest = max(g[-1] - g[0] for g in groups)
        gap = min(v[e] - v[e - 1] for e in cuts)
        if gap <= 0 or gap < min_gap_pct / 100 * scale:
            return 0
        r = gap / widest if widest > 0 else math.inf
        return r if r >= min_gap_ratio else 0

    best = ()
    if n >= min_runs:
        for k in (3, 2):
            candidates = [(ratio(c), c) for c in itertools.combinations(range(1, n), k - 1)]
            candidates = [c for c in candidates if c[0] > 0]
            if candidates:
                # The largest ratio; of equal ratios the first cut (as the C++ loop keeps the first).
                best = max(candidates, key=lambda c: (c[0], [-x for x in c[1]]))[1]
                break
    edges = [0] + list(best) + [n]
    return [sorted(idx[edges[g]:edges[g + 1]]) for g in range(len(edges) - 1)]


LAB = [8.0, 13.2, 13.4, 8.3, 12.8, 8.6, 13.2, 8.5, 13.3, 13.0]       # all-off/mtu8192/tcp-p1, Gbit/s (README)
print("modes(LAB)        ", find_modes(LAB))
IPERF = [8.5, 8.6, 8.5, 8.6, 8.3, 8.1, 7.2, 7.3, 7.3, 11.9]         # iperf3 on the same lab (README)
print("modes(IPERF)      ", find_modes(IPERF))
THREE = [5.0, 5.1, 9.0, 9.2, 9.1, 14.0, 14.3, 5.05, 14.1]
print("modes(THREE)      ", find_modes(THREE))
NOISE = [10.0, 10.4, 9.7, 10.9, 9.5, 10.2, 10.6, 9.9]
print("modes(NOISE)      ", find_modes(NOISE))
print("modes(FIVE runs)  ", find_modes([8.0, 8.1, 13.0, 13.1, 13.2]))


def false_alarms(n, trials=20000, seed=1):
    """How often samples from one normal distribution (mean 10, sd 0.3: 3% noise) are split, and how
    often without the separation rule (the worst case, any spread)."""
    import random
    rng = random.Random(seed)
    with_sep = without = 0
    for _ in range(trials):
        x = [rng.gauss(10, 0.3) for _ in range(n)]
        with_sep += len(find_modes(x)) > 1
        without += len(find_modes(x, min_gap_pct=0)) > 1
    return with_sep / trials, without / trials


for n in (6, 8, 10, 12):
    print(f"false alarms n={n:2d} (3% noise, no separation rule):", false_alarms(n))
