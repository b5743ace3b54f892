// The leaderboard as markdown tables, one per dataset group (what `leaderboard` prints).
import { rankText, type Leaderboard, type LeaderboardRow } from "./leaderboard-rows.js";

/**
 * One table cell of text from a card: it cannot end the cell or the row (pipes, newlines), open
 * markup or a code span (HTML-significant characters, backticks), or carry a terminal control
 * character (`leaderboard` prints the table).
 */
export function mdCell(s: string): string {
  return s
    .replace(/\\/g, "\\\\")
    .replace(/\r\n|[\r\n\u2028\u2029]/g, " ")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|")
    .replace(/`/g, "\\`")
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const num = (x: number | null, digits = 4): string => (x === null ? "n/a" : x.toFixed(digits));

export function meanWithCi(r: LeaderboardRow): string {
  const m = num(r.v1_mean) + (r.v1_partial ? " (partial)" : "");
  return r.v1_ci_low !== null && r.v1_ci_high !== null ? `${m} [${num(r.v1_ci_low)}, ${num(r.v1_ci_high)}]` : m;
}

export function pillarNames(rows: readonly LeaderboardRow[]): string[] {
  return [...new Set(rows.flatMap((r) => Object.keys(r.pillars)))].sort();
}

export function renderMarkdown(board: Leaderboard): string {
  const out: string[] = [];
  for (const g of board.groups) {
    out.push(`## ${mdCell(g.dataset)} (sha256 ${mdCell(g.dataset_sha256.slice(0, 16))}, ${g.scope.length} tracks in scope${g.limit != null ? `, limited scope: ${g.limit} records per track (--limit)` : ""})`, "");
    const pillars = pillarNames(g.rows);
    const head = ["rank", "model", "condition", "method class", "v1 mean [CI]", ...pillars.map(mdCell), "cost / 1k records", "records / min", "p95 latency s", "cost-adjusted", "quality tier", "verification", "signature", "date", "fingerprint", "run id", "directory"];
    out.push(`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`);
    for (const r of g.rows) {
      const cells = [
        rankText(r),
        r.model,
        r.condition,
        r.method_class,
        meanWithCi(r),
        ...pillars.map((p) => num(r.pillars[p] ?? null)),
        r.cost_per_1k_records_usd === null ? "n/a" : `$${r.cost_per_1k_records_usd.toFixed(4)}`,
        num(r.records_per_minute, 1),
        num(r.p95_latency_seconds, 3),
        num(r.cost_adjusted_score, 3),
        r.quality_tier ? `${r.quality_tier} (provisional)` : "n/a",
        r.verification_tier,
        r.signature,
        r.date ? r.date.slice(0, 10) : "n/a",
        r.fingerprint === null ? "n/a" : r.repeats > 1 ? `${r.fingerprint} (×${r.repeats})` : r.fingerprint,
        r.run_id === null ? "n/a" : r.run_id.slice(0, 8),
        r.directory,
      ];
      out.push(`| ${cells.map(mdCell).join(" | ")} |`);
    }
    out.push("");
    const pairs = g.rows.flatMap((r, i) => (r.vs_next && g.rows[i + 1] ? [neighbourLine(r, g.rows[i + 1]!)] : []));
    if (pairs.length > 0) out.push("Neighbouring rows, paired over the same records (udm-orch diff; * = the 95% interval of the v1-mean difference leaves out 0):", "", ...pairs, "");
    if (g.repeats.length > 0) {
      out.push("Repeats of one setup (ranked cards with one fingerprint):", "", "| fingerprint | model | condition | n | v1 mean | sd | min - max |", "|---|---|---|---|---|---|---|");
      for (const s of g.repeats) out.push(`| ${[s.fingerprint, s.model, s.condition, String(s.n), num(s.v1_mean), num(s.v1_sd), `${num(s.v1_min)} - ${num(s.v1_max)}`].map(mdCell).join(" | ")} |`);
      out.push("");
    }
  }
  if (board.invalid.length > 0) {
    out.push("Skipped, not valid run cards:", "");
    for (const i of board.invalid) out.push(`- ${mdCell(i.source)}: ${mdCell(i.problem)}`);
    out.push("");
  }
  out.push(`${board.cost_adjusted_formula}. Quality tiers are provisional nominations from automatic scores (the UDM benchmark protocol).`);
  return out.join("\n") + "\n";
}

/** "rank 1 (model) vs rank 2 (model): +0.0123 [+0.0040, +0.0200], p 0.002 *". */
function neighbourLine(r: LeaderboardRow, next: LeaderboardRow): string {
  const d = r.vs_next!;
  const signed = (x: number | null) => (x === null ? "n/a" : `${x >= 0 ? "+" : ""}${x.toFixed(4)}`);
  const ci = d.ci_low !== null && d.ci_high !== null ? ` [${signed(d.ci_low)}, ${signed(d.ci_high)}]` : "";
  return `- ${mdCell(rankText(r))} (${mdCell(r.model)}) vs ${mdCell(rankText(next))} (${mdCell(next.model)}): ${signed(d.difference)}${ci}, p ${d.p_value === null ? "n/a" : d.p_value.toFixed(3)}${d.significant ? " *" : ""}`;
}
