// The status page's script: it follows the server's snapshots over Server-Sent Events on the
// page's own path (?format=sse) and shows them. Everything is written with textContent and
// setAttribute, never parsed as HTML. The chart keeps the last minute of snapshots in memory:
// it starts empty when the page is opened.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const span = 60; // seconds the chart covers

  const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const fmtInt = (n) => integer.format(n);
  const fmtRate = (r) => (r == null ? "–" : r < 10 ? r.toFixed(1) : integer.format(r));
  const fmtBytes = (n) => {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? String(n) : n.toFixed(n < 10 ? 2 : 1)) + " " + units[i];
  };
  const fmtSeconds = (s) =>
    s === 0 ? "0" : s < 1e-3 ? (s * 1e6).toFixed(0) + " µs" : s < 1 ? (s * 1e3).toFixed(1) + " ms" : s.toFixed(2) + " s";

  // The columns of the two per-loop tables: a heading and how to show a loop's value.
  const stateColumns = [
    ["Open", (l) => l.conns.open],
    ["Idle", (l) => l.conns.idle],
    ["Reading", (l) => l.conns.reading],
    ["Running", (l) => l.conns.running],
    ["Parked", (l) => l.conns.parked],
    ["Working", (l) => l.conns.working],
    ["Continuations", (l) => l.conns.continuations],
    ["Writing", (l) => l.conns.writing],
    ["Closing", (l) => l.conns.closing],
    ["Handed over", (l) => l.conns.handed_over],
    ["HTTP/2", (l) => l.conns.http2],
    ["Streams", (l) => l.conns.streams],
    ["Parked streams", (l) => l.conns.parked_streams],
    ["TLS", (l) => l.conns.tls],
  ].map(([h, f]) => [h, (l) => fmtInt(f(l)), f]);
  const workColumns = [
    ["Requests/s", (l) => fmtRate(l.rates && l.rates.requests_per_second)],
    ["Requests", (l) => fmtInt(l.requests)],
    ["Accepted", (l) => fmtInt(l.accepted)],
    ["Refused", (l) => fmtInt(l.refused.total)],
    ["Panics", (l) => fmtInt(l.panics)],
    ["Stalls", (l) => fmtInt(l.stalls)],
    ["Longest turn", (l) => fmtSeconds(l.longest_turn_seconds)],
    ["Turns", (l) => fmtInt(l.turns)],
    ["Bytes in", (l) => fmtBytes(l.bytes_in)],
    ["Bytes out", (l) => fmtBytes(l.bytes_out)],
  ];
  const refusals = [
    ["400", "Bad Request", "bad_request"],
    ["408", "Request Timeout", "request_timeout"],
    ["413", "Content Too Large", "content_too_large"],
    ["414", "URI Too Long", "uri_too_long"],
    ["417", "Expectation Failed", "expectation_failed"],
    ["431", "Header Fields Too Large", "header_fields_too_large"],
    ["501", "Not Implemented", "not_implemented"],
    ["503", "Service Unavailable", "unavailable"],
    ["505", "HTTP Version Not Supported", "version_not_supported"],
    ["other", "any other status", "other"],
  ];

  function el(tag, text, className) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (className) e.className = className;
    return e;
  }

  function heading(table, columns) {
    const row = table.tHead.rows[0];
    row.append(el("th", "Loop"));
    for (const [h] of columns) {
      const th = el("th", h, "num");
      th.scope = "col";
      row.append(th);
    }
  }
  heading($("conns"), stateColumns);
  heading($("work"), workColumns);

  // loopRow is one row of a per-loop table: the loop's number (with a mark when its figures
  // are old), then its columns.
  function loopRow(l, columns, total) {
    const tr = el("tr");
    let name = total ? "All" : String(l.loop);
    if (l.stopped) name += " (stopped)";
    else if (l.stale && !total) name += " (stale)";
    if (l.stale && !total) tr.className = "stale";
    const th = el("th", name);
    th.scope = "row";
    tr.append(th);
    for (const [, show, raw] of columns) {
      const td = el("td", show(l), "num");
      if (raw && raw(l) === 0) td.classList.add("zero");
      tr.append(td);
    }
    return tr;
  }

  function fillLoops(table, sn, columns) {
    table.tBodies[0].replaceChildren(...sn.loops.map((l) => loopRow(l, columns, false)));
    table.tFoot.replaceChildren(loopRow(sn.total, columns, true));
  }

  function fillRefusals(r) {
    const rows = refusals.map(([status, reason, key]) => {
      const tr = el("tr");
      tr.append(el("td", status), el("td", reason), el("td", fmtInt(r[key]), r[key] === 0 ? "num zero" : "num"));
      return tr;
    });
    $("refusals").tBodies[0].replaceChildren(...rows);
    const total = el("tr");
    total.append(el("th", "All"), el("td"), el("td", fmtInt(r.total), "num"));
    $("refusals").tFoot.replaceChildren(total);
  }

  // The chart's history: one point per snapshot, by the server's clock.
  const history = [];

  // niceMax rounds a series' largest value up to 1, 2 or 5 times a power of ten.
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
    return 10 * p;
  }

  function drawChart(now) {
    while (history.length && history[0].t < now - span * 1000) history.shift();
    const x0 = 40, y0 = 10, w = 820, h = 140;
    const maxRps = niceMax(Math.max(0, ...history.map((p) => p.rps ?? 0)));
    const maxOpen = niceMax(Math.max(0, ...history.map((p) => p.open)));
    const x = (t) => (x0 + w - ((now - t) / (span * 1000)) * w).toFixed(1);
    const y = (v, m) => (y0 + h - (v / m) * h).toFixed(1);
    const rps = history.filter((p) => p.rps != null).map((p) => x(p.t) + "," + y(p.rps, maxRps));
    const open = history.map((p) => x(p.t) + "," + y(p.open, maxOpen));
    $("line-rps").setAttribute("points", rps.join(" "));
    $("line-open").setAttribute("points", open.join(" "));
    $("max-rps").textContent = fmtInt(maxRps);
    $("max-open").textContent = fmtInt(maxOpen);
    $("chart").dataset.points = String(history.length);
  }

  function render(sn) {
    const t = sn.total;
    $("open").textContent = fmtInt(t.conns.open);
    $("rps").textContent = fmtRate(t.rates && t.rates.requests_per_second);
    $("requests").textContent = fmtInt(t.requests);
    $("accepted").textContent = fmtInt(t.accepted);
    $("refused").textContent = fmtInt(t.refused.total);
    $("panics").textContent = fmtInt(t.panics);
    $("stalls").textContent = fmtInt(t.stalls);
    $("longest").textContent = fmtSeconds(t.longest_turn_seconds);
    $("bytes-in").textContent = fmtBytes(t.bytes_in);
    $("bytes-out").textContent = fmtBytes(t.bytes_out);

    fillLoops($("conns"), sn, stateColumns);
    fillLoops($("work"), sn, workColumns);
    fillRefusals(t.refused);

    $("tls-handshakes").textContent = fmtInt(t.tls.handshakes);
    $("tls-failures").textContent = fmtInt(t.tls.handshake_failures);
    $("tls-abandoned").textContent = fmtInt(t.tls.handshakes_abandoned);
    $("tls-conns").textContent = fmtInt(t.conns.tls);
    $("tls-handshaking").textContent = fmtInt(t.conns.tls_handshaking);

    const m = sn.memory;
    $("mem-total").textContent = fmtBytes(m.total_bytes);
    $("mem-heap").textContent = fmtBytes(m.heap_object_bytes);
    $("mem-objects").textContent = fmtInt(m.heap_objects);
    $("mem-goal").textContent = fmtBytes(m.heap_goal_bytes);
    $("mem-gc").textContent = fmtInt(m.gc_cycles);
    $("mem-goroutines").textContent = fmtInt(m.goroutines);

    const now = Date.parse(sn.time);
    history.push({ t: now, rps: t.rates ? t.rates.requests_per_second : null, open: t.conns.open });
    drawChart(now);
    $("asof").textContent = "as of " + new Date(now).toLocaleTimeString() + (t.stopped ? ", server stopped" : "");
  }

  function setStatus(state) {
    $("status").dataset.state = state;
    $("status").textContent = state;
  }

  const events = new EventSource(location.pathname + "?format=sse");
  events.addEventListener("open", () => setStatus("live"));
  events.addEventListener("error", () => setStatus(events.readyState === EventSource.CLOSED ? "closed" : "reconnecting"));
  events.addEventListener("snapshot", (e) => {
    setStatus("live");
    render(JSON.parse(e.data));
  });
})();
