// The nicmatrix HTML report: lays out and draws the data the C++ report embedded (element nm-data).
// Every figure shown as text comes from that data as the C++ formatted it; this script computes no
// statistic. It builds the page with DOM calls and textContent only (no innerHTML), so a hostile string
// in a results file stays text. It fetches nothing.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("nm-data").textContent);
  const root = document.getElementById("nm-root");
  const SVG = "http://www.w3.org/2000/svg";
  const COLOURS = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e", "#316395"];

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "onclick") e.addEventListener("click", v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const scalar = (v) => v === null || v === undefined ? "" : typeof v === "boolean" ? (v ? "on" : "off") : String(v);
  const plain = (v, digits) => typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(digits === undefined ? 2 : digits)) : scalar(v);

  // "nicmatrix 0.1.0 (commit 0ba10a8d8d1e)": a results file's tool, a host's, or the build that resumed it.
  function toolName(t) {
    return t.name + " " + t.version + (t.commit ? " (commit " + t.commit + ")" : "");
  }
  // A key/value table of the scalar fields of an object (nested objects skipped unless listed).
  function kvTable(pairs) {
    const t = el("table", { class: "kv" });
    for (const [k, v] of pairs) {
      if (v === undefined || v === null || v === "") continue;
      t.appendChild(el("tr", {}, el("th", {}, k), el("td", {}, typeof v === "object" && v.nodeType ? v : scalar(v))));
    }
    return t;
  }
  function table(header, rows, numeric) {
    const t = el("table", {});
    t.appendChild(el("tr", {}, header.map((h, i) => el("th", { class: numeric && i > 0 ? "num" : null }, h))));
    for (const r of rows) t.appendChild(el("tr", {}, r.map((c, i) => el("td", { class: numeric && i > 0 ? "num" : null }, c))));
    return t;
  }
  function notes(list) { return list && list.length ? el("ul", { class: "notes" }, list.map((n) => el("li", {}, n))) : null; }

  function duration(s) {
    if (typeof s !== "number") return "";
    if (s < 120) return s.toFixed(1) + " s";
    const m = Math.floor(s / 60);
    return m >= 60 ? Math.floor(m / 60) + " h " + (m % 60) + " min" : m + " min " + Math.round(s % 60) + " s";
  }

  // ---- header: what was measured, when, how long, on which hosts --------------------------------------
  // A CPU list as the kernel writes one: [0, 1, 2, 5] -> "0-2,5".
  function cpuList(cpus) {
    const sorted = [...cpus].sort((a, b) => a - b), out = [];
    for (let i = 0; i < sorted.length; ++i) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) ++j;
      out.push(j > i ? sorted[i] + "-" + sorted[j] : String(sorted[i]));
      i = j;
    }
    return out.join(",");
  }
  // hosts.*.cpu_layout.cpus[i]: "cpu1 (core 1, package 0, node 0, performance, 2100 MHz)".
  function cpuText(c) {
    const parts = [["core", c.core], ["package", c.package], ["node", c.node]].filter(([, v]) => typeof v === "number").map(([k, v]) => k + " " + v);
    if (c.governor) parts.push(c.governor);
    if (typeof c.freq_khz === "number") parts.push(Math.round(c.freq_khz / 1000) + " MHz");
    return "cpu" + c.cpu + (parts.length ? " (" + parts.join(", ") + ")" : "");
  }
  // hosts.*.cpu_idle.states[i] as compare words it: "C1 (2 us, disabled on 0-1)".
  function idleStateText(s) {
    const latency = typeof s.latency_us === "number" ? s.latency_us + " us" : "latency unknown";
    const off = Array.isArray(s.disabled_cpus) && s.disabled_cpus.length ? ", disabled on " + cpuList(s.disabled_cpus) : "";
    return s.name + " (" + latency + off + ")";
  }
  // A value a newer writer records, shown as it is: a list as a list, anything nested as its JSON.
  function listed(v) {
    const one = (x) => (x !== null && typeof x === "object" ? JSON.stringify(x) : scalar(x));
    if (Array.isArray(v)) return v.map(one).join(", ");
    return isObj(v) ? Object.entries(v).map(([k, x]) => k + " " + one(x)).join(", ") : v;
  }
  function hostColumn(h) {
    const rows = new Map();
    if (!isObj(h)) return rows;
    const i = isObj(h.interface) ? h.interface : {};
    rows.set("hostname", h.hostname);
    rows.set("kernel", h.kernel);
    if (isObj(h.tool)) rows.set("nicmatrix build", toolName(h.tool));
    if (isObj(h.cpu)) rows.set("CPU", (h.cpu.model || "") + (h.cpu.count ? " (" + h.cpu.count + " CPUs)" : ""));
    rows.set("interface", (i.name || "") + (i.netns ? " (netns " + i.netns + ")" : ""));
    rows.set("driver", i.driver);
    rows.set("firmware", i.firmware || (h.interface ? "(none reported)" : ""));
    rows.set("bus", i.bus_info);
    rows.set("link speed", typeof i.speed_mbps === "number" ? i.speed_mbps + " Mbit/s" : h.interface ? "unknown" : "");
    if (typeof i.mtu_min === "number") rows.set("MTU range", i.mtu_min + " .. " + i.mtu_max);
    if (isObj(i.original)) rows.set("MTU before the sweep", i.original.mtu);
    for (const group of ["channels", "rings", "coalesce"]) {
      if (isObj(i[group]) && Object.keys(i[group]).length) rows.set(group, Object.entries(i[group]).map(([k, v]) => k + " " + v).join(", "));
    }
    if (isObj(h.cpu_layout)) {
      const l = h.cpu_layout;
      if (typeof l.smt_active === "boolean") rows.set("SMT", l.smt_active ? "active" : "off");
      if (isObj(l.numa_nodes)) rows.set("NUMA nodes", Object.entries(l.numa_nodes).map(([n, cpus]) => "node " + n + ": CPUs " + cpus).join("; "));
      if (Array.isArray(l.cpus)) rows.set("CPUs", l.cpus.filter(isObj).map(cpuText).join("; "));
    }
    if (isObj(h.cpu_idle)) {
      const d = h.cpu_idle;
      rows.set("idle driver", (d.driver || "none") + (d.governor ? ", governor " + d.governor : ""));
      rows.set("idle states", Array.isArray(d.states) && d.states.length ? d.states.filter(isObj).map(idleStateText).join(", ") : "(none)");
      if (isObj(d.driver_parameters)) rows.set("idle driver parameters", Object.entries(d.driver_parameters).map(([k, v]) => k + " " + v).join(", "));
    }
    // Whatever else a newer writer records (congestion control, sysctls, ...), as it is.
    const known = new Set(["hostname", "kernel", "cpu", "interface", "tool", "cpu_layout", "cpu_idle"]);
    const knownIf = new Set(["name", "netns", "driver", "firmware", "bus_info", "speed_mbps", "mtu_min", "mtu_max", "original", "channels", "rings", "coalesce"]);
    const more = (obj, skip, prefix) => {
      for (const [k, v] of Object.entries(obj)) {
        if (skip.has(k)) continue;
        if (isObj(v)) { for (const [k2, v2] of Object.entries(v)) rows.set(prefix + k + "." + k2, listed(v2)); }
        else rows.set(prefix + k, listed(v));
      }
    };
    more(h, known, "");
    more(i, knownIf, "interface.");
    if (!h.interface) rows.set("interface", "not read (a peer without agent)");
    return rows;
  }

  function header(f) {
    const h = f.header, c = f.config;
    const box = el("section", {});
    box.appendChild(el("h1", {}, (c && c.name ? c.name : "results") + " ", el("span", { class: "muted" }, "(" + f.label + ")")));
    if (c && c.description) box.appendChild(el("p", { class: "lead" }, c.description));
    const statuses = Object.entries(h.statuses || {}).map(([s, n]) => n + " " + s).join(", ");
    const order = isObj(h.order) ? h.order.mode + (h.order.seed !== undefined && h.order.seed !== null ? " (seed " + h.order.seed + ")" : "") : "";
    const measured = c ? [
      "offload profiles: " + (c.offloads || []).map((p) => p.name).join(", "),
      "MTU: " + (c.mtu || []).join(", "),
      "traffic: " + (c.traffic || []).map((t) => t.name).join(", "),
      c.repetitions !== undefined ? c.repetitions + " repetitions of " + c.duration_s + " s (after " + c.omit_s + " s warm-up)" : null,
      c.precision ? "precision asked: the " + c.precision.confidence + "% interval of the median " + c.precision.metric + " within ±" + c.precision.ci_pct + "%" : null,
    ].filter(Boolean).join("; ") : "";
    box.appendChild(kvTable([
      ["measured", measured],
      ["started (UTC)", h.started],
      ["finished (UTC)", h.finished || "not finished (the sweep is running or was interrupted)"],
      ["took", duration(h.duration_s)],
      ["cells", h.cells + (statuses ? " (" + statuses + ")" : "") + ", " + h.repetitions + " repetitions recorded"],
      ["order", order],
      ["time budget", h.time_budget_s ? h.time_budget_s + " s" + (h.budget_reached ? " (reached: not every cell has all it asked)" : "") : ""],
      ["command", h.command],
      ["config file", h.config_file],
      ["written by", isObj(h.tool) ? toolName(h.tool) + " (" + h.schema + ")" : ""],
      ["resumed", Array.isArray(h.resumed) ? h.resumed.map((r) => r.started + " by " + (isObj(r.tool) ? toolName(r.tool) : "?")).join("; ") : ""],
    ]));
    box.appendChild(el("h3", {}, "Hosts"));
    const local = hostColumn(f.hosts && f.hosts.local), remote = hostColumn(f.hosts && f.hosts.remote);
    const names = [...new Set([...local.keys(), ...remote.keys()])].filter((k) => scalar(local.get(k)) !== "" || scalar(remote.get(k)) !== "");
    box.appendChild(el("div", { class: "scroll" }, table(["", "local (this side)", "remote (the peer)"], names.map((k) => [k, scalar(local.get(k)), scalar(remote.get(k))]))));
    box.appendChild(el("details", {}, el("summary", {}, "the whole config"), el("pre", {}, JSON.stringify(c, null, 2))));
    return box;
  }

  // ---- the matrix ---------------------------------------------------------------------------------------
  function colourFor(v, lo, hi) {
    if (!(hi > lo)) return "#cfe3f6";
    const t = Math.max(0, Math.min(1, (v - lo) / (hi - lo)));
    // light yellow (low) .. green .. blue (high): readable with dark text everywhere.
    const stops = [[255, 241, 196], [178, 223, 171], [134, 190, 226]];
    const seg = t < 0.5 ? 0 : 1, u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    const c = stops[seg].map((a, i) => Math.round(a + (stops[seg + 1][i] - a) * u));
    return "rgb(" + c.join(",") + ")";
  }

  function matrixSection(f, fileIndex) {
    const m = f.matrix;
    const box = el("section", {});
    box.appendChild(el("h2", {}, "Matrix: median " + m.metric + (f.against ? ", against " + f.against.reference : "")));
    const values = [];
    for (const r of m.rows) for (const e of r.entries) if (e.present && e.status === "ok" && e.value) values.push(e.value.median);
    const lo = Math.min(...values), hi = Math.max(...values);
    const t = el("table", { class: "matrix", id: "nm-matrix-" + fileIndex });
    t.appendChild(el("tr", {}, el("th", {}, "offloads / traffic"), m.mtus.map((mtu) => el("th", { class: "num" }, "MTU " + mtu))));
    for (const r of m.rows) {
      const tr = el("tr", {}, el("th", {}, r.profile + " / " + r.traffic));
      for (const e of r.entries) {
        if (!e.present) { tr.appendChild(el("td", { class: "cell absent", title: "not run" }, "-")); continue; }
        const measuredOk = e.status === "ok" && e.value;
        const tips = [];
        if (!measuredOk) tips.push(e.status + (e.note ? ": " + e.note : ""));
        if (measuredOk) tips.push(e.value.interval_note);
        if (e.precision_met === false) tips.push("? the asked precision was not met");
        if (e.disturbed_runs > 0) tips.push("! " + e.disturbed_runs + " repetition(s) measured under interference");
        if (e.against && measuredOk) tips.push("against " + f.against.reference + ": B/A " + e.against.ratio_text + " " + e.against.interval_text);
        tips.push("click for every repetition");
        const td = el("td", {
          class: "cell" + (measuredOk ? "" : " status " + e.status), "data-key": e.key, "data-file": fileIndex,
          "data-median": measuredOk ? e.value.median : null, title: tips.join("\n"),
          onclick: () => showCell(fileIndex, e.key, td),
        });
        if (measuredOk) td.style.background = colourFor(e.value.median, lo, hi);
        td.appendChild(el("span", { class: "value" }, e.text));
        if (measuredOk) td.appendChild(el("span", { class: "interval" }, e.value.interval_text ? "[" + e.value.interval_text + "]" : e.value.interval_note));
        if (!measuredOk && e.note) td.appendChild(el("span", { class: "interval" }, e.note.length > 48 ? e.note.slice(0, 46) + "..." : e.note));
        if (e.against) {
          const v = e.against.verdict;
          td.appendChild(el("span", { class: "ratio " + verdictClass(v) },
            "vs " + f.against.reference + ": " + e.against.ratio_text.trim() + (e.against.p_value !== null ? " [" + e.against.interval_text + "]" : "")));
        }
        tr.appendChild(td);
      }
      t.appendChild(tr);
    }
    box.appendChild(el("div", { class: "scroll" }, t));
    if (values.length) box.appendChild(el("p", { class: "muted" }, "[low .. high] under a median: the distribution-free interval of that median over the cell's repetitions (its coverage on hover; with 3 repetitions it is [min, max], 75%)"));
    if (values.length) box.appendChild(el("p", { class: "muted" }, "colour: the median, from the lowest (yellow) to the highest (blue) in this table; grey: not measured; red: failed; orange: path MTU black hole"));
    box.appendChild(notes(m.notes));
    if (f.against) box.appendChild(notes(f.against.notes.concat(f.against.only.map((k) => k + ": no " + f.against.reference + " cell at its MTU and traffic"))));
    return box;
  }

  function frameTables(f) {
    if (!f.frame_tables.length) return null;
    const box = el("section", {}, el("h2", {}, "RFC 2544 frame-size tables"));
    for (const ft of f.frame_tables) {
      box.appendChild(el("h3", {}, ft.key + " (" + ft.status + (ft.error ? ": " + ft.error : "") + ")"));
      box.appendChild(table(["frame size", "% of line rate", "frames/s", "Mbit/s", "CPU snd/rcv/softirq %", "loss", "trials"],
        ft.rows.map((r) => [r.frame, r.line_pct, r.fps, r.mbps, r.cpu, r.loss, r.trials]), true));
      box.appendChild(notes(ft.notes));
    }
    return box;
  }

  // ---- one cell, on click -----------------------------------------------------------------------------
  function lineChart(series, opts) {
    const W = opts.width || 720, H = opts.height || 240, L = 70, R = 12, T = 22, B = 36;
    const pts = series.flatMap((s) => s.points);
    const s = svg("svg", { class: "plot", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
    s.appendChild(svg("text", { x: L, y: 14 }, opts.title));
    if (!pts.length) { s.appendChild(svg("text", { x: L, y: H / 2 }, "no samples recorded")); return s; }
    const x0 = Math.min(...pts.map((p) => p[0])), x1 = Math.max(...pts.map((p) => p[0]));
    const y1 = Math.max(...pts.map((p) => p[1])) * 1.05 || 1, y0 = 0;
    const X = (x) => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R);
    const Y = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
    for (let k = 0; k <= 4; ++k) {
      const yv = y0 + (y1 - y0) * k / 4;
      s.appendChild(svg("line", { class: "grid", x1: L, x2: W - R, y1: Y(yv), y2: Y(yv) }));
      s.appendChild(svg("text", { x: L - 6, y: Y(yv) + 4, "text-anchor": "end" }, (yv / opts.scale).toFixed(opts.digits)));
    }
    s.appendChild(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
    s.appendChild(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
    for (const xv of [x0, (x0 + x1) / 2, x1]) s.appendChild(svg("text", { x: X(xv), y: H - B + 14, "text-anchor": "middle" }, xv.toFixed(1)));
    s.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, opts.xlabel));
    s.appendChild(svg("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" }, opts.ylabel));
    series.forEach((sr, i) => {
      if (!sr.points.length) return;
      const c = COLOURS[i % COLOURS.length];
      s.appendChild(svg("polyline", { fill: "none", stroke: c, "stroke-width": 1.8, points: sr.points.map((p) => X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join(" ") }));
      for (const p of sr.points) s.appendChild(svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: 2.5, fill: c }));
    });
    return s;
  }
  function legend(names) {
    return el("div", { class: "legend" }, names.map((n, i) => { const sw = el("i", {}); sw.style.background = COLOURS[i % COLOURS.length]; return el("span", {}, sw, n); }));
  }

  // A stacked bar of shares (percent) per row, with a legend of the categories.
  function stackedBars(rows, title) {
    const cats = [];
    for (const r of rows) for (const k of Object.keys(r.shares)) if (!cats.includes(k)) cats.push(k);
    const W = 720, rowH = 22, L = 120, T = 22;
    const s = svg("svg", { class: "plot", width: W, height: T + rows.length * (rowH + 6) + 8, role: "img" });
    s.appendChild(svg("text", { x: 4, y: 14 }, title));
    rows.forEach((r, i) => {
      const y = T + i * (rowH + 6);
      s.appendChild(svg("text", { x: L - 6, y: y + 15, "text-anchor": "end" }, r.name));
      let x = L;
      for (const k of cats) {
        const w = (r.shares[k] || 0) / 100 * (W - L - 10);
        if (w <= 0) continue;
        const rect = svg("rect", { x: x, y: y, width: w, height: rowH, fill: COLOURS[cats.indexOf(k) % COLOURS.length] });
        rect.appendChild(svg("title", {}, k + ": " + (r.shares[k] || 0).toFixed(1) + "%"));
        s.appendChild(rect);
        x += w;
      }
    });
    return el("div", {}, s, legend(cats));
  }

  function settingsSection(cell, f) {
    const box = el("div", {}, el("h3", {}, "Requested and effective settings"));
    const p = cell.params || {};
    const req = p.features_requested || {};
    box.appendChild(kvTable([
      ["offload profile", p.offloads],
      ["requested features", Object.keys(req).length ? Object.entries(req).map(([k, v]) => k + " " + scalar(v)).join(", ") : "none (the interface as it was)"],
      ["requested MTU", p.mtu],
      ["test", isObj(p.test) ? Object.entries(p.test).filter(([, v]) => !isObj(v)).map(([k, v]) => k + "=" + scalar(v)).join(" ") : ""],
    ]));
    const applied = cell.applied || {};
    const ends = Object.keys(applied).filter((k) => isObj(applied[k]));
    if (!ends.length) { box.appendChild(el("p", { class: "muted" }, "no effective settings recorded (the cell was not applied)")); return box; }
    const originals = { local: f.hosts.local && f.hosts.local.interface && f.hosts.local.interface.original,
                        remote: f.hosts.remote && f.hosts.remote.interface && f.hosts.remote.interface.original };
    const names = [];
    for (const e of ends) for (const k of Object.keys(applied[e].features || {})) if (!names.includes(k)) names.push(k);
    names.sort();
    const t = el("table", {});
    t.appendChild(el("tr", {}, el("th", {}, "effective (read back)"), ends.map((e) => el("th", {}, e))));
    t.appendChild(el("tr", {}, el("td", {}, "MTU"), ends.map((e) => el("td", {}, scalar(applied[e].mtu)))));
    for (const k of names) {
      t.appendChild(el("tr", {}, el("td", {}, k), ends.map((e) => {
        const v = (applied[e].features || {})[k];
        const o = originals[e] && originals[e].features ? originals[e].features[k] : undefined;
        return el("td", { class: o !== undefined && v !== undefined && o !== v ? "changed" : null, title: o !== undefined ? "before the sweep: " + scalar(o) : null }, scalar(v));
      })));
    }
    box.appendChild(el("p", { class: "muted" }, "highlighted: differs from the interface's state before the sweep (hover for it)"));
    box.appendChild(el("div", { class: "scroll" }, t));
    return box;
  }

  // One row per run and end (sender, then receiver): "#n" and the cells rowOf(run, end) gives; none where it gives null.
  function rowsPerEnd(runs, rowOf) {
    const rows = [];
    runs.forEach((r, i) => {
      for (const end of ["sender", "receiver"]) {
        const row = rowOf(r, end);
        if (row) rows.push(["#" + (i + 1)].concat(row));
      }
    });
    return rows;
  }

  function cpuSection(runs) {
    const box = el("div", {}, el("h3", {}, "CPU of both ends"));
    const rows = rowsPerEnd(runs, (r, end) => {
      const eng = (r.cpu || {})[end] || {}, sys = ((r.cpu || {}).system || {})[end] || {};
      return [end, plain(eng.user_s, 3), plain(eng.sys_s, 3), plain(eng.util_pct, 1), plain(sys.busy_pct, 1), plain(sys.user_pct, 1),
        plain(sys.sys_pct, 1), plain(sys.irq_pct, 1), plain(sys.softirq_pct, 1), plain(sys.steal_pct, 1)];
    });
    box.appendChild(el("p", { class: "muted" }, "engine: the engine threads' getrusage over the measured window (util: % of one core); system: /proc/stat over the same window, % of all CPUs of that host (on the lab both ends are one host)"));
    box.appendChild(el("div", { class: "scroll" }, table(["run", "end", "engine user s", "engine sys s", "engine util %", "system busy %", "user %", "sys %", "irq %", "softirq %", "steal %"], rows, true)));
    runs.forEach((r, i) => {
      const sys = (r.cpu || {}).system || {};
      for (const end of ["sender", "receiver"]) {
        const per = sys[end] && sys[end].per_cpu;
        if (!Array.isArray(per) || !per.length) continue;
        box.appendChild(el("h4", {}, "run #" + (i + 1) + ", " + end + ": per CPU (% of that CPU)" + (sys[end].busiest_cpu !== undefined ? "; busiest CPU " + sys[end].busiest_cpu : "")));
        box.appendChild(table(["cpu", "busy", "user", "sys", "irq", "softirq", "steal"], per.map((p) => [p.cpu, plain(p.busy_pct, 1), plain(p.user_pct, 1), plain(p.sys_pct, 1), plain(p.irq_pct, 1), plain(p.softirq_pct, 1), plain(p.steal_pct, 1)]), true));
      }
      if (isObj(r.placement)) box.appendChild(el("p", {}, "run #" + (i + 1) + " engine threads ran on CPUs: " + Object.entries(r.placement).map(([k, v]) => k + " " + (Array.isArray(v) ? v.join(",") : scalar(v))).join("; ")));
    });
    return box;
  }

  function profileSection(runs) {
    const with_ = runs.map((r, i) => [i, r.cpu_profile]).filter(([, p]) => isObj(p));
    if (!with_.length) return null;
    const box = el("div", {}, el("h3", {}, "Kernel profile (where the CPU went)"));
    for (const [i, prof] of with_) {
      const bars = [];
      for (const end of ["sender", "receiver"]) {
        const p = prof[end];
        if (!isObj(p) || !isObj(p.categories)) continue;
        if (p.shared_with && bars.some((b) => b.name.startsWith(p.shared_with))) continue;
        bars.push({ name: end + (p.shared_with ? " (= " + p.shared_with + ")" : ""), shares: p.categories });
        for (const cpu of p.by_cpu || []) bars.push({ name: "  cpu " + cpu.cpu, shares: cpu.categories || {} });
      }
      if (bars.length) box.appendChild(stackedBars(bars, "run #" + (i + 1) + ": samples by category, % of all samples on the host"));
      for (const end of ["sender", "receiver"]) {
        const p = prof[end];
        if (!isObj(p)) continue;
        box.appendChild(el("p", { class: "muted" }, "run #" + (i + 1) + " " + end + ": host " + scalar(p.host) + ", " + scalar(p.samples) + " samples at " + scalar(p.hz) + " Hz over " + plain(p.window_s, 2) + " s, " + scalar(p.lost) + " lost" + (p.shared_with ? "; the same sampler as the " + p.shared_with : "")));
        if (Array.isArray(p.top) && p.top.length && !p.shared_with) {
          box.appendChild(el("details", {}, el("summary", {}, "hottest symbols (" + end + ", run #" + (i + 1) + ")"),
            table(["symbol", "% of samples", "category"], p.top.map((s) => [s.symbol, plain(s.pct, 2), s.category]), false)));
        }
      }
    }
    return box;
  }

  function rrSection(runs, figures) {
    const with_ = runs.map((r, i) => [i, r.rr]).filter(([, x]) => isObj(x));
    if (!with_.length) return null;
    const box = el("div", {}, el("h3", {}, "Request/response: transactions and latency"));
    const ps = ["mean", "p50", "p90", "p99", "p999", "max"];
    box.appendChild(table(["run", "transactions", "transactions/s"].concat(ps.map((p) => p + " µs"), ["CPU µs/trans. sender", "receiver"]),
      with_.map(([i, rr]) => {
        const l = rr.latency_us || {};
        const cpu = rr.cpu_us_per_transaction || {};
        return ["#" + (i + 1), scalar(rr.transactions), figures[i] && figures[i].transactions_per_s ? figures[i].transactions_per_s.text : plain(rr.transactions_per_s, 1)]
          .concat(ps.map((p) => plain(l[p], 1)), [plain(cpu.sender, 2), plain(cpu.receiver, 2)]);
      }), true));
    return box;
  }

  function nicSection(runs) {
    const box = el("div", {}, el("h3", {}, "NIC counters and NAPI (over the measured window)"));
    const rows = [];
    runs.forEach((r, i) => {
      const nic = r.nic || {};
      for (const end of ["sender", "receiver"]) {
        const n = nic[end];
        if (!isObj(n) || !isObj(n.before) || !isObj(n.after)) continue;
        const moved = Object.keys(n.after).filter((k) => (n.after[k] - (n.before[k] || 0)) !== 0);
        rows.push(["#" + (i + 1), end + (n.iface ? " (" + n.iface + ")" : ""), moved.map((k) => k + " +" + (n.after[k] - (n.before[k] || 0))).join(", ") || "no counter moved"]);
      }
      if (isObj(nic.engine)) rows.push(["#" + (i + 1), "engine", "bytes " + nic.engine.bytes + ", packets " + nic.engine.packets + " (the engine's own count)"]);
    });
    if (rows.length) box.appendChild(el("div", { class: "scroll" }, table(["run", "end", "counters that moved (after - before)"], rows, false)));
    const napi = rowsPerEnd(runs, (r, end) => {
      const n = (r.napi || {})[end];
      return isObj(n) ? [end, scalar(n.processed), scalar(n.dropped), scalar(n.time_squeeze), scalar(n.interrupts), plain(n.processed_per_s, 0), plain(n.interrupts_per_s, 0), plain(n.processed_per_interrupt, 1)] : null;
    });
    if (napi.length) {
      box.appendChild(el("p", { class: "muted" }, "NAPI: /proc/net/softnet_stat over the window (every CPU); interrupts: the interface's in /proc/interrupts (veth has none)"));
      box.appendChild(table(["run", "end", "processed", "dropped", "time squeeze", "interrupts", "processed/s", "interrupts/s", "processed/interrupt"], napi, true));
    }
    return box;
  }

  function showCell(fileIndex, key, td) {
    const f = D.files[fileIndex];
    const entry = f.cells[key];
    const detail = document.getElementById("nm-detail");
    for (const s of document.querySelectorAll("td.cell.selected")) s.classList.remove("selected");
    if (td) td.classList.add("selected");
    detail.textContent = "";
    if (!entry) { detail.appendChild(el("p", {}, key + ": not in the results file")); return; }
    const cell = entry.cell, runs = cell.runs || [], figures = entry.runs;
    detail.appendChild(el("h2", {}, key + " ", el("span", { class: "muted" }, "(" + cell.status + (D.files.length > 1 ? ", " + f.label : "") + ")")));
    if (cell.status !== "ok") detail.appendChild(el("p", { class: "mark-bad" }, cell.status + ": " + (cell.error || (cell.duplicate_of ? "same effective settings as " + cell.duplicate_of : "no reason recorded"))));
    detail.appendChild(kvTable([
      ["repetitions run", cell.repetitions_run !== undefined ? cell.repetitions_run : runs.length],
      ["precision met", cell.precision_met === undefined || cell.precision_met === null ? "no precision asked" : cell.precision_met ? "yes" : "no (the asked interval of the median was not reached)"],
      ["time outside measuring", typeof cell.overhead_s === "number" ? cell.overhead_s.toFixed(2) + " s (apply, verify, preflight)" : ""],
    ]));
    const sum = entry.summary;
    const metrics = Object.keys(sum);
    if (metrics.length) {
      detail.appendChild(el("h3", {}, "Summary over the repetitions"));
      detail.appendChild(el("div", { class: "scroll" }, table(["metric", "n", "median", "interval of the median", "", "min", "max"],
        metrics.map((m) => { const s = sum[m]; return [m, s.n, s.median_text, s.interval_text || "-", s.interval_note, s.min_text, s.max_text]; }), true)));
    }
    detail.appendChild(el("h3", {}, "Every repetition"));
    // A request/response cell is told by its transactions/s and latency, not by the byte rate of its messages.
    const isRr = runs.some((r) => isObj(r.rr));
    const cols = (isRr ? ["rr_transactions_per_s", "rr_p50_us", "rr_p99_us"] : ["throughput_bps", "packets_per_s"])
      .concat(["cpu_sender_pct", "cpu_receiver_pct", "system_busy_pct", "softirq_pct", "tcp_retransmits", "loss_pct"])
      .filter((m) => figures.some((fg) => fg[m]));
    const rt = el("table", { class: "runs" });
    rt.appendChild(el("tr", {}, ["run", "started (UTC)", "status", "duration s"].concat(cols).concat(["disturbed"]).map((h) => el("th", {}, h))));
    runs.forEach((r, i) => {
      rt.appendChild(el("tr", { class: "run", "data-run": i },
        el("td", {}, "#" + (i + 1)), el("td", {}, r.started || ""), el("td", {}, r.status + (r.error ? ": " + r.error : "")), el("td", { class: "num" }, plain(r.duration_s, 3)),
        cols.map((m) => el("td", { class: "num", "data-metric": m, "data-value": figures[i][m] ? figures[i][m].value : null }, figures[i][m] ? figures[i][m].text : "")),
        el("td", {}, r.disturbed ? "yes" + (isObj(r.disturbed) ? " (busy " + plain(r.disturbed.busy_pct, 1) + "%)" : "") : isObj(r.background) ? "no (busy " + plain(r.background.busy_pct, 1) + "% before)" : "")));
    });
    detail.appendChild(el("div", { class: "scroll" }, rt));
    if (!runs.length) detail.appendChild(el("p", { class: "muted" }, "no repetition recorded"));
    const tp = runs.map((r) => ({ points: (r.intervals || []).map((iv) => [iv.end_s, iv.throughput_bps]) }));
    if (tp.some((s) => s.points.length)) {
      detail.appendChild(lineChart(tp, { title: "throughput per interval (payload received, Gbit/s), one line per repetition", xlabel: "seconds into the measured window (interval end)", ylabel: "Gbit/s", scale: 1e9, digits: 2 }));
      detail.appendChild(legend(runs.map((r, i) => "#" + (i + 1))));
      const pps = runs.map((r) => ({ points: (r.intervals || []).filter((iv) => iv.packets_per_s > 0).map((iv) => [iv.end_s, iv.packets_per_s]) }));
      if (pps.some((s) => s.points.length)) detail.appendChild(lineChart(pps, { title: "datagrams per second per interval (kpps)", xlabel: "seconds into the measured window", ylabel: "kpps", scale: 1e3, digits: 0 }));
    }
    const tps = runs.map((r) => ({ points: (isObj(r.rr) && Array.isArray(r.rr.intervals) ? r.rr.intervals : []).map((iv) => [iv.end_s, iv.transactions_per_s]) }));
    if (tps.some((s) => s.points.length)) {
      detail.appendChild(lineChart(tps, { title: "transactions per second per interval (by request time, thousands), one line per repetition", xlabel: "seconds into the measured window (interval end)", ylabel: "k trans/s", scale: 1e3, digits: 1 }));
      detail.appendChild(legend(runs.map((r, i) => "#" + (i + 1))));
    }
    const rr = rrSection(runs, figures);
    if (rr) detail.appendChild(rr);
    if (runs.length) detail.appendChild(cpuSection(runs));
    const prof = profileSection(runs);
    if (prof) detail.appendChild(prof);
    if (runs.length) detail.appendChild(nicSection(runs));
    if (cell.rfc2544) detail.appendChild(el("p", { class: "muted" }, "the frame-size table of this cell is under RFC 2544 frame-size tables"));
    detail.appendChild(settingsSection(cell, f));
    detail.appendChild(el("details", {}, el("summary", {}, "this cell as the results file has it (JSON)"), el("pre", {}, JSON.stringify(cell, null, 1))));
    detail.scrollIntoView({ block: "nearest" });
  }

  // The colour of a verdict: a difference, the same within the margin, no difference shown, nothing claimed.
  function verdictClass(v) {
    return v === "significant" ? "mark-bad" : v === "equivalent" ? "mark-same" : v === "not_significant" ? "mark-good" : "muted";
  }

  // ---- two files: the comparison ------------------------------------------------------------------------
  function compareSection(c) {
    const box = el("section", {}, el("h2", {}, "Compare: B/A of median " + c.metric));
    box.appendChild(el("p", { class: "lead" }, "A = " + c.label_a + ", B = " + c.label_b + "; cells matched by their settings (requested features, MTU, test)"));
    const mark = (met, dist) => (met === false ? " ?" : "") + (dist > 0 ? " !" : "");
    const t = el("table", { class: "compare" });
    t.appendChild(el("tr", {}, ["cell", "A", "B", "B/A", c.confidence + "% interval of B/A"].map((h) => el("th", {}, h))));
    for (const r of c.rows) {
      const cls = verdictClass(r.verdict);
      t.appendChild(el("tr", { "data-key-a": r.key_a, "data-key-b": r.key_b },
        el("td", {}, el("a", { href: "#nm-detail", onclick: () => showCell(0, r.key_a, null) }, r.key_a), r.key_b !== r.key_a ? el("span", { class: "muted" }, " / ", el("a", { href: "#nm-detail", onclick: () => showCell(1, r.key_b, null) }, r.key_b)) : null),
        el("td", { class: "num" }, r.a ? r.a.median_text + mark(r.precision_met_a, r.disturbed_a) : r.status_a),
        el("td", { class: "num" }, r.b ? r.b.median_text + mark(r.precision_met_b, r.disturbed_b) : r.status_b),
        el("td", { class: "num " + cls, "data-ratio": r.ratio }, r.ratio_text),
        el("td", { class: "num" }, r.interval_text)));
    }
    box.appendChild(el("div", { class: "scroll" }, t));
    box.appendChild(notes(c.notes.concat(["? after a figure: its cell's asked precision was not met; ! : it was measured under interference"])));
    if (c.only_a.length || c.only_b.length) {
      box.appendChild(el("h3", {}, "Cells found in one file only"));
      box.appendChild(table(["only in A (" + c.label_a + ")", "only in B (" + c.label_b + ")"],
        Array.from({ length: Math.max(c.only_a.length, c.only_b.length) }, (_, i) => [c.only_a[i] || "", c.only_b[i] || ""]), false));
    }
    return box;
  }

  function textReport(f) {
    const d = el("details", {}, el("summary", {}, "the same report as text (nicmatrix report " + f.label + ")"), el("pre", {}, f.text_report));
    if (f.against) d.appendChild(el("pre", {}, f.against.text_report));
    return d;
  }

  // ---- the page ----------------------------------------------------------------------------------------
  const first = D.files[0];
  document.title = "nicmatrix report: " + (first.config && first.config.name ? first.config.name : first.label) + (D.files.length > 1 ? " vs " + D.files[1].label : "");
  const pages = D.files.map((f, i) => {
    const box = el("div", { class: "file", id: "nm-file-" + i });
    box.appendChild(header(f));
    if (f.matrix) box.appendChild(matrixSection(f, i));
    const ft = frameTables(f);
    if (ft) box.appendChild(ft);
    box.appendChild(textReport(f));
    return box;
  });
  if (D.compare) {
    const cmp = compareSection(D.compare);
    const views = [cmp].concat(pages);
    const names = ["compare"].concat(D.files.map((f, i) => (i ? "B: " : "A: ") + f.label));
    const tabs = el("div", { class: "tabs" });
    const show = (k) => { views.forEach((v, j) => { v.style.display = j === k ? "" : "none"; }); [...tabs.children].forEach((b, j) => b.classList.toggle("on", j === k)); };
    names.forEach((n, k) => tabs.appendChild(el("button", { type: "button", onclick: () => show(k) }, n)));
    root.appendChild(tabs);
    for (const v of views) root.appendChild(v);
    show(0);
  } else {
    for (const p of pages) root.appendChild(p);
  }
  root.appendChild(el("div", { id: "nm-detail" }));
  root.appendChild(el("p", { class: "muted" }, "made by " + D.generator + "; every figure is the C++ report's (the same code as nicmatrix report and compare)."));
  document.body.setAttribute("data-ready", "1");
})();
