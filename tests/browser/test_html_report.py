"""The HTML report (`nicmatrix report --format html`) in a real browser: Debian's headless Chromium driven
through the DevTools protocol. The page must make no request besides its own file, log no error, show the
medians of the results file (read here with Python's json module, not with nicmatrix's reader) and the
text report's entries, show the status and reason of cells not measured, show every repetition of a
clicked cell, and compare two files as `nicmatrix compare --format json` does."""
import datetime
import json
import os
import re
import subprocess

import pytest
from PIL import Image, ImageStat

from cdp import Browser

NM_BINARY = os.environ.get("NM_BINARY", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nicmatrix"))
SOURCE = os.environ.get("NM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
ARTIFACTS = os.environ.get("NM_ARTIFACTS")
EXAMPLE_A = os.path.join(SOURCE, "results", "offload-mtu-lab.json")
EXAMPLE_B = os.path.join(SOURCE, "results", "example-gro-lab.json")
FAKE_LAB = os.path.join(SOURCE, "tests", "fixtures", "results", "fake-lab.json")

# Every matrix cell of the page: key, the data-median attribute, the shown text, the hover text, its class.
CELLS_JS = """[...document.querySelectorAll('table.matrix td.cell[data-key]')].map(td => ({
    key: td.dataset.key, file: +td.dataset.file, median: td.dataset.median === undefined ? null : +td.dataset.median,
    text: td.querySelector('.value').textContent, interval: (td.querySelector('.interval') || {}).textContent || '',
    ratio: (td.querySelector('.ratio') || {}).textContent || '', title: td.title, cls: td.className }))"""


def nicmatrix(*args):
    return subprocess.run([NM_BINARY, *args], capture_output=True, text=True, timeout=120, check=True).stdout


def html_report(tmp_path, name, *args):
    out = tmp_path / name
    nicmatrix("report", *args, "--format", "html", "-o", str(out))
    return out


def artifact(tmp_path, name):
    if ARTIFACTS:
        os.makedirs(ARTIFACTS, exist_ok=True)
        return os.path.join(ARTIFACTS, name)
    return str(tmp_path / name)


def assert_png_not_blank(path, min_w, min_h):
    with Image.open(path) as im:
        assert im.format == "PNG"
        assert im.width >= min_w and im.height >= min_h, im.size
        stat = ImageStat.Stat(im.convert("L"))
        assert stat.stddev[0] > 10, f"{path} looks blank (stddev {stat.stddev[0]:.1f})"


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def text_report_entries(path):
    """{(row label, column index): entry} of `nicmatrix report` (the text table), for the page to agree with."""
    lines = nicmatrix("report", path).splitlines()
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"MTU \d+", header)]
    ends = [m.end() for m in re.finditer(r"MTU \d+", header)]
    out = {}
    for line in lines[2:]:
        if not line.strip():
            break
        label = line.split("  ")[0].strip()
        # Columns are right-aligned under their header: each entry ends where its header ends.
        prev = len(label)
        for i, end in enumerate(ends):
            out[(label, i)] = line[prev:end].strip()
            prev = end
        assert starts
    return out


def test_page_is_offline_and_shows_the_files_medians(browser, tmp_path):
    page_file = html_report(tmp_path, "report.html", EXAMPLE_A)
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.requests() == [page_file.as_uri()], "the page fetched something besides itself"
    assert page.console_errors() == []

    with open(EXAMPLE_A) as f:
        raw = json.load(f)
    cells = {c["key"]: c for c in raw["cells"]}
    shown = page.evaluate(CELLS_JS)
    assert {c["key"] for c in shown} == set(cells)
    mtus = raw["run"]["config"]["mtu"]
    text = text_report_entries(EXAMPLE_A)
    for c in shown:
        want = cells[c["key"]]["summary"]["throughput_bps"]["median"]
        assert c["median"] == pytest.approx(want, rel=1e-12), c["key"]
        # The figure as shown, "12.3 Gbit/s (37/30%)", is the median to three digits ...
        gbit = float(re.match(r"([\d.]+) Gbit/s", c["text"]).group(1))
        assert gbit == pytest.approx(want / 1e9, rel=0.006), c["key"]
        # ... and the text report's entry for the same cell, character for character.
        profile, mtu, traffic = c["key"].split("/")
        assert c["text"] == text[(f"{profile} / {traffic}", mtus.index(int(mtu[3:])))]
        # The interval shown is of the median: with 3 repetitions, [min, max] of the runs.
        runs = sorted(r["throughput_bps"] for r in cells[c["key"]]["runs"])
        lo, hi = (float(x) for x in re.findall(r"([\d.]+) Gbit/s", c["interval"]))
        assert lo == pytest.approx(runs[0] / 1e9, rel=0.006) and hi == pytest.approx(runs[-1] / 1e9, rel=0.006)
        assert "75% distribution-free interval of the median over 3 repetitions" in c["title"]

    # Header: both hosts' identity and the run's times.
    body = page.evaluate("document.body.innerText")
    host = raw["hosts"]["local"]
    # The sweep's length from the file's own start and end (whole seconds there), as the page words it.
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    took = (datetime.datetime.strptime(raw["run"]["finished"], stamp) - datetime.datetime.strptime(raw["run"]["started"], stamp)).total_seconds()
    took_text = f"{took:.1f} s" if took < 120 else f"{int(took // 60)} min {round(took % 60)} s"
    for want in (host["kernel"], host["cpu"]["model"], host["interface"]["driver"], "10000 Mbit/s", raw["run"]["started"], took_text):
        assert want in body

    # A click on a cell shows every repetition with the file's figures, and the intervals drawn.
    key = "all-off/mtu9000/tcp-p10"
    page.click(f'td.cell[data-key="{key}"]')
    page.wait_for("document.querySelectorAll('#nm-detail tr.run').length > 0")
    reps = page.evaluate("[...document.querySelectorAll('#nm-detail tr.run td[data-metric=\"throughput_bps\"]')].map(td => +td.dataset.value)")
    assert reps == pytest.approx([r["throughput_bps"] for r in cells[key]["runs"]], rel=1e-12)
    assert page.evaluate("document.querySelector('#nm-detail h2').textContent").startswith(key)
    points = page.evaluate("[...document.querySelectorAll('#nm-detail svg.plot polyline')].map(p => p.getAttribute('points').split(' ').length)")
    assert points == [len(r["intervals"]) for r in cells[key]["runs"]]
    detail = page.evaluate("document.getElementById('nm-detail').innerText")
    for want in ("CPU of both ends", "NIC counters and NAPI", "Requested and effective settings", "tx-tcp-segmentation"):
        assert want in detail
    # The CPU and NAPI tables: a row per repetition and end, in that order, with the file's figures.
    rows_under = """h => [...[...document.querySelectorAll('#nm-detail h3')].find(e => e.textContent.startsWith(h))
        .parentElement.querySelectorAll('table')[0].querySelectorAll('tr')].slice(1).map(tr => [...tr.cells].map(td => td.textContent))"""
    cpu_rows = page.evaluate(f"({rows_under})('CPU of both ends')")
    ends = [(i, end) for i in range(len(cells[key]["runs"])) for end in ("sender", "receiver")]
    assert [row[:2] for row in cpu_rows] == [[f"#{i + 1}", end] for i, end in ends]
    for row, (i, end) in zip(cpu_rows, ends):
        engine = cells[key]["runs"][i]["cpu"][end]
        assert float(row[2]) == pytest.approx(engine["user_s"], abs=0.0005) and float(row[4]) == pytest.approx(engine["util_pct"], abs=0.05)
    napi_rows = page.evaluate(
        f"""(() => {{ const t = [...document.querySelectorAll('#nm-detail h3')].find(e => e.textContent.startsWith('NIC counters and NAPI'))
        .parentElement.querySelectorAll('table'); return [...t[t.length - 1].querySelectorAll('tr')].slice(1).map(tr => [...tr.cells].map(td => td.textContent)); }})()"""
    )
    assert [row[:3] for row in napi_rows] == [[f"#{i + 1}", end, str(cells[key]["runs"][i]["napi"][end]["processed"])] for i, end in ends]
    assert page.console_errors() == []
    shot = page.screenshot(artifact(tmp_path, "html-report-offload-mtu-lab.png"))
    assert_png_not_blank(shot, 1000, 1500)


def test_cells_not_measured_show_status_and_reason_and_marks(browser, tmp_path):
    page_file = html_report(tmp_path, "fake.html", FAKE_LAB, "--against", "original")
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.requests() == [page_file.as_uri()]
    assert page.console_errors() == []
    with open(FAKE_LAB) as f:
        raw = json.load(f)
    shown = {c["key"]: c for c in page.evaluate(CELLS_JS)}
    against = json.loads(nicmatrix("report", FAKE_LAB, "--against", "original", "--format", "json"))
    ratios = {r["key_b"]: r for r in against["rows"]}
    for cell in raw["cells"]:
        c = shown[cell["key"]]
        if cell["status"] != "ok":
            assert c["text"] == cell["status"]
            assert cell["status"] in c["cls"]
            reason = cell["duplicate_of"] or cell["error"]
            assert reason and reason in c["title"], (cell["key"], c["title"])
        else:
            if cell.get("precision_met") is False:
                assert "?" in c["text"]
            row = ratios.get(cell["key"])
            if row and row["ratio"] is not None and cell["params"]["offloads"] != "original":
                shown_ratio = float(re.search(r": ([\d.]+)", c["ratio"]).group(1))
                assert shown_ratio == pytest.approx(row["ratio"], abs=0.0005)
    # A failed cell's click shows why.
    failed = next(c for c in raw["cells"] if c["status"] == "failed")
    page.click(f'td.cell[data-key="{failed["key"]}"]')
    page.wait_for("document.getElementById('nm-detail').innerText.length > 0")
    assert failed["error"] in page.evaluate("document.getElementById('nm-detail').innerText")
    assert page.console_errors() == []


def test_two_files_compare_view_matches_compare(browser, tmp_path):
    page_file = html_report(tmp_path, "ab.html", EXAMPLE_A, EXAMPLE_B)
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.requests() == [page_file.as_uri()]
    assert page.console_errors() == []
    cmp = json.loads(nicmatrix("compare", EXAMPLE_A, EXAMPLE_B, "--format", "json"))
    rows = page.evaluate("""[...document.querySelectorAll('table.compare tr[data-key-a]')].map(tr => ({
        a: tr.dataset.keyA, b: tr.dataset.keyB, ratio: tr.querySelector('[data-ratio]').dataset.ratio,
        text: tr.children[3].textContent, interval: tr.children[4].textContent }))""")
    assert [(r["a"], r["b"]) for r in rows] == [(r["key_a"], r["key_b"]) for r in cmp["rows"]]
    for shown, want in zip(rows, cmp["rows"]):
        if want["ratio"] is None:
            assert shown["ratio"] is None
        else:
            assert float(shown["ratio"]) == pytest.approx(want["ratio"], rel=1e-12)
            assert shown["text"].startswith(f"{want['ratio']:.3f}")
    body = page.evaluate("document.body.innerText")
    assert "Cells found in one file only" in body
    for key in cmp["only_a"][:3] + cmp["only_b"][:3]:
        assert key in body
    # The tabs show each file's own matrix.
    page.click(".tabs button:nth-child(3)")
    page.wait_for("document.getElementById('nm-file-1').style.display === ''")
    assert page.evaluate("document.querySelectorAll('#nm-matrix-1 td.cell[data-key]').length") == len(json.load(open(EXAMPLE_B))["cells"])
    shot = page.screenshot(artifact(tmp_path, "html-report-compare.png"))
    assert_png_not_blank(shot, 1000, 500)


def test_the_recorder_sees_a_request_and_an_error(browser, tmp_path):
    """The checks above can fail: a page that loads a stylesheet and throws is caught by both."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><link rel="stylesheet" href="nm-missing.css"><script>throw new Error("nm-boom")</script>')
    page = browser.open(bad.as_uri())
    assert any(u.endswith("nm-missing.css") for u in page.requests())
    assert any("nm-boom" in e for e in page.console_errors())


def test_hostile_strings_stay_text(browser, tmp_path):
    """A results file whose hostname closes the script element or carries markup shows it as text."""
    with open(FAKE_LAB) as f:
        raw = json.load(f)
    raw["hosts"]["local"]["hostname"] = "</script><img src=x onerror=alert(1)><b>lab</b>"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(raw))
    page_file = html_report(tmp_path, "hostile.html", str(hostile))
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.evaluate("document.querySelectorAll('img, b').length") == 0
    assert raw["hosts"]["local"]["hostname"] in page.evaluate("document.body.innerText")
    assert page.requests() == [page_file.as_uri()]
    assert page.console_errors() == []


def test_profiled_file_shows_each_runs_kernel_profile(browser, tmp_path):
    # The committed example of a sweep with "profile": true: a click on a cell shows the kernel profile of
    # every run, its samples and the hottest symbols as the file has them.
    example = os.path.join(SOURCE, "results", "example-profile-lab.json")
    page_file = html_report(tmp_path, "profile.html", example)
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.requests() == [page_file.as_uri()]
    with open(example) as f:
        raw = json.load(f)
    key = "all-off/mtu1500/tcp-p1"
    cell = next(c for c in raw["cells"] if c["key"] == key)
    page.click(f'td.cell[data-key="{key}"]')
    page.wait_for("document.querySelectorAll('#nm-detail tr.run').length > 0")
    detail = page.evaluate("document.getElementById('nm-detail').innerText")
    assert "Kernel profile (where the CPU went)" in detail
    for i, run_ in enumerate(cell["runs"]):
        p = run_["cpu_profile"]["sender"]
        assert f"run #{i + 1} sender: host {p['host']}, {p['samples']} samples at {p['hz']} Hz" in detail
    assert cell["runs"][0]["cpu_profile"]["sender"]["top"][0]["symbol"] in page.evaluate("document.getElementById('nm-detail').textContent")
    assert page.console_errors() == []
    assert_png_not_blank(page.screenshot(artifact(tmp_path, "html-report-profile.png")), 1000, 1000)


def test_request_response_file_shows_transactions_and_latency(browser, tmp_path):
    """A file of request/response cells: the matrix shows each cell's median transactions/s (the file's
    summary, read here with Python's json), as the text report does; a clicked cell lists each repetition's
    transactions/s and p99 from the file, and draws its per-interval transactions/s (runs[].rr.intervals)."""
    example = os.path.join(SOURCE, "results", "example-rr-lab.json")
    page_file = html_report(tmp_path, "rr.html", example)
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.console_errors() == []
    with open(example) as f:
        raw = json.load(f)
    cells = {c["key"]: c for c in raw["cells"]}
    mtus = raw["run"]["config"]["mtu"]
    text = text_report_entries(example)
    shown = page.evaluate(CELLS_JS)
    assert {c["key"] for c in shown} == set(cells)
    for c in shown:
        want = cells[c["key"]]["summary"]["rr_transactions_per_s"]["median"]
        assert c["median"] == pytest.approx(want, rel=1e-12), c["key"]
        assert "trans/s" in c["text"] and "bit/s" not in c["text"], c["text"]
        profile, mtu, traffic = c["key"].split("/")
        assert c["text"] == text[(f"{profile} / {traffic}", mtus.index(int(mtu[3:])))]

    key = "all-off/mtu9000/tcp-rr-1x1"
    runs = cells[key]["runs"]
    page.click(f'td.cell[data-key="{key}"]')
    page.wait_for("document.querySelectorAll('#nm-detail tr.run').length > 0")
    column = "[...document.querySelectorAll('#nm-detail tr.run td[data-metric=\"%s\"]')].map(td => +td.dataset.value)"
    assert page.evaluate(column % "rr_transactions_per_s") == pytest.approx([r["rr"]["transactions_per_s"] for r in runs], rel=1e-12)
    assert page.evaluate(column % "rr_p99_us") == pytest.approx([r["rr"]["latency_us"]["p99"] for r in runs], rel=1e-12)
    assert page.evaluate("document.querySelectorAll('#nm-detail td[data-metric=\"throughput_bps\"]').length") == 0
    charts = page.evaluate("""[...document.querySelectorAll('#nm-detail svg.plot')].filter(s => s.textContent.startsWith('transactions per second'))
        .map(s => [...s.querySelectorAll('polyline')].map(p => p.getAttribute('points').split(' ').length))""")
    assert charts == [[len(r["rr"]["intervals"]) for r in runs]]
    detail = page.evaluate("document.getElementById('nm-detail').innerText")
    assert "Request/response: transactions and latency" in detail
    assert page.console_errors() == []


def test_header_names_the_builds_that_wrote_resumed_and_read_the_file(browser, tmp_path):
    with open(EXAMPLE_A) as f:
        raw = json.load(f)
    raw["tool"] = {"name": "nicmatrix", "version": "0.1.0", "commit": "0ba10a8d8d1e"}
    raw["run"]["resumed"] = [{"started": "2026-12-02T21:00:00Z", "command": "nicmatrix sweep x.json --lab --resume r.json",
                              "tool": {"name": "nicmatrix", "version": "0.1.1", "commit": "1234567890ab-dirty"}}]
    raw["hosts"]["local"]["tool"] = raw["tool"]
    raw["hosts"]["remote"]["tool"] = {"name": "nicmatrix", "version": "0.1.0"}
    (tmp_path / "r.json").write_text(json.dumps(raw))
    page = browser.open(html_report(tmp_path, "builds.html", str(tmp_path / "r.json")).as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.console_errors() == []
    rows = page.evaluate("Object.fromEntries([...document.querySelectorAll('table.kv tr')].map(tr => [tr.cells[0].textContent, tr.cells[1].textContent]))")
    assert rows["written by"] == "nicmatrix 0.1.0 (commit 0ba10a8d8d1e) (nicmatrix/results/v1)"
    assert rows["resumed"] == "2026-12-02T21:00:00Z by nicmatrix 0.1.1 (commit 1234567890ab-dirty)"
    hosts = page.evaluate("[...document.querySelectorAll('tr')].filter(tr => tr.cells[0] && tr.cells[0].textContent === 'nicmatrix build')"
                          ".map(tr => [...tr.cells].slice(1).map(td => td.textContent))")
    assert hosts == [["nicmatrix 0.1.0 (commit 0ba10a8d8d1e)", "nicmatrix 0.1.0"]]
    # The page names the build that made it as --version does.
    version = nicmatrix("--version").strip()
    assert f"made by {version};" in page.evaluate("document.body.innerText")


def sysfs(path):
    with open(path) as f:
        return f.read().strip()


def cpu_list_text(cpus):
    """[0, 1, 2, 5] -> "0-2,5", as the kernel writes a CPU list."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(f"{cpus[i]}-{cpus[j]}" if j > i else str(cpus[i]))
        i = j + 1
    return ",".join(out)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (CAP_NET_ADMIN) for the lab's namespaces")
def test_hosts_table_shows_this_machines_idle_policy_and_cpus(browser, tmp_path):
    """A real sweep on the lab, then its page: the idle policy and the CPU layout read as text, each as
    sysfs has it here (read with Python, not with nicmatrix), and nothing nested as "[object Object]"."""
    config = {"name": "html-hosts", "offloads": [{"name": "tso-off", "features": {"tso": "off"}}], "mtu": [1500],
              "traffic": [{"name": "tcp-p1", "protocol": "tcp", "streams": 1}],
              "duration_s": 1, "omit_s": 0.2, "repetitions": 1, "cooldown_s": 0}
    (tmp_path / "c.json").write_text(json.dumps(config))
    out = tmp_path / "hosts.json"
    lab = "nmbh" + os.urandom(4).hex()
    subprocess.run([NM_BINARY, "sweep", str(tmp_path / "c.json"), "--lab", "--lab-name", lab, "-o", str(out),
                    "--journal", str(tmp_path / "journal.json")], capture_output=True, text=True, timeout=120, check=True)
    page = browser.open(html_report(tmp_path, "hosts.html", str(out)).as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.console_errors() == []
    rows = page.evaluate("Object.fromEntries([...document.querySelectorAll('tr')].filter(tr => tr.cells.length === 3)"
                         ".map(tr => [tr.cells[0].textContent, tr.cells[1].textContent]))")
    assert "[object Object]" not in page.evaluate("document.body.innerText")

    cpu = "/sys/devices/system/cpu"
    online = []
    for part in sysfs(f"{cpu}/online").split(","):
        lo, _, hi = part.partition("-")
        online += range(int(lo), int(hi or lo) + 1)
    if os.path.exists(f"{cpu}/cpuidle/current_driver"):
        driver = sysfs(f"{cpu}/cpuidle/current_driver")
        governor_file = f"{cpu}/cpuidle/current_governor"
        governor = sysfs(governor_file if os.path.exists(governor_file) else governor_file + "_ro")
        assert rows["idle driver"] == f"{driver}, governor {governor}"
        states = []
        # A guest whose idle driver has no states (cpuidle without per-CPU directories) shows "(none)".
        per_cpu = f"{cpu}/cpu{online[0]}/cpuidle"
        for k in range(len([d for d in os.listdir(per_cpu) if d.startswith("state")]) if os.path.isdir(per_cpu) else 0):
            base = f"{cpu}/cpu{online[0]}/cpuidle/state{k}"
            off = [c for c in online if sysfs(f"{cpu}/cpu{c}/cpuidle/state{k}/disable") != "0"]
            states.append(f"{sysfs(base + '/name')} ({sysfs(base + '/latency')} us" + (f", disabled on {cpu_list_text(off)}" if off else "") + ")")
        assert rows["idle states"] == (", ".join(states) or "(none)")
        params = f"/sys/module/{driver}/parameters"
        if os.path.isdir(params) and os.listdir(params):
            assert rows["idle driver parameters"] == ", ".join(f"{p} {sysfs(os.path.join(params, p))}" for p in sorted(os.listdir(params)))
    else:
        assert "idle driver" not in rows
    shown = rows["CPUs"].split("; ")
    assert [s.split(" ")[0] for s in shown] == [f"cpu{c}" for c in online]
    for c, text in zip(online, shown):
        core = sysfs(f"{cpu}/cpu{c}/topology/core_id")
        package = sysfs(f"{cpu}/cpu{c}/topology/physical_package_id")
        assert text.startswith(f"cpu{c} (core {core}, package {package}"), text
