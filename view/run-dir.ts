// A run directory as `view` and `diff` read it: run.json (suite identity, scope, limit, method),
// metrics.json and run-card.json when present, and the suite it was run on (--suite, else run.json's
// suite_root). Nothing else of the directory is read here; result lines are read a track at a time.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "../common/errors.js";
import { readJsonFileOrThrow } from "../common/parse.js";
import { openCheckedSuite, selectFiles, type Suite, type TrackFile } from "../common/suite/index.js";
import { trackResultsPath } from "../common/results/index.js";
import { RUN_CARD_FILE, datasetSha256, type RunCard } from "../card/index.js";
import { METRICS_FILE, type MetricsJson } from "../scorer/index.js";

const RunJson = z.looseObject({
  run_id: z.string(),
  suite_identity: z.string(),
  suite_root: z.string().optional(),
  tracks: z.array(z.string()),
  limit: z.number().int().positive().nullable().optional(),
  method: z.looseObject({ method: z.string(), seeds: z.array(z.number()), temperature: z.number(), model: z.string() }),
});
export type RunJson = z.infer<typeof RunJson>;

export interface RunDir {
  dir: string;
  run: RunJson;
  /** Records per track at most (`--limit`); undefined: every record. */
  limit: number | undefined;
  metrics: MetricsJson | undefined;
  card: RunCard | undefined;
  suite: Suite;
  /** The run's tracks, in suite order. */
  scope: TrackFile[];
}

/** Opens a run directory; `suiteDir` overrides run.json's suite_root. A usage error when it is not a run's directory or its suite is not there. */
export function openRunDir(dir: string, suiteDir?: string): RunDir {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`not a directory: ${dir}`);
  const runPath = join(dir, "run.json");
  if (!existsSync(runPath)) throw new UsageError(`${dir} has no run.json: not the directory of a run (udm-orch run/coordinator --out)`);
  const run = readJsonFileOrThrow(runPath, RunJson);
  const root = suiteDir ?? run.suite_root;
  if (root === undefined) throw new UsageError(`${runPath} names no suite_root: give --suite DIR`);
  const suite = openCheckedSuite(root);
  const known = new Set(suite.files.map((f) => f.track));
  const unknown = run.tracks.filter((t) => !known.has(t));
  if (unknown.length > 0) throw new UsageError(`${dir}: track(s) ${unknown.join(", ")} of the run are not in the suite ${suite.root}: give the run's suite with --suite`);
  const metricsPath = join(dir, METRICS_FILE);
  const cardPath = join(dir, RUN_CARD_FILE);
  return {
    dir,
    run,
    limit: run.limit ?? undefined,
    metrics: existsSync(metricsPath) ? (readJsonFileOrThrow(metricsPath, z.looseObject({ tracks: z.record(z.string(), z.unknown()) })) as unknown as MetricsJson) : undefined,
    card: existsSync(cardPath) ? (readJsonFileOrThrow(cardPath, z.looseObject({ run_id: z.string() })) as unknown as RunCard) : undefined,
    suite,
    scope: selectFiles(suite, { tracks: run.tracks }),
  };
}

/** The suite's identity, checked against the run's: a suite that was changed since is refused. */
export async function checkSuiteIdentity(run: RunDir): Promise<void> {
  const identity = await datasetSha256(run.suite.root);
  if (identity !== run.run.suite_identity) {
    throw new UsageError(`${run.dir} was run on suite ${run.run.suite_identity.slice(0, 12)}, but ${run.suite.root} is ${identity.slice(0, 12)}: give the run's suite with --suite`);
  }
}

/** The results files of one track: `<dir>/<family>/<track>.jsonl`, and a `.jsonl.gz` beside it (a reference runner's), in path order as `score` reads them. */
export function trackResultFiles(dir: string, file: TrackFile): string[] {
  const plain = trackResultsPath(dir, file.family, file.track);
  return [plain, `${plain}.gz`].filter((p) => existsSync(p));
}
