// The live run page (GET /): one self-contained HTML document, no external URL (clusters are
// often offline). It polls /api/status once a second, reads /api/run once and follows
// /api/events; it shows aggregates only, so it stays fast at any suite size. Tracks still running
// come first; complete ones are folded below them. The scores panel keeps a running v1 and pillar
// mean of the headlines as they arrive (the scorer's own aggregation: an unweighted mean of the
// scored tracks' headlines), final once every track is scored.

export const LIVE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>udm-orch run</title>
<link rel="icon" href="data:,">
<style>
  :root { --bg:#0f1419; --panel:#171d24; --line:#2a323c; --fg:#e6e9ed; --dim:#8b96a3; --ok:#3fb950; --warn:#d29922; --bad:#f85149; --bar:#388bfd; }
  * { box-sizing: border-box; }
  body { margin:0; background:var(--bg); color:var(--fg); font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
  header { padding:14px 20px; border-bottom:1px solid var(--line); display:flex; flex-wrap:wrap; gap:8px 24px; align-items:baseline; }
  header h1 { font-size:18px; margin:0; }
  .kv { color:var(--dim); } .kv b { color:var(--fg); font-weight:600; }
  main { padding:16px 20px; display:grid; grid-template-columns: minmax(0, 5fr) minmax(0, 2fr); gap:16px; }
  section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:12px 14px; min-width:0; }
  section h2 { font-size:13px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); margin:0 0 10px; }
  .wide { grid-column: 1 / -1; }
  .bar { height:18px; background:#0b0f13; border:1px solid var(--line); border-radius:4px; overflow:hidden; }
  .bar > div { height:100%; background:var(--bar); width:0; transition: width .4s; }
  .mini { height:8px; width:80px; display:inline-block; vertical-align:middle; }
  .big { font-size:22px; font-weight:600; }
  .row { display:flex; flex-wrap:wrap; gap:6px 24px; margin-top:8px; }
  table { width:100%; border-collapse:collapse; font-variant-numeric: tabular-nums; }
  th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); white-space:nowrap; }
  th { color:var(--dim); font-weight:500; font-size:12px; }
  td.n, th.n { text-align:right; }
  .scroll { max-height:520px; overflow:auto; }
  .state { padding:2px 8px; border-radius:10px; font-size:12px; font-weight:600; background:var(--line); }
  .state.running { background:#1f6feb; } .state.complete { background:#238636; } .state.failed { background:#da3633; }
  .state.draining, .state.cancelled { background:#9e6a03; }
  .yes { color:var(--ok); } .no { color:var(--bad); }
  #feed { list-style:none; margin:0; padding:0; max-height:520px; overflow:auto; font-size:13px; }
  #feed li { padding:3px 0; border-bottom:1px solid var(--line); }
  #feed time { color:var(--dim); margin-right:8px; }
  .err { color:var(--bad); }
  #feed li.replayed { opacity:.6; }
  tr.left td { color:var(--dim); }
  tr.fold td { cursor:pointer; color:var(--dim); }
  tbody.done.folded { display:none; }
  #sweep:empty { display:none; }
</style>
</head>
<body>
<header>
  <h1>udm-orch</h1>
  <span class="kv">run <b id="run-id">-</b></span>
  <span id="state" class="state">-</span>
  <span class="kv">model <b id="model">-</b></span>
  <span class="kv">method <b id="method">-</b></span>
  <span class="kv">elapsed <b id="elapsed">-</b></span>
  <span class="kv">resumed <b id="resumed">-</b></span>
  <span class="kv" id="sweep"></span>
  <span id="conn" class="kv"></span>
</header>
<main>
  <section class="wide">
    <h2>Progress</h2>
    <div id="progress" class="bar" data-committed="0" data-total="0"><div id="progress-fill"></div></div>
    <div class="row">
      <span class="big" id="progress-text">-</span>
      <span class="kv">records/s <b id="rate">-</b></span>
      <span class="kv">ETA <b id="eta">-</b></span>
      <span class="kv">tracks complete <b id="tracks-done">-</b></span>
      <span class="kv">agents ready <b id="agents-ready">-</b></span>
    </div>
  </section>
  <section class="wide">
    <h2>Scores</h2>
    <div class="row" id="summary"><span class="kv">no track scored yet</span></div>
    <table id="pillars"><tbody></tbody></table>
  </section>
  <section>
    <h2>Tracks</h2>
    <div class="scroll"><table id="tracks">
      <thead><tr><th>track</th><th>family</th><th class="n">committed</th><th class="n">records</th><th></th><th>headline</th></tr></thead>
      <tbody class="running"></tbody>
      <tbody class="fold"></tbody>
      <tbody class="done folded"></tbody>
    </table></div>
  </section>
  <section>
    <h2>Events</h2>
    <ul id="feed"></ul>
  </section>
  <section>
    <h2>Agents</h2>
    <div class="scroll"><table id="agents">
      <thead><tr><th>agent</th><th>ready</th><th class="n">units</th><th class="n">credit</th><th class="n">results</th><th class="n">rejects</th><th class="n">engine queue</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section>
    <h2>Scheduler</h2>
    <table id="scheduler"><tbody></tbody></table>
    <h2 style="margin-top:14px">Cost</h2>
    <table id="cost"><tbody></tbody></table>
  </section>
</main>
<script>
"use strict";
(function () {
  var token = new URLSearchParams(location.search).get("token");
  var q = token ? "?token=" + encodeURIComponent(token) : "";
  var headers = token ? { Authorization: "Bearer " + token } : {};
  var scores = {};
  var run = null;
  var last = null;
  var shownRun = null;
  var doneOpen = false;
  var $ = function (id) { return document.getElementById(id); };
  var num = function (v) { return v === undefined || v === null ? undefined : Number(v); };
  var fmt = function (n, d) { return n === undefined || n === null || !isFinite(n) ? "-" : Number(n).toLocaleString("en-US", { maximumFractionDigits: d === undefined ? 0 : d, minimumFractionDigits: d === undefined ? 0 : d }); };
  var dur = function (s) {
    if (s === undefined || s === null || !isFinite(s)) return "-";
    s = Math.max(0, Math.round(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h " : "") + (h || m ? m + "m " : "") + r + "s";
  };
  var esc = function (s) { return String(s).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; }); };
  var cell = function (v, cls) { return "<td" + (cls ? ' class="' + cls + '"' : "") + ">" + v + "</td>"; };
  var kvRows = function (rows) { return rows.map(function (r) { return "<tr><th>" + esc(r[0]) + '</th><td class="n" data-key="' + esc(r[0]) + '">' + r[1] + "</td></tr>"; }).join(""); };
  var headline = function (t) {
    var s = scores[t];
    if (!s) return "";
    if (s.value === null) return esc(s.metric) + " n/a";
    var ci = s.ci_low !== null && s.ci_high !== null ? ' <span class="kv">[' + fmt(s.ci_low, 3) + ", " + fmt(s.ci_high, 3) + "]</span>" : "";
    return esc(s.metric) + " <b>" + fmt(s.value, 4) + "</b>" + ci;
  };

  function render(s) {
    // A sweep serves its runs one after the other on this page: a new run starts the page afresh.
    if (s.run_id && shownRun && s.run_id !== shownRun) { location.reload(); return; }
    if (s.run_id) shownRun = s.run_id;
    // A page opened before its run was served (the suite still read, a sweep between runs) asks again.
    if (s.run_id && (!run || run.runId !== s.run_id)) loadRun();
    var committed = num(s.records_committed), total = num(s.records_total);
    $("run-id").textContent = s.run_id || "-";
    var st = $("state"); st.textContent = s.state; st.className = "state " + s.state;
    $("elapsed").textContent = dur(s.elapsed_seconds);
    $("resumed").textContent = fmt(num(s.records_resumed));
    var p = $("progress"); p.dataset.committed = String(committed); p.dataset.total = String(total);
    $("progress-fill").style.width = (total > 0 ? (100 * committed) / total : 0).toFixed(2) + "%";
    $("progress-text").textContent = fmt(committed) + " / " + fmt(total) + " records" + (total > 0 ? " (" + fmt((100 * committed) / total, 1) + "%)" : "");
    $("rate").textContent = fmt(s.records_per_second, 1);
    var t = s.totals || {};
    var eta = t.eta_known ? num(t.eta_seconds) : undefined;
    $("eta").textContent = committed >= total && total > 0 ? "done" : dur(eta);
    $("tracks-done").textContent = s.tracks.filter(function (t) { return t.complete; }).length + " / " + s.tracks.length;
    $("agents-ready").textContent = s.agents.filter(function (a) { return a.ready; }).length + " / " + s.agents.length;
    $("model").textContent = modelText(s.agents);

    // Tracks with work left first (the most advanced on top), then the complete ones, folded.
    var row = function (t) {
      var c = num(t.committed), r = num(t.records);
      return '<tr data-track="' + esc(t.track) + '" data-complete="' + (t.complete ? "1" : "0") + '">' + cell(esc(t.track)) + cell(esc(t.family)) +
        cell(fmt(c), "n committed") + cell(fmt(r), "n records") +
        cell('<div class="bar mini"><div style="width:' + (r > 0 ? (100 * c) / r : 0).toFixed(1) + '%"></div></div>') + cell(headline(t.track), "headline") + "</tr>";
    };
    var share = function (t) { return num(t.records) > 0 ? num(t.committed) / num(t.records) : 0; };
    var open = s.tracks.filter(function (t) { return !t.complete; }).sort(function (a, b) { return share(b) - share(a); });
    var done = s.tracks.filter(function (t) { return t.complete; });
    var bodies = $("tracks").tBodies;
    bodies[0].innerHTML = open.map(row).join("");
    bodies[1].innerHTML = done.length === 0 ? "" : '<tr class="fold" id="tracks-fold"><td colspan="6">' + (doneOpen ? "&#9662; " : "&#9656; ") + done.length + " complete track" + (done.length === 1 ? "" : "s") + (doneOpen ? "" : " (show)") + "</td></tr>";
    bodies[2].innerHTML = done.map(row).join("");
    bodies[2].className = "done" + (doneOpen ? "" : " folded");
    renderSummary(s);

    // Attached agents, then those that left lately (greyed, with why).
    var listed = s.agents.concat(s.agents_left || []);
    $("agents").tBodies[0].innerHTML = listed.length === 0 ? '<tr><td colspan="7" class="kv">no agents attached</td></tr>' : listed.map(function (a) {
      var q = a.engine_waiting !== undefined ? fmt(num(a.engine_waiting)) + " waiting / " + fmt(num(a.engine_running)) + " running" : "-";
      var state = a.left_reason ? '<span class="no" title="' + esc(a.left_at) + '">left: ' + esc(a.left_reason) + "</span>" : a.ready ? '<span class="yes">yes</span>' : '<span class="no">no</span>';
      return '<tr data-agent="' + esc(a.agent_id) + '"' + (a.left_reason ? ' class="left" data-left="1"' : "") + ">" + cell(esc(a.agent_id)) + cell(state) +
        cell(fmt(num(a.inflight_units)), "n") + cell(fmt(num(a.credit)), "n") + cell(fmt(num(a.results)), "n") + cell(fmt(num(a.rejected)), "n") + cell(q, "n") + "</tr>";
    }).join("");

    var reasons = Object.keys(s.rejected_by_reason || {}).filter(function (k) { return Number(s.rejected_by_reason[k]) > 0; });
    $("scheduler").tBodies[0].innerHTML = kvRows([
      ["units queued", fmt(s.units_queued)], ["units in flight", fmt(s.units_inflight)], ["leases expired", fmt(num(s.leases_expired))],
      ["backup units", fmt(num(s.backup_units))], ["results rejected", fmt(num(s.results_rejected))],
      ["rejects by reason", reasons.length ? esc(reasons.map(function (k) { return k + "=" + s.rejected_by_reason[k]; }).join(" ")) : "none"],
      ["duplicates dropped", fmt(num(s.results_duplicate))], ["records given up", fmt(num(s.records_given_up))]
    ]);

    var gpu = num(t.gpu_seconds), price = run ? run.gpuHourUsd : 0;
    var usd = gpu !== undefined && price > 0 ? (gpu / 3600) * price : undefined;
    var done = committed - num(s.records_resumed);
    $("cost").tBodies[0].innerHTML = kvRows([
      ["GPU-seconds", fmt(gpu, 0)], ["USD", usd === undefined ? (price > 0 ? "-" : "price unknown (--gpu-hour-usd)") : "$" + fmt(usd, 2)],
      ["USD per 1,000 records", usd !== undefined && done > 0 ? "$" + fmt((1000 * usd) / done, 3) : "-"],
      ["prompt tokens", fmt(num(t.prompt_tokens))], ["completion tokens", fmt(num(t.completion_tokens))],
      ["cached tokens", t.cached_tokens_known ? fmt(num(t.cached_tokens)) : "unknown"],
      ["record latency p50 / p95", t.latency_count ? fmt(num(t.latency_p50_ms) / 1000, 2) + " s / " + fmt(num(t.latency_p95_ms) / 1000, 2) + " s" : "-"]
    ]);
  }

  // The model asked for, or else the models the attached agents' engines report serving.
  function modelText(agents) {
    if (run && run.model) return run.model;
    var seen = {};
    agents.forEach(function (a) { if (a.model) seen[a.model] = true; });
    var models = Object.keys(seen).sort();
    return models.length ? models.join(", ") + " (as served)" : run ? "(engine's own; no agent attached)" : "-";
  }

  // Running means of the headlines scored so far: v1 (tracks that count in it) and per pillar.
  function renderSummary(s) {
    var names = Object.keys(scores);
    if (names.length === 0) return;
    var mean = function (xs) { return xs.length ? xs.reduce(function (a, b) { return a + b; }, 0) / xs.length : undefined; };
    var v1 = [], pillars = {};
    names.forEach(function (n) {
      var e = scores[n];
      if (e.value === null || e.value === undefined) return;
      if (e.v1 !== false) v1.push(e.value);
      if (e.pillar) (pillars[e.pillar] = pillars[e.pillar] || []).push(e.value);
    });
    var inScope = s && s.tracks ? s.tracks.length : 0;
    var final = inScope > 0 && names.length >= inScope;
    $("summary").innerHTML = '<span class="kv">v1 mean <b id="v1-mean" class="big">' + fmt(mean(v1), 4) + "</b></span>" +
      '<span class="kv">' + (final ? "final" : "so far") + ': <b id="scored-tracks">' + names.length + "</b> of " + (inScope || "?") + " tracks scored, " + v1.length + " in the v1 mean</span>";
    $("pillars").tBodies[0].innerHTML = Object.keys(pillars).sort().map(function (p) {
      return '<tr data-pillar="' + esc(p) + '"><th>' + esc(p) + '</th><td class="n">' + fmt(mean(pillars[p]), 4) + '</td><td class="kv">' + pillars[p].length + " track" + (pillars[p].length === 1 ? "" : "s") + "</td></tr>";
    }).join("");
  }

  function describe(e) {
    switch (e.type) {
      case "track_complete": return "track <b>" + esc(e.track) + "</b> complete (" + fmt(e.records) + " records)";
      case "track_scored": return "track <b>" + esc(e.track) + "</b> scored: " + esc(e.metric) + " " + (e.value === null ? "n/a" : fmt(e.value, 4));
      case "agent_joined": return "agent <b>" + esc(e.agentId) + "</b> joined" + (e.model ? " (" + esc(e.model) + ")" : "");
      case "agent_left": return "agent <b>" + esc(e.agentId) + "</b> left: " + esc(e.reason);
      case "agent_ready": return "agent <b>" + esc(e.agentId) + "</b> " + (e.ready ? "ready" : '<span class="no">not ready</span>');
      case "unit_expired": return '<span class="no">lease expired</span>: ' + esc(e.unitId) + " (agent " + esc(e.agentId) + ")";
      case "run_complete": return "run <b>" + esc(e.state) + "</b>" + (e.reason ? ": " + esc(e.reason) : "");
      case "resumed": return "coordinator <b>resumed</b> the run (session " + fmt(e.session) + "): " + fmt(e.recordsCommitted) + " of " + fmt(e.recordsTotal) + " records already committed, " + dur(e.elapsedBeforeSeconds) + " before";
      default: return esc(e.type);
    }
  }

  function onEvent(msg) {
    var e;
    try { e = JSON.parse(msg.data); } catch (_) { return; }
    if (e.type === "track_scored") {
      scores[e.track] = e;
      // The headline shows as the score arrives, not at the next status poll.
      if (last) render(last);
    }
    var li = document.createElement("li");
    li.dataset.type = e.type;
    if (e.replayed) li.className = "replayed";
    li.innerHTML = "<time>" + esc(String(e.at).slice(11, 19)) + "</time>" + describe(e);
    var feed = $("feed");
    feed.insertBefore(li, feed.firstChild);
    while (feed.children.length > 200) feed.removeChild(feed.lastChild);
  }

  function poll() {
    fetch("api/status", { headers: headers, cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (s) { last = s; render(s); $("conn").textContent = ""; $("conn").className = "kv"; })
      .catch(function (err) { $("conn").textContent = "status unavailable: " + err.message; $("conn").className = "err"; })
      .then(function () { setTimeout(poll, 1000); });
  }

  var loadingRun = false;
  function loadRun() {
    if (loadingRun) return;
    loadingRun = true;
    fetch("api/run", { headers: headers, cache: "no-store" }).then(function (r) { return r.ok ? r.json() : null; }).then(function (r) {
    loadingRun = false;
    if (!r) return;
    run = r;
    $("model").textContent = modelText(last ? last.agents : []);
    $("sweep").innerHTML = r.sweep ? "sweep run <b>" + esc(r.sweep.cell) + "</b> (" + fmt(r.sweep.index) + " of " + fmt(r.sweep.of) + ")" : "";
    $("method").textContent = r.method + (r.seeds && r.seeds.length ? " seeds " + r.seeds.join(",") : "");
    }).catch(function () { loadingRun = false; });
  }
  loadRun();
  var es = new EventSource("api/events" + q);
  $("tracks").addEventListener("click", function (ev) {
    if (!ev.target.closest || !ev.target.closest("#tracks-fold")) return;
    doneOpen = !doneOpen;
    if (last) render(last);
  });
  ["track_complete", "track_scored", "agent_joined", "agent_left", "agent_ready", "unit_expired", "run_complete", "resumed"].forEach(function (t) { es.addEventListener(t, onEvent); });
  poll();
})();
</script>
</body>
</html>
`;
