// The markdown leaderboard copies text from cards (model names, conditions, dataset labels) into
// table cells: a cell cannot end its row, add rows, open markup or a code span, or carry terminal
// control characters, whatever the card says.
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../../card/leaderboard/leaderboard-markdown.js";
import type { Leaderboard, LeaderboardRow } from "../../card/leaderboard/leaderboard-rows.js";

function row(model: string, condition = "systemone"): LeaderboardRow {
  return {
    rank: 1, source: "x/run-card.json", run_id: "r1", directory: "x", signature: "unsigned", repeats: 1, model, condition, method_class: "raw-llm", v1_mean: 0.5, v1_partial: false, v1_ci_low: null, v1_ci_high: null,
    pillars: { p: 0.5 }, cost_per_1k_records_usd: null, records_per_minute: null, p95_latency_seconds: null, cost_adjusted_score: null,
    quality_tier: "Functional", verification_tier: "self-benchmarked", date: "2026-01-01T00:00:00Z", fingerprint: "abc", tracks: [], problems: [], status: "complete", records_errored: 0, records: 1,
  };
}

function board(rows: LeaderboardRow[], dataset = "udm-eval-v1 r1"): Leaderboard {
  return { format: 1, generated_at: "2026-01-01T00:00:00Z", cost_adjusted_formula: "f", groups: [{ dataset_sha256: "0".repeat(64), dataset, scope: ["t"], rows, repeats: [] }], invalid: [] };
}

const tableRows = (md: string) => md.split("\n").filter((l) => l.startsWith("|"));

describe("markdown leaderboard cells", () => {
  it("a model name with newlines, pipes, HTML and backticks stays one cell of one row", () => {
    const md = renderMarkdown(board([row("evil\n| 1 | fake/model | x |\r\n<script>alert(1)</script> `code` <img src=x onerror=y>", "a|b")]));
    // Header, separator, one row: the name added no row.
    expect(tableRows(md)).toHaveLength(3);
    const line = tableRows(md)[2]!;
    expect(line).not.toContain("<script>");
    expect(line).not.toContain("<img");
    expect(line).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(line).toContain("\\`code\\`");
    // Cells split on unescaped pipes only: as many cells as headers.
    const cells = (l: string) => l.split(/(?<!\\)\|/).length;
    expect(cells(line)).toBe(cells(tableRows(md)[0]!));
    expect(line).toContain("a\\|b");
  });

  it("control characters and a dataset label from a card are escaped", () => {
    const md = renderMarkdown(board([row("m\u001b]0;pwned\u0007\u009b2J")], "udm\n## injected <b>"));
    expect(md).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(md).not.toMatch(/^## injected/m);
    expect(md).toContain("&lt;b&gt;");
  });
});
