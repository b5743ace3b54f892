// udm-orch leaderboard CARD_OR_DIR...: ranks run cards (and plain results directories, scored on
// the fly against --suite and listed as `no card`) by v1 mean, grouped by dataset and scope.
// Markdown on stdout; --json and --html write the other two formats. With --suite every card's scores
// are recomputed from its results files; a file that is no valid card is skipped and listed.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../common/errors.js";
import { writeFileAtomic } from "../common/atomic-file.js";
import { openSuite } from "../common/suite/index.js";
import { scoreResultsWithInterval } from "../scorer/index.js";
import { verifyCard, readTrustedKeys, RUN_CARD_FILE, buildLeaderboard, type InvalidCard, type LeaderboardEntry, renderMarkdown, renderHtml } from "../card/index.js";
import { opt, localOpt } from "./options.js";
import { printable } from "../common/printable.js";
import { DATASET_ID } from "../run/index.js";
import { flagGroup, flagOptions } from "./flag-group.js";
import { SUITE_FLAG, type ScopeOptions } from "./flags/scope-flags.js";
import { markNeighbours } from "../view/index.js";

/** --suite of `leaderboard`: only results directories without a card are scored against it. */
const LEADERBOARD_SUITE_FLAGS = flagGroup<ScopeOptions>({}, [{ ...SUITE_FLAG, description: "suite to recompute each card's scores against (a card whose numbers differ is listed unverified) and to score results directories without a card", mandatory: false }]);

interface LeaderboardFlags {
  suite?: string;
  json?: string;
  html?: string;
  trustedKeys?: string;
  format: string;
  significance?: boolean;
}

/** What one argument names: a card file, a run directory with a card, a directory of run directories (a sweep), or a plain results directory. */
function expand(arg: string): Array<{ card: string } | { results: string }> {
  if (!existsSync(arg)) throw new UsageError(`no such file or directory: ${arg}`);
  if (statSync(arg).isFile()) return [{ card: arg }];
  if (existsSync(join(arg, RUN_CARD_FILE))) return [{ card: join(arg, RUN_CARD_FILE) }];
  const children = readdirSync(arg, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(arg, d.name, RUN_CARD_FILE)))
    .map((d) => ({ card: join(arg, d.name, RUN_CARD_FILE) }))
    .sort((a, b) => (a.card < b.card ? -1 : 1));
  return children.length > 0 ? children : [{ results: arg }];
}

export function register(program: Command): void {
  const command = program
    .command("leaderboard")
    .description("rank run cards (and plain results directories, scored against --suite) by v1 mean, grouped by dataset and scope")
    .argument("<cards-or-dirs...>", "run-card.json files, run directories, sweep directories, or results directories without a card");
  for (const o of flagOptions(LEADERBOARD_SUITE_FLAGS)) command.addOption(o);
  command
    .addOption(localOpt("--format <fmt>", "what to print: markdown or json", "markdown"))
    .addOption(localOpt("--json <file>", "also write the leaderboard as JSON"))
    .addOption(localOpt("--html <file>", "also write it as one self-contained HTML page (sortable, per-track drill-down)"))
    .addOption(opt("--trusted-keys <dir>", "ed25519 public keys (*.pem): a card signed by one of them shows signed-trusted (else signed-untrusted or unsigned)"))
    .addOption(localOpt("--no-significance", "do not compare neighbouring rows record by record (udm-orch diff of each row and the next, where both runs' results are reachable)"))
    .action(async (args: string[], flags: LeaderboardFlags) => {
      if (flags.format !== "markdown" && flags.format !== "json") throw new UsageError(`--format must be markdown or json, got ${JSON.stringify(flags.format)}`);
      if (flags.suite !== undefined && !existsSync(flags.suite)) throw new UsageError(`--suite: no such directory: ${flags.suite}`);
      const trustedKeys = flags.trustedKeys !== undefined ? readTrustedKeys(flags.trustedKeys) : undefined;
      const entries: LeaderboardEntry[] = [];
      const invalid: InvalidCard[] = [];
      for (const arg of args) {
        for (const item of expand(arg)) {
          if ("card" in item) {
            const v = await verifyCard(item.card, { ...(flags.suite !== undefined ? { suiteDir: flags.suite } : {}), ...(trustedKeys ? { trustedKeys } : {}) });
            if (!v.card) {
              // One bad card (a hand-edited one in a sweep directory) is skipped, not the whole board.
              const problem = v.problems.join("; ");
              invalid.push({ source: item.card, problem });
              process.stderr.write(`leaderboard: skipped ${printable(problem)}\n`);
              continue;
            }
            entries.push({ kind: "card", source: item.card, card: v.card, problems: v.problems, signature: v.signature });
          } else {
            if (!flags.suite) throw new UsageError(`${item.results} has no ${RUN_CARD_FILE}: give --suite to score its results on the fly`);
            // scoreResults refuses a results line whose run_id matches no row of the suite.
            const { metrics, v1Interval } = await scoreResultsWithInterval({ suiteDir: flags.suite, resultsDir: item.results });
            const revision = openSuite(flags.suite).manifest?.revision ?? "unknown";
            entries.push({ kind: "results", source: item.results, metrics, datasetLabel: `${DATASET_ID} ${revision}`, v1Interval });
          }
        }
      }
      const board = buildLeaderboard(entries, new Date(), invalid);
      if (flags.significance !== false) await markNeighbours(board, flags.suite, (m) => process.stderr.write(`leaderboard: ${printable(m)}\n`));
      if (flags.json) writeFileAtomic(flags.json, JSON.stringify(board, null, 2) + "\n");
      if (flags.html) writeFileAtomic(flags.html, renderHtml(board));
      process.stdout.write(flags.format === "json" ? JSON.stringify(board, null, 2) + "\n" : renderMarkdown(board));
    });
}
