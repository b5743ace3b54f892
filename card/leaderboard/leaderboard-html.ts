// The leaderboard as one self-contained HTML page: rows are rendered here (readable without
// script), a small inline script makes columns sortable (click a header; `#sort=<column>:<asc|desc>`
// in the URL applies a sort on load) and opens a row's per-track headlines (click the row). No
// external URL: no fonts, no CDN, no images.
import { rankText, type Leaderboard, type LeaderboardRow } from "./leaderboard-rows.js";
import { meanWithCi, num, pillarNames } from "./leaderboard-markdown.js";

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

interface Column {
  key: string;
  label: string;
  text: (r: LeaderboardRow) => string;
  /** Sort value: a number (n/a sorts last) or text. */
  sort: (r: LeaderboardRow) => number | string | null;
}

function columns(pillars: readonly string[]): Column[] {
  return [
    { key: "rank", label: "rank", text: (r) => rankText(r), sort: (r) => r.rank },
    { key: "model", label: "model", text: (r) => r.model, sort: (r) => r.model },
    { key: "condition", label: "condition", text: (r) => r.condition, sort: (r) => r.condition },
    { key: "method_class", label: "method class", text: (r) => r.method_class, sort: (r) => r.method_class },
    { key: "v1_mean", label: "v1 mean [CI]", text: meanWithCi, sort: (r) => r.v1_mean },
    ...pillars.map((p): Column => ({ key: `pillar:${p}`, label: p, text: (r) => num(r.pillars[p] ?? null), sort: (r) => r.pillars[p] ?? null })),
    { key: "cost_per_1k", label: "cost / 1k records", text: (r) => (r.cost_per_1k_records_usd === null ? "n/a" : `$${r.cost_per_1k_records_usd.toFixed(4)}`), sort: (r) => r.cost_per_1k_records_usd },
    { key: "records_per_minute", label: "records / min", text: (r) => num(r.records_per_minute, 1), sort: (r) => r.records_per_minute },
    { key: "p95_latency", label: "p95 latency s", text: (r) => num(r.p95_latency_seconds, 3), sort: (r) => r.p95_latency_seconds },
    { key: "cost_adjusted", label: "cost-adjusted", text: (r) => num(r.cost_adjusted_score, 3), sort: (r) => r.cost_adjusted_score },
    { key: "quality_tier", label: "quality tier", text: (r) => (r.quality_tier ? `${r.quality_tier} (provisional)` : "n/a"), sort: (r) => r.quality_tier },
    { key: "verification", label: "verification", text: (r) => r.verification_tier, sort: (r) => r.verification_tier },
    { key: "signature", label: "signature", text: (r) => r.signature, sort: (r) => r.signature },
    { key: "date", label: "date", text: (r) => (r.date ? r.date.slice(0, 10) : "n/a"), sort: (r) => r.date },
    { key: "fingerprint", label: "fingerprint", text: (r) => (r.fingerprint === null ? "n/a" : r.repeats > 1 ? `${r.fingerprint} (×${r.repeats})` : r.fingerprint), sort: (r) => r.fingerprint },
    { key: "run_id", label: "run id", text: (r) => (r.run_id === null ? "n/a" : r.run_id.slice(0, 8)), sort: (r) => r.run_id },
    { key: "directory", label: "directory", text: (r) => r.directory, sort: (r) => r.directory },
  ];
}

function trackTable(r: LeaderboardRow): string {
  const rows = r.tracks
    .map(
      (t) =>
        `<tr><td>${esc(t.track)}</td><td>${esc(t.family)}</td><td>${esc(t.pillar)}</td><td>${esc(t.metric)}</td>` +
        `<td>${num(t.value)}</td><td>${t.ci_low === null ? "n/a" : `[${num(t.ci_low)}, ${num(t.ci_high)}]`}</td></tr>`,
    )
    .join("");
  const problems = r.problems.length ? `<p class="problems">does not verify: ${r.problems.map(esc).join("; ")}</p>` : "";
  return `${problems}<table class="tracks"><thead><tr><th>track</th><th>family</th><th>pillar</th><th>headline</th><th>value</th><th>95% CI</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderHtml(board: Leaderboard): string {
  const sections = board.groups
    .map((g, gi) => {
      const cols = columns(pillarNames(g.rows));
      const head = cols.map((c) => `<th data-key="${esc(c.key)}" tabindex="0">${esc(c.label)}</th>`).join("");
      const body = g.rows
        .map((r, ri) => {
          const sortAttrs = cols.map((c) => {
            const v = c.sort(r);
            return `data-s-${esc(c.key.replace(/[^a-z0-9_-]/gi, "_"))}="${v === null ? "" : esc(String(v))}"`;
          });
          const cells = cols.map((c) => `<td>${esc(c.text(r))}</td>`).join("");
          return (
            `<tr class="row" data-row="${gi}-${ri}" ${sortAttrs.join(" ")}>${cells}</tr>` +
            `<tr class="detail" data-detail="${gi}-${ri}" hidden><td colspan="${cols.length}">${trackTable(r)}</td></tr>`
          );
        })
        .join("");
      return (
        `<section><h2>${esc(g.dataset)} <small>sha256 ${esc(g.dataset_sha256)} · ${g.scope.length} tracks in scope${g.limit != null ? ` · <b class="limited">limited scope: ${g.limit} records per track</b>` : ""}</small></h2>` +
        `<table class="board" data-group="${gi}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>${neighbours(g.rows)}</section>`
      );
    })
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>udm-orch leaderboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .4rem;text-align:left;white-space:nowrap}
th{background:#f2f2f2;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}
th[aria-sort=descending]::after{content:" ▼"}
tr.row{cursor:pointer}
tr.row:hover{background:#f8f8ff}
table.tracks{margin:.3rem 0 .6rem 1rem}
.problems{color:#a00}
small{color:#666;font-weight:normal}
</style></head>
<body>
<h1>udm-orch leaderboard</h1>
<p>Ranked by v1 mean within each dataset and scope; cards of different suites or scopes are never ranked together.
Click a column to sort, a row for its per-track headlines. ${esc(board.cost_adjusted_formula)}.
Quality tiers are provisional nominations from automatic scores. Generated ${esc(board.generated_at)}.</p>
${sections}
${board.invalid.length > 0 ? `<section class="invalid"><h2>Skipped, not valid run cards</h2><ul>${board.invalid.map((i) => `<li>${esc(i.source)}: ${esc(i.problem)}</li>`).join("")}</ul></section>` : ""}
<script type="application/json" id="leaderboard-data">${JSON.stringify(board).replace(/</g, "\\u003c")}</script>
<script>
(function () {
  function attr(key) { return "data-s-" + key.replace(/[^a-z0-9_-]/gi, "_"); }
  function sortTable(table, key, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.querySelectorAll("tr.row"));
    rows.sort(function (a, b) {
      var x = a.getAttribute(attr(key)), y = b.getAttribute(attr(key));
      if (x === "" && y === "") return 0;
      if (x === "") return 1;
      if (y === "") return -1;
      var nx = Number(x), ny = Number(y);
      var c = !isNaN(nx) && !isNaN(ny) ? nx - ny : (x < y ? -1 : x > y ? 1 : 0);
      return dir === "desc" ? -c : c;
    });
    rows.forEach(function (r) {
      body.appendChild(r);
      body.appendChild(body.querySelector('tr[data-detail="' + r.getAttribute("data-row") + '"]'));
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      if (th.getAttribute("data-key") === key) th.setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.board"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var go = function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? "desc" : "asc";
        sortTable(table, th.getAttribute("data-key"), dir);
      };
      th.addEventListener("click", go);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") go(); });
    });
    Array.prototype.forEach.call(table.querySelectorAll("tr.row"), function (tr) {
      tr.addEventListener("click", function () {
        var d = table.querySelector('tr[data-detail="' + tr.getAttribute("data-row") + '"]');
        d.hidden = !d.hidden;
      });
    });
    var m = /sort=([^:&]+):(asc|desc)/.exec(decodeURIComponent(location.hash));
    if (m) sortTable(table, m[1], m[2]);
    table.setAttribute("data-ready", "1");
  });
})();
</script>
</body></html>
`;
}

/** The neighbouring rows compared record by record (row.vs_next), as a list under the group's table. */
function neighbours(rows: readonly LeaderboardRow[]): string {
  const signed = (x: number | null) => (x === null ? "n/a" : `${x >= 0 ? "+" : ""}${x.toFixed(4)}`);
  const items = rows.flatMap((r, i) => {
    const d = r.vs_next;
    const next = rows[i + 1];
    if (!d || !next) return [];
    const ci = d.ci_low !== null && d.ci_high !== null ? ` [${signed(d.ci_low)}, ${signed(d.ci_high)}]` : "";
    return [`<li class="${d.significant ? "significant" : ""}">${esc(rankText(r))} (${esc(r.model)}) vs ${esc(rankText(next))} (${esc(next.model)}): ${signed(d.difference)}${ci}, p ${d.p_value === null ? "n/a" : d.p_value.toFixed(3)}${d.significant ? " *" : ""}</li>`];
  });
  return items.length === 0 ? "" : `<p>Neighbouring rows, paired over the same records (* = the 95% interval of the v1-mean difference leaves out 0):</p><ul class="neighbours">${items.join("")}</ul>`;
}
