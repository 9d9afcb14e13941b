"""The C++ statistics (matrix/stats.cpp, through the module) against scipy: the median's order-statistic
interval and its coverage, Student's t for the mean, and the ratio interval by inverting scipy's exact
Mann-Whitney test. Fixed data, so every run checks the same figures."""
import json
import math

import numpy as np
import pytest
from scipy import stats

from nicmatrix import _nicmatrix
from conftest import FAKE_LAB, run


@pytest.mark.parametrize("n", range(1, 25))
@pytest.mark.parametrize("confidence", [90, 95, 99])
def test_median_interval_is_the_order_statistic_interval(n, confidence):
    values = list(np.random.default_rng(n).lognormal(mean=22, sigma=0.2, size=n))
    s = _nicmatrix.summarize(values, confidence)
    if n < 2:
        assert s["median_ci_low"] is None and s["median_ci_confidence"] is None
        return
    # Coverage of [x(k), x(n+1-k)] is 1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2): the largest k reaching the
    # confidence, else k = 1 with what [min, max] covers.
    coverage = lambda k: 100 * (1 - 2 * stats.binom.cdf(k - 1, n, 0.5))
    k = 1
    while 2 * (k + 1) <= n and coverage(k + 1) >= confidence:
        k += 1
    xs = sorted(values)
    assert s["median"] == pytest.approx(float(np.median(values)), rel=1e-12)
    assert s["median_ci_low"] == xs[k - 1]
    assert s["median_ci_high"] == xs[n - k]
    assert s["median_ci_confidence"] == pytest.approx(coverage(k), rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 31, 200])
def test_mean_interval_is_students_t(n):
    values = list(np.random.default_rng(100 + n).normal(10e9, 1e9, size=n))
    s = _nicmatrix.summarize(values, 95)
    sd = float(np.std(values, ddof=1))
    assert s["stddev"] == pytest.approx(sd, rel=1e-9)
    assert s["ci95"] == pytest.approx(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel=1e-9)


def mw_pvalue(x, y):
    return stats.mannwhitneyu(x, y, alternative="two-sided", method="exact").pvalue


@pytest.mark.parametrize("m,n", [(4, 4), (4, 6), (5, 5), (6, 6), (8, 7), (12, 12)])
def test_ratio_interval_inverts_the_exact_mann_whitney_test(m, n):
    rng = np.random.default_rng(10 * m + n)
    a = list(rng.lognormal(mean=23, sigma=0.1, size=m))
    b = list(rng.lognormal(mean=23.05, sigma=0.1, size=n))
    r = _nicmatrix.ratio_interval(a, b, 95)
    assert r["ratio"] == pytest.approx(float(np.median(b)) / float(np.median(a)), rel=1e-12)
    lo, hi = math.log(r["ci_low"]), math.log(r["ci_high"])
    # The interval is every shift of log B the exact two-sided test does not reject at 5%: just inside
    # either end the test keeps the shift, just outside it rejects it.
    la, lb = np.log(a), np.log(b)
    eps = 1e-9
    for inside in (lo + eps, hi - eps):
        assert mw_pvalue(la, lb - inside) > 0.05
    for outside in (lo - eps, hi + eps):
        assert mw_pvalue(la, lb - outside) <= 0.05
    # Its coverage is 1 - 2 P(U <= k-1), k the rank of its lower end among the m x n differences, with
    # P from scipy's exact null distribution.
    diffs = sorted(y - x for x in la for y in lb)
    k = min(range(len(diffs)), key=lambda i: abs(diffs[i] - lo)) + 1
    assert r["ci_confidence"] == pytest.approx(100 * (1 - 2 * null_cdf(m, n, k - 1)), rel=1e-9)
    assert r["verdict"] == ("significant" if (lo > 0 or hi < 0) else "not_significant")


def null_cdf(m, n, u):
    """P(U <= u) under the null, U = #(x > y): scipy's exact one-sided p-value of two samples whose U is u
    (y = 0..n-1, x_i = c_i - 0.5 beats exactly c_i of them, the c_i summing to u)."""
    c, left = [], u
    for _ in range(m):
        c.append(min(n, left))
        left -= c[-1]
    x = [ci - 0.5 for ci in c]
    y = list(range(n))
    assert sum(xi > yj for xi in x for yj in y) == u
    return stats.mannwhitneyu(x, y, alternative="less", method="exact").pvalue


@pytest.mark.parametrize("m,n", [(1, 1), (1, 12), (3, 3), (2, 5)])
def test_too_few_repetitions_claim_nothing(m, n):
    a = [10e9 + i for i in range(m)]
    b = [1e9 + i for i in range(n)]   # ten times apart
    r = _nicmatrix.ratio_interval(a, b, 95)
    assert r["verdict"] == "too_few"
    # scipy agrees that no arrangement of these sizes can reach p <= 5% (min(m, n) >= 2), or there is one run.
    if min(m, n) >= 2:
        assert mw_pvalue(np.arange(m), np.arange(m, m + n)) > 0.05


def test_compare_json_has_every_column_and_agrees_with_python(nicmatrix_bin):
    out = json.loads(run(nicmatrix_bin, "compare", FAKE_LAB, FAKE_LAB, "--format", "json").stdout)
    assert out["metric"] == "throughput_bps" and out["confidence"] == 95
    assert "Mann-Whitney" in out["method"]
    assert out["rows"]
    import nicmatrix as nm
    df = nm.compare(FAKE_LAB, FAKE_LAB)
    both = df[df["in_both"]].to_dict("records")
    assert len(both) == len(out["rows"])
    for row, frame in zip(out["rows"], both):
        for key in ("profile", "traffic", "mtu", "key_a", "key_b", "features_requested", "test", "status_a", "status_b",
                    "a", "b", "ratio", "ratio_ci_low", "ratio_ci_high", "ratio_ci_confidence", "verdict", "significant", "why"):
            assert key in row, key
        assert row["verdict"] in ("significant", "not_significant", "too_few", "not_testable")
        assert row["significant"] == (row["verdict"] == "significant")
        assert row["key_a"] == frame["key_a"] and row["verdict"] == frame["verdict"]
        if row["ratio_ci_low"] is not None:
            assert frame["ratio_ci_low"] == row["ratio_ci_low"] and frame["ratio_ci_high"] == row["ratio_ci_high"]
        # A file against itself: 2 runs a side claim nothing; nothing is significant.
        assert not row["significant"]


def test_against_is_report_against(nicmatrix_bin):
    import nicmatrix as nm
    out = json.loads(run(nicmatrix_bin, "report", FAKE_LAB, "--against", "original", "--format", "json").stdout)
    assert out["reference"] == "original"
    df = nm.against(FAKE_LAB, "original")
    both = df[df["in_both"]].to_dict("records")
    assert [r["key_b"] for r in out["rows"]] == [r["key_b"] for r in both]
    assert all(r["key_a"].startswith("original/") for r in out["rows"])
    for row, frame in zip(out["rows"], both):
        assert row["verdict"] == frame["verdict"] and row["significant"] == frame["significant"]
        assert (row["ratio"] is None and math.isnan(frame["ratio"])) or row["ratio"] == frame["ratio"]
    text = nm.against(FAKE_LAB, "original", text=True)
    assert text == run(nicmatrix_bin, "report", FAKE_LAB, "--against", "original").stdout
    with pytest.raises(nm.Error, match="--against nosuch: no such offload profile; the file has original, tx-off, tx-tso-off, gro-on"):
        nm.against(FAKE_LAB, "nosuch")


@pytest.mark.parametrize("m,n,shift", [(4, 4, 1.0), (6, 6, 1.02), (6, 7, 1.2), (8, 8, 0.97), (12, 12, 1.0)])
def test_p_values_are_scipys_exact_mann_whitney_and_the_two_one_sided_tests(m, n, shift):
    rng = np.random.default_rng(100 * m + n)
    a = list(rng.lognormal(mean=23, sigma=0.02, size=m))
    b = list(rng.lognormal(mean=23 + math.log(shift), sigma=0.02, size=n))
    r = _nicmatrix.ratio_interval(a, b, 95, 5.0)
    la, lb = np.log(a), np.log(b)
    assert r["p_value"] == pytest.approx(mw_pvalue(la, lb), rel=1e-9)
    # TOST: "B/A <= 0.95" refuted by B above 0.95 A, "B/A >= 1.05" by B below 1.05 A, each one-sided exact.
    p_low = stats.mannwhitneyu(lb - math.log(0.95), la, alternative="greater", method="exact").pvalue
    p_high = stats.mannwhitneyu(lb - math.log(1.05), la, alternative="less", method="exact").pvalue
    assert r["equivalence_p_value"] == pytest.approx(max(p_low, p_high), rel=1e-9)


def test_adjusted_p_values_follow_holm_and_benjamini_hochberg():
    p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04, 0.5]
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    holm, running = [0.0] * n, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (n - rank) * p[i]))
        holm[i] = running
    bh, running = [0.0] * n, 1.0
    for rank in reversed(range(n)):
        running = min(running, n * p[order[rank]] / (rank + 1))
        bh[order[rank]] = running
    assert _nicmatrix.adjust_p_values(p, "holm") == pytest.approx(holm, rel=1e-12)
    assert _nicmatrix.adjust_p_values(p, "bh") == pytest.approx(bh, rel=1e-12)
    assert _nicmatrix.adjust_p_values(p, "none") == p


def six_runs_each(tmp_path, scale):
    """FAKE_LAB with every ok cell given six runs (throughputs 10.0..10.5 Gbit/s, shuffled per cell, the
    tcp-p1 cells times `scale`), written to a file of its own."""
    with open(FAKE_LAB) as f:
        doc = json.load(f)
    rng = np.random.default_rng(7)
    for cell in doc["cells"]:
        if cell["status"] != "ok" or not cell["runs"]:
            continue
        factor = scale if cell["params"]["traffic"] == "tcp-p1" else 1.0
        figures = rng.permutation([10.0, 10.1, 10.2, 10.3, 10.4, 10.5]) * 1e9 * factor
        cell["runs"] = [dict(cell["runs"][0], throughput_bps=float(v)) for v in figures]
    path = tmp_path / f"six-{scale}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_compare_adjust_and_margin_same_verdicts_in_json_python_and_text(nicmatrix_bin, tmp_path):
    import nicmatrix as nm
    a, b = six_runs_each(tmp_path, 1.0), six_runs_each(tmp_path, 1.3)
    for adjust in ("holm", "bh", "none"):
        out = json.loads(run(nicmatrix_bin, "compare", a, b, "--format", "json", "--adjust", adjust, "--margin", "5").stdout)
        assert out["adjustment"] == adjust and out["margin_pct"] == 5
        df = nm.compare(a, b, adjust=adjust, margin=5)
        both = df[df["in_both"]].to_dict("records")
        assert df.attrs["adjustment"] == adjust and df.attrs["tested_cells"] == out["tested_cells"] > 0
        assert len(both) == len(out["rows"])
        for row, frame in zip(out["rows"], both):
            for key in ("verdict", "verdict_unadjusted", "significant", "equivalent"):
                assert row[key] == frame[key], key
            if row["p_value"] is not None:
                assert frame["p_adjusted"] == row["p_adjusted"]
                # The tcp-p1 cells 30% apart are a difference; the others the same within 5%.
                p1 = row["traffic"] == "tcp-p1"
                assert row["verdict"] == ("significant" if p1 else "equivalent"), row["key_a"]
        text = nm.compare(a, b, adjust=adjust, margin=5, text=True)
        assert text == run(nicmatrix_bin, "compare", a, b, "--adjust", adjust, "--margin", "5").stdout
    with pytest.raises(nm.Error, match="--adjust"):
        nm.compare(a, b, adjust="bonferroni")
