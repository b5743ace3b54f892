// The three forms of `udm-orch diff`: markdown (standard output), JSON (every flipped record) and one
// self-contained HTML page (no external URL). Flipped records link into `udm-orch view` of each run.
import type { TrackComparison } from "../scorer/index.js";
import type { RunDiff } from "./run-diff.js";

/** Where the flipped records' links point: the pages of `udm-orch view RUN_A` and `view RUN_B`. */
export interface ViewLinks {
  a: string;
  b: string;
}

/** Flipped records listed per direction and track in markdown and HTML (JSON lists them all). */
const FLIPS_SHOWN = 20;

/** A difference whose 95% interval leaves out 0. */
export function significant(d: { ci_low: number | null; ci_high: number | null }): boolean {
  return d.ci_low !== null && d.ci_high !== null && (d.ci_low > 0 || d.ci_high < 0);
}

export function recordLink(base: string, track: string, id: string): string {
  return `${base.replace(/\/+$/, "")}/#/t/${encodeURIComponent(track)}/r/${encodeURIComponent(id)}`;
}

const num = (x: number | null, digits = 4): string => (x === null ? "n/a" : x.toFixed(digits));
const signed = (x: number | null): string => (x === null ? "n/a" : `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x).toFixed(4)}`);
const pText = (p: number | null): string => (p === null ? "n/a" : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
const interval = (d: { ci_low: number | null; ci_high: number | null }): string => (d.ci_low === null || d.ci_high === null ? "" : ` [${signed(d.ci_low)}, ${signed(d.ci_high)}]`);

function header(d: RunDiff): string[] {
  const side = (s: RunDiff["a"]) => `${s.dir} (${s.model || "model unknown"}, ${s.method}${s.seeds.length ? `, seeds ${s.seeds.join(",")}` : ""})`;
  return [
    `A: ${side(d.a)}`,
    `B: ${side(d.b)}`,
    `suite ${d.suite.identity.slice(0, 12)} (${d.suite.root}), ${d.scope.tracks} tracks, ${d.scope.limit === null ? "every record" : `limited scope: ${d.scope.limit} records per track (--limit)`}`,
    `A − B with a paired group-bootstrap 95% interval (${d.resamples} resamples, the scorer's draws, the same groups for both runs) and a two-sided paired permutation p-value (${d.permutations} permutations, fixed seed); * = the interval leaves out 0`,
  ];
}

export function renderDiffMarkdown(d: RunDiff, links: ViewLinks): string {
  const lines = header(d).map((l) => `${l}  `);
  lines.push("");
  lines.push("| track | metric | A | B | A − B [95% CI] | p | right→wrong | wrong→right |");
  lines.push("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const t of d.tracks) {
    lines.push(`| ${t.track} | ${t.metric} | ${num(t.a)} | ${num(t.b)} | ${signed(t.difference)}${interval(t)}${significant(t) ? " *" : ""} | ${pText(t.p_value)} | ${t.flips ? t.flips.right_to_wrong.length : "n/a"} | ${t.flips ? t.flips.wrong_to_right.length : "n/a"} |`);
  }
  const v = d.v1;
  lines.push(`| **${v.metric}** (${v.tracks} tracks) | mean | ${num(v.a)} | ${num(v.b)} | ${signed(v.difference)}${interval(v)}${significant(v) ? " *" : ""} | ${pText(v.p_value)} | | |`);
  const flipped = d.tracks.filter((t) => t.flips && (t.flips.right_to_wrong.length > 0 || t.flips.wrong_to_right.length > 0));
  if (flipped.length > 0) {
    lines.push("", "## Flipped records", "");
    for (const t of flipped) {
      for (const [what, ids] of [["right in A, wrong in B", t.flips!.right_to_wrong], ["wrong in A, right in B", t.flips!.wrong_to_right]] as const) {
        if (ids.length === 0) continue;
        const shown = ids.slice(0, FLIPS_SHOWN).map((id) => `[${id}](${recordLink(links.a, t.track, id)}) ([B](${recordLink(links.b, t.track, id)}))`);
        lines.push(`- ${t.track}, ${what} (${ids.length}): ${shown.join(", ")}${ids.length > FLIPS_SHOWN ? `, … ${ids.length - FLIPS_SHOWN} more (--format json lists all)` : ""}`);
      }
    }
  }
  return lines.join("\n") + "\n";
}

export function renderDiffJson(d: RunDiff, links: ViewLinks): string {
  return JSON.stringify({ format: 1, view: links, ...d }, null, 2) + "\n";
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderDiffHtml(d: RunDiff, links: ViewLinks): string {
  const row = (t: TrackComparison) =>
    `<tr class="${significant(t) ? "sig" : ""}"><td>${esc(t.track)}</td><td>${esc(t.metric)}</td><td class="n">${num(t.a)}</td><td class="n">${num(t.b)}</td>` +
    `<td class="n">${signed(t.difference)}${esc(interval(t))}${significant(t) ? " *" : ""}</td><td class="n">${pText(t.p_value)}</td>` +
    `<td class="n">${t.flips ? t.flips.right_to_wrong.length : "n/a"}</td><td class="n">${t.flips ? t.flips.wrong_to_right.length : "n/a"}</td></tr>`;
  const v = d.v1;
  const flips = d.tracks
    .filter((t) => t.flips && (t.flips.right_to_wrong.length > 0 || t.flips.wrong_to_right.length > 0))
    .map((t) => {
      const list = (what: string, ids: readonly string[]) =>
        ids.length === 0
          ? ""
          : `<li>${esc(what)} (${ids.length}): ${ids
              .slice(0, FLIPS_SHOWN)
              .map((id) => `<a href="${esc(recordLink(links.a, t.track, id))}">${esc(id)}</a> (<a href="${esc(recordLink(links.b, t.track, id))}">B</a>)`)
              .join(", ")}${ids.length > FLIPS_SHOWN ? ` … ${ids.length - FLIPS_SHOWN} more` : ""}</li>`;
      return `<h3>${esc(t.track)}</h3><ul>${list("right in A, wrong in B", t.flips!.right_to_wrong)}${list("wrong in A, right in B", t.flips!.wrong_to_right)}</ul>`;
    })
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>udm-orch diff</title><link rel="icon" href="data:,">
<style>
body{margin:20px;font:14px/1.4 system-ui,sans-serif;background:#0f1419;color:#e6e9ed}a{color:#58a6ff}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:4px 8px;border-bottom:1px solid #2a323c;text-align:left}
td.n{text-align:right}tr.sig td{color:#f0c674}p{color:#8b96a3;margin:2px 0}
</style></head><body>
<h1>udm-orch diff</h1>
${header(d).map((l) => `<p>${esc(l)}</p>`).join("\n")}
<table id="diff"><thead><tr><th>track</th><th>metric</th><th>A</th><th>B</th><th>A − B [95% CI]</th><th>p</th><th>right→wrong</th><th>wrong→right</th></tr></thead><tbody>
${d.tracks.map(row).join("\n")}
<tr class="${significant(v) ? "sig" : ""}"><td><b>${esc(v.metric)}</b> (${v.tracks} tracks)</td><td>mean</td><td class="n">${num(v.a)}</td><td class="n">${num(v.b)}</td><td class="n">${signed(v.difference)}${esc(interval(v))}${significant(v) ? " *" : ""}</td><td class="n">${pText(v.p_value)}</td><td></td><td></td></tr>
</tbody></table>
${flips ? `<h2>Flipped records</h2>${flips}` : ""}
</body></html>
`;
}
