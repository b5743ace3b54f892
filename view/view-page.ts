// The page of `udm-orch view` (GET /): one self-contained HTML document, no external URL (it works
// offline). Three views behind the URL's hash: the run's tracks (#/), a track's records with
// filters and its confusion matrix (#/t/<track>?status=wrong&gold=..&pred=..&q=..&offset=..), and
// one record (#/t/<track>/r/<id>). It reads only this server's /api, a page of records at a time.

export const VIEW_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>udm-orch view</title>
<link rel="icon" href="data:,">
<style>
  :root { --bg:#0f1419; --panel:#171d24; --line:#2a323c; --fg:#e6e9ed; --dim:#8b96a3; --ok:#3fb950; --warn:#d29922; --bad:#f85149; --bar:#388bfd; --gold:#f0c674; }
  * { box-sizing: border-box; }
  body { margin:0; background:var(--bg); color:var(--fg); font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
  header { padding:12px 20px; border-bottom:1px solid var(--line); display:flex; flex-wrap:wrap; gap:8px 24px; align-items:baseline; }
  header h1 { font-size:18px; margin:0; } header a { color:var(--fg); text-decoration:none; }
  .kv { color:var(--dim); } .kv b { color:var(--fg); font-weight:600; }
  main { padding:16px 20px; }
  section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:12px 14px; margin-bottom:16px; }
  section h2 { font-size:13px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); margin:0 0 10px; }
  a { color:#58a6ff; }
  table { border-collapse:collapse; font-variant-numeric: tabular-nums; }
  th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
  th { color:var(--dim); font-weight:500; font-size:12px; } td.n, th.n { text-align:right; }
  .filters { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin-bottom:10px; }
  .filters a.on { background:var(--bar); color:#fff; }
  .filters a { padding:2px 10px; border:1px solid var(--line); border-radius:12px; text-decoration:none; }
  select, input { background:#0b0f13; color:var(--fg); border:1px solid var(--line); border-radius:4px; padding:3px 6px; }
  .badge { padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; background:var(--line); margin-right:4px; }
  .badge.right { background:#238636; } .badge.wrong { background:#da3633; } .badge.skipped, .badge.errored { background:#9e6a03; } .badge.missing { background:#6e7681; }
  .pbar { display:inline-block; width:220px; height:12px; background:#0b0f13; border:1px solid var(--line); border-radius:3px; vertical-align:middle; overflow:hidden; }
  .pbar > div { height:100%; background:var(--bar); }
  tr.gold td { color:var(--gold); } tr.gold .pbar > div { background:var(--gold); }
  .state { white-space:pre-wrap; font-family:ui-monospace, monospace; font-size:13px; background:#0b0f13; padding:8px; border-radius:4px; margin:4px 0 10px; max-height:420px; overflow:auto; }
  .cm td.n { min-width:36px; } .cm td.diag { color:var(--ok); font-weight:600; }
  .err { color:var(--bad); } .dim { color:var(--dim); }
</style>
</head>
<body>
<header>
  <h1><a href="#/">udm-orch view</a></h1>
  <span class="kv">run <b id="run-id">-</b></span>
  <span class="kv">model <b id="model">-</b></span>
  <span class="kv">method <b id="method">-</b></span>
  <span class="kv">v1 mean <b id="v1">-</b></span>
  <span class="kv" id="scope"></span>
</header>
<main id="main"><p class="dim">loading…</p></main>
<script>
(function () {
  "use strict";
  var token = new URLSearchParams(location.search).get("token");
  var headers = token ? { Authorization: "Bearer " + token } : {};
  var $ = function (id) { return document.getElementById(id); };
  function esc(s) { return String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function fmt(x, d) { return x === null || x === undefined ? "n/a" : Number(x).toFixed(d === undefined ? 4 : d); }
  function api(path) {
    return fetch(path, { headers: headers, cache: "no-store" }).then(function (r) {
      return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || ("HTTP " + r.status)); return b; });
    });
  }
  function enc(s) { return encodeURIComponent(s); }
  function route() {
    var h = location.hash.replace(/^#/, "") || "/";
    var qi = h.indexOf("?");
    var path = qi >= 0 ? h.slice(0, qi) : h;
    var query = new URLSearchParams(qi >= 0 ? h.slice(qi + 1) : "");
    var p = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (p[0] === "t" && p.length === 2) return trackView(p[1], query);
    if (p[0] === "t" && p.length === 4 && p[2] === "r") return recordView(p[1], p[3], query.get("full") === "1");
    return tracksView();
  }
  function fail(e) { $("main").innerHTML = '<section><p class="err" id="error">' + esc(e.message) + "</p></section>"; }

  api("/api/run").then(function (r) {
    $("run-id").textContent = r.run_id;
    $("model").textContent = r.model || "-";
    $("method").textContent = r.method.method + (r.method.seeds.length ? " seeds " + r.method.seeds.join(",") : "");
    var s = r.summary || {};
    var mean = s.v1_mean !== undefined && s.v1_mean !== null ? s.v1_mean : s.v1_mean_partial;
    $("v1").textContent = fmt(mean) + (r.v1_ci && r.v1_ci.ci_low !== null ? " [" + fmt(r.v1_ci.ci_low) + ", " + fmt(r.v1_ci.ci_high) + "]" : "") + (s.v1_mean === null ? " (partial)" : "");
    $("scope").innerHTML = r.tracks + " tracks" + (r.limit ? ' · <b id="limited">limited scope: ' + r.limit + " records per track</b>" : "");
  }).catch(fail);

  function tracksView() {
    api("/api/tracks").then(function (ts) {
      $("main").innerHTML = '<section><h2>Tracks</h2><table id="tracks"><thead><tr><th>track</th><th>family</th><th class="n">records</th><th>headline</th><th class="n">value</th><th>95% CI</th><th class="n">missing</th></tr></thead><tbody>' +
        ts.map(function (t) {
          var h = t.headline;
          return '<tr data-track="' + esc(t.track) + '"><td><a class="track-link" href="#/t/' + enc(t.track) + '">' + esc(t.track) + "</a></td><td>" + esc(t.family) + '</td><td class="n">' + esc(t.records === null ? "-" : t.records) +
            "</td><td>" + esc(h ? h.metric : "not scored") + '</td><td class="n">' + (h ? fmt(h.value) : "-") + "</td><td>" + (h && h.ci_low !== null ? "[" + fmt(h.ci_low) + ", " + fmt(h.ci_high) + "]" : "") + '</td><td class="n">' + esc(t.missing === null ? "-" : t.missing) + "</td></tr>";
        }).join("") + "</tbody></table></section>";
    }).catch(fail);
  }

  function trackHash(track, q) { var s = q.toString(); return "#/t/" + enc(track) + (s ? "?" + s : ""); }

  function trackView(track, q) {
    var params = new URLSearchParams(q);
    Promise.all([api("/api/tracks/" + enc(track) + "/records?" + params.toString()), api("/api/tracks/" + enc(track) + "/confusion")]).then(function (res) {
      var l = res[0], cm = res[1];
      var status = q.get("status") || "all";
      var pills = ["all", "wrong", "right", "skipped", "errored", "missing"].map(function (s) {
        var nq = new URLSearchParams(q); nq.delete("offset"); if (s === "all") nq.delete("status"); else nq.set("status", s);
        return '<a class="status-filter' + (s === status ? " on" : "") + '" data-status="' + s + '" href="' + trackHash(track, nq) + '">' + s + "</a>";
      }).join("");
      var opts = function (name) {
        return '<select id="' + name + '"><option value="">' + name + ": any</option>" + l.labels.map(function (x) { return '<option value="' + esc(x) + '"' + (q.get(name) === x ? " selected" : "") + ">" + esc(x) + "</option>"; }).join("") + "</select>";
      };
      var rows = l.records.map(function (r) {
        return '<tr data-id="' + esc(r.id) + '"><td><a class="record-link" href="#/t/' + enc(track) + "/r/" + enc(r.id) + '">' + esc(r.id) + "</a></td><td>" + esc(r.gold === null ? "-" : r.gold) + "</td><td>" + esc(r.predicted === null ? "-" : r.predicted) + "</td><td>" +
          r.status.map(function (s) { return '<span class="badge ' + s + '">' + s + "</span>"; }).join("") + "</td></tr>";
      }).join("");
      var off = l.offset, more = off + l.records.length < l.matched;
      var pager = function (o) { var nq = new URLSearchParams(q); nq.set("offset", String(Math.max(0, o))); return trackHash(track, nq); };
      var html = '<section><h2>' + esc(track) + " · " + l.total + " records · headline " + esc(l.headline_key || l.kind) + "</h2>" +
        '<div class="filters">' + pills + (l.labels.length ? opts("gold") + opts("pred") : "") + '<input id="search" placeholder="search id" value="' + esc(q.get("q") || "") + '"></div>' +
        '<p class="kv" id="matched">' + l.matched + " match · showing " + (l.records.length ? off + 1 : 0) + "–" + (off + l.records.length) +
        (off > 0 ? ' · <a id="prev" href="' + pager(off - l.limit) + '">prev</a>' : "") + (more ? ' · <a id="next" href="' + pager(off + l.limit) + '">next</a>' : "") + "</p>" +
        '<table id="records"><thead><tr><th>id</th><th>gold</th><th>predicted</th><th>status</th></tr></thead><tbody>' + rows + "</tbody></table></section>";
      if (cm.labels.length) {
        html += '<section><h2>Confusion matrix (' + esc(cm.headline_key) + ': gold rows, predicted columns)</h2><table class="cm" id="confusion"><thead><tr><th>gold \\\\ pred</th>' +
          cm.labels.map(function (x) { return '<th class="n">' + esc(x) + "</th>"; }).join("") + '<th class="n">missing</th></tr></thead><tbody>' +
          cm.labels.map(function (g, i) {
            return "<tr><th>" + esc(g) + "</th>" + cm.counts[i].map(function (c, j) {
              var nq = new URLSearchParams(); nq.set("gold", g); nq.set("pred", cm.labels[j]);
              return '<td class="n' + (i === j ? " diag" : "") + '">' + (c ? '<a href="' + trackHash(track, nq) + '">' + c + "</a>" : "0") + "</td>";
            }).join("") + '<td class="n">' + cm.missing[i] + "</td></tr>";
          }).join("") + "</tbody></table></section>";
      }
      $("main").innerHTML = html;
      var set = function (name, value) { var nq = new URLSearchParams(q); nq.delete("offset"); if (value) nq.set(name, value); else nq.delete(name); location.hash = trackHash(track, nq); };
      if ($("gold")) $("gold").onchange = function () { set("gold", this.value); };
      if ($("pred")) $("pred").onchange = function () { set("pred", this.value); };
      $("search").onchange = function () { set("q", this.value); };
    }).catch(fail);
  }

  function bar(p) { return '<span class="pbar"><div style="width:' + (p === null ? 0 : Math.max(0, Math.min(1, p)) * 100).toFixed(1) + '%"></div></span> ' + (p === null ? "-" : fmt(p, 3)); }

  function recordView(track, id, full) {
    api("/api/tracks/" + enc(track) + "/records/" + enc(id) + (full ? "?full=1" : "")).then(function (r) {
      var res = r.result || {};
      var head = '<section><h2><a href="#/t/' + enc(track) + '">' + esc(track) + "</a> · record</h2><p><b id=\\"record-id\\">" + esc(r.id) + "</b> " +
        r.status.map(function (s) { return '<span class="badge ' + s + '">' + s + "</span>"; }).join("") + '</p><p class="kv">group <b>' + esc(r.group) + "</b> · suite line <b>" + r.suite_line +
        "</b> · method <b>" + esc(r.method.method) + "</b> · seeds <b>" + esc(r.method.seeds.length ? r.method.seeds.join(",") : "none") + "</b> · temperature <b>" + esc(r.method.temperature) + "</b></p>" +
        (r.result ? '<p class="kv" id="cost">latency <b>' + fmt(res.latency_ms, 1) + " ms</b> · prompt tokens <b>" + esc(res.prompt_tokens) + "</b>" + (res.cached_tokens !== undefined ? " (cached <b>" + esc(res.cached_tokens) + "</b>)" : "") +
          " · completion tokens <b>" + esc(res.completion_tokens) + "</b> · agent <b>" + esc(res.agent) + "</b>" + (res.retries ? " · retries <b>" + esc(res.retries) + "</b>" : "") + (res.approximate ? " · <b>approximate</b> (top-k read)" : "") + "</p>"
          : '<p class="err">no result line for this record (missing)</p>') + "</section>";
      var truncated = r.state.some(function (s) { return s.truncated; });
      var state = '<section><h2>State</h2>' + r.state.map(function (s) {
        return '<div class="kv">' + esc(s.key) + " (" + s.length + " characters" + (s.truncated ? ", cut" : "") + ')</div><div class="state">' + esc(s.text) + (s.truncated ? "…" : "") + "</div>";
      }).join("") + (truncated ? '<a id="show-all" href="#/t/' + enc(track) + "/r/" + enc(id) + '?full=1">show all</a>' : "") + "</section>";
      var qs = r.questions.map(function (q) {
        var verdict = q.error !== null ? '<span class="badge errored">errored</span> <span class="err">' + esc(q.error) + "</span>" :
          q.skipped ? '<span class="badge skipped">skipped</span>' : q.predicted === null ? '<span class="badge missing">missing</span>' :
          q.correct === null ? "" : '<span class="badge ' + (q.correct ? "right" : "wrong") + '">' + (q.correct ? "right" : "wrong") + "</span>";
        return '<section class="question" data-key="' + esc(q.key) + '"><h2>' + esc(q.key) + " (" + q.type + (q.headline ? ", headline" : "") + ")</h2><p>" + verdict +
          ' <span class="kv">gold <b class="gold-label">' + esc(q.gold === null ? "none" : q.gold) + '</b> · predicted <b class="pred-label">' + esc(q.predicted === null ? "-" : q.predicted) + "</b>" + (q.answered_by ? " · answered by <b>" + esc(q.answered_by) + "</b>" : "") + "</span></p>" +
          '<div class="state">' + esc(q.instructions) + "</div>" +
          '<table class="options"><thead><tr><th>option</th><th>text</th><th>p</th></tr></thead><tbody>' + q.options.map(function (o) {
            return '<tr class="' + (o.gold ? "gold" : "") + '" data-option="' + esc(o.key) + '"><td>' + esc(o.key) + (o.gold ? " ★ gold" : "") + "</td><td>" + esc(o.text) + "</td><td>" + bar(o.p) + "</td></tr>";
          }).join("") + "</tbody></table></section>";
      }).join("");
      var docs = r.retrieval ? '<section><h2>Documents in rank order (relevant: grade ≥ ' + r.retrieval.threshold + ')</h2><table id="documents"><thead><tr><th class="n">rank</th><th>document</th><th class="n">relevance</th><th>p(relevant)</th></tr></thead><tbody>' +
        r.retrieval.documents.map(function (d) {
          return '<tr class="' + (d.relevant ? "gold" : "") + '"><td class="n">' + (d.rank === null ? "-" : d.rank) + "</td><td>" + esc(d.doc) + '</td><td class="n">' + (d.relevance === null ? "unjudged" : d.relevance) + "</td><td>" + bar(d.p) + "</td></tr>";
        }).join("") + "</tbody></table></section>" : "";
      $("main").innerHTML = head + docs + (r.retrieval ? "" : qs) + state + (r.retrieval ? qs : "");
    }).catch(fail);
  }

  window.addEventListener("hashchange", route);
  route();
})();
</script>
</body>
</html>
`;
