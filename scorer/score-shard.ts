// A shard of `udm-orch score`: a RunScorer over some of the suite's tracks, fed every result file
// (lines of the other tracks are skipped), each track finished. `score` runs one shard in-process or
// several in worker threads; the output is plain data either way.
import type { Logger } from "../common/log.js";
import { openSuite } from "../common/suite/index.js";
import { applyResultFiles } from "./result-files.js";
import { RunScorer, type FinalTrack } from "./run-scorer.js";

export interface ShardInput {
  suiteDir: string;
  resultsDir: string;
  /** Result files in the order they are applied. */
  resultFiles: readonly string[];
  /** Tracks this shard scores. */
  tracks: readonly string[];
  /** Whether this shard warns about torn last lines (every shard reads every file; one warning is enough). */
  warnTornLines: boolean;
  /** Records per track at most (the run's `--limit`); all when absent. */
  limit?: number;
}

export interface ShardOutput {
  /** sha256 of the decompressed bytes of each track file read, by relative path. */
  hashes: Record<string, string>;
  tracks: Array<{ track: string } & FinalTrack>;
}

export async function scoreShard(input: ShardInput, log: Logger): Promise<ShardOutput> {
  const suite = openSuite(input.suiteDir);
  const mine = new Set(input.tracks);
  const scorer = await RunScorer.load({ suite, scope: suite.files.filter((f) => mine.has(f.track)), duplicates: "replace", log, identity: false, ...(input.limit !== undefined ? { limit: input.limit } : {}) });
  await applyResultFiles(scorer, input.resultFiles, { warnTornLines: input.warnTornLines, log });
  return { hashes: scorer.goldHashes, tracks: scorer.finals() };
}
