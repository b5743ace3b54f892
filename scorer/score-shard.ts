// Scores a shard of a suite's tracks from disk: loads their gold (verifying each file against the
// manifest), reads every result file, keeps the lines of its own tracks, and finishes each track.
// `score` runs one shard in-process or several in worker threads; the output is plain data either way.
import { FormatError } from "../common/errors.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import type { Logger } from "../common/log.js";
import { openSuite } from "../common/suite/suite.js";
import { parseResultLine } from "../common/results/parse.js";
import { trackOfRunId } from "../common/results/paths.js";
import { TrackAccumulator } from "./track-accumulator.js";
import { loadTrackGold } from "./track-gold.js";
import type { TrackMetrics } from "./track-metrics.js";

export interface ShardInput {
  suiteDir: string;
  resultsDir: string;
  /** Result files in the order they are applied. */
  resultFiles: readonly string[];
  /** Tracks this shard scores. */
  tracks: readonly string[];
  /** Whether this shard warns about torn last lines (every shard reads every file; one warning is enough). */
  warnTornLines: boolean;
}

export interface ShardOutput {
  /** sha256 of the decompressed bytes of each track file read, by relative path. */
  hashes: Record<string, string>;
  tracks: Array<{ track: string; metrics: TrackMetrics; resamples: Float64Array }>;
}

export async function scoreShard(input: ShardInput, log: Logger): Promise<ShardOutput> {
  const suite = openSuite(input.suiteDir);
  const mine = new Set(input.tracks);
  const suiteTracks = new Set(suite.files.map((f) => f.track));
  const hashes: Record<string, string> = {};
  const accumulators = new Map<string, TrackAccumulator>();
  for (const file of suite.files) {
    if (!mine.has(file.track)) continue;
    const { accumulator: acc, sha256 } = await loadTrackGold(suite, file);
    hashes[file.relPath] = sha256;
    accumulators.set(file.track, acc);
  }

  for (const file of input.resultFiles) {
    const reader = readJsonLines(file, {
      onTornLastLine: (line) => {
        if (input.warnTornLines) log.warn(`${file}:${line}: torn last line (no newline, not valid JSON) ignored; the run may still be writing`);
      },
    });
    for await (const { line, value } of reader) {
      const result = parseResultLine(file, line, value);
      const track = trackOfRunId(result.run_id);
      const acc = accumulators.get(track);
      if (acc?.hasRecord(result.run_id)) acc.addResult(result);
      // A suite track of another shard, or one left out by --tracks/--families: not this shard's business.
      else if (acc || !suiteTracks.has(track)) {
        throw new FormatError(file, line, "run_id", `run_id ${JSON.stringify(result.run_id)} matches no record of the suite ${suite.root}`);
      }
    }
  }

  const tracks: ShardOutput["tracks"] = [];
  for (const [track, acc] of accumulators) {
    if (!acc.isComplete()) log.warn(`track ${track}: ${acc.recordCount - acc.resultCount} of ${acc.recordCount} records have no result line (scored as missing)`);
    if (acc.invalidDistributions > 0) log.warn(`track ${track}: ${acc.invalidDistributions} invalid distribution(s) scored as missing`);
    tracks.push({ track, metrics: acc.finish(), resamples: acc.headlineResamples() });
  }
  return { hashes, tracks };
}
