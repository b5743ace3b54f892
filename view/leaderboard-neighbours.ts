// The leaderboard's neighbouring rows compared record by record: for each row and the next one of
// its group, when both are run directories whose results are reachable, the paired v1-mean
// difference of `udm-orch diff` (view/run-diff.ts) is set as the upper row's `vs_next`. Rows of
// results directories without a run.json, or whose files are gone, are left unmarked.
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Leaderboard } from "../card/index.js";
import { significant } from "./diff-format.js";
import { openRunDir, type RunDir } from "./run-dir.js";
import { diffRefusal, diffRuns } from "./run-diff.js";

/** `onSkip` hears of each pair that could not be compared, and why. */
export async function markNeighbours(board: Leaderboard, suiteDir?: string, onSkip?: (message: string) => void): Promise<void> {
  const opened = new Map<string, RunDir | undefined>();
  const runOf = (source: string): RunDir | undefined => {
    const dir = basename(source) === "run-card.json" ? dirname(source) : source;
    if (!opened.has(dir)) {
      let run: RunDir | undefined;
      try {
        run = existsSync(join(dir, "run.json")) ? openRunDir(dir, suiteDir) : undefined;
      } catch {
        run = undefined;
      }
      opened.set(dir, run);
    }
    return opened.get(dir);
  };
  for (const g of board.groups) {
    for (let i = 0; i + 1 < g.rows.length; i++) {
      const a = runOf(g.rows[i]!.source);
      const b = runOf(g.rows[i + 1]!.source);
      if (!a || !b || diffRefusal(a, b) !== undefined) continue;
      let d;
      try {
        d = (await diffRuns(a, b)).v1;
      } catch (err) {
        // A suite changed since, a results file unreadable: the rows stay unmarked, the board is still printed.
        onSkip?.(`${g.rows[i]!.source} vs ${g.rows[i + 1]!.source}: not compared: ${(err as Error).message}`);
        continue;
      }
      g.rows[i]!.vs_next = { difference: d.difference, ci_low: d.ci_low, ci_high: d.ci_high, p_value: d.p_value, significant: significant(d) };
    }
  }
}
