// Scores result files against a suite (what `udm-orch score` runs): the same TrackAccumulators as the live
// scorer, fed from disk. Suite files are verified against the manifest while they are read.
import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { FormatError, UsageError } from "../common/errors.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import { createLogger, type Logger } from "../common/log.js";
import { ResultLineSchema } from "../common/result-schema.js";
import { firstIssue } from "../common/suite-schema.js";
import { decompressedSha256, manifestHashProblem, openSuite, readTrackRecords, selectFiles, suiteIdentity, type Suite } from "../common/suite.js";
import { aggregate, type GroupMean, type PillarMean, type Summary } from "./aggregate.js";
import { TrackAccumulator, type ResultInput } from "./track-accumulator.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Bump when the meaning of a field of metrics.json changes. */
export const METRICS_FORMAT = 1;

export interface MetricsJson {
  format: number;
  suite: { identity: string; tracks: number };
  tracks: Record<string, TrackMetrics>;
  families: Record<string, GroupMean>;
  pillars: Record<string, PillarMean>;
  summary: Summary;
}

export interface ScoreOptions {
  suiteDir: string;
  resultsDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  log?: Logger;
}

/** Loads the gold side of the selected tracks; verifies every file read against the manifest. */
export async function loadSuiteTracks(suite: Suite, filter: { tracks?: readonly string[]; families?: readonly string[] }): Promise<{ accumulators: Map<string, TrackAccumulator>; identity: string }> {
  const selected = selectFiles(suite, filter);
  const hashes: Record<string, string> = {};
  const accumulators = new Map<string, TrackAccumulator>();
  for (const file of selected) {
    const acc = new TrackAccumulator(file.track, file.family);
    let sha: string | undefined;
    for await (const record of readTrackRecords(file, { onHash: (h) => (sha = h) })) acc.addRecord(record, { file: file.path, line: record.line });
    const problem = manifestHashProblem(suite, file, sha!);
    if (problem) throw new FormatError(file.path, undefined, undefined, `refusing to score a suite that does not match its manifest: ${problem}`);
    hashes[file.relPath] = sha!;
    accumulators.set(file.track, acc);
  }
  const chosen = new Set(selected.map((f) => f.path));
  for (const file of suite.files) {
    if (chosen.has(file.path)) continue;
    hashes[file.relPath] = suite.manifest?.files[file.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(file.path));
  }
  return { accumulators, identity: suiteIdentity(hashes) };
}

/** Every `*.jsonl` and `*.jsonl.gz` below dir, sorted by path. */
export function resultFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && (entry.name.endsWith(".jsonl") || entry.name.endsWith(".jsonl.gz"))) out.push(p);
    }
  };
  try {
    walk(dir);
  } catch (err) {
    throw new UsageError(`cannot read results directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const key = (p: string): string => relative(dir, p).split(sep).join("/");
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Parses one results line into what the scorer reads; FormatError names file, line and field. */
export function parseResultLine(file: string, line: number, value: unknown): ResultInput {
  const fast = plainResultLine(value);
  if (fast) return fast;
  const parsed = ResultLineSchema.safeParse(value);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new FormatError(file, line, field || undefined, message);
  }
  return { run_id: parsed.data.run_id, probs: parsed.data.probs, skipped: parsed.data.skipped, errors: parsed.data.errors };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The well-formed line, checked by hand: the results of a full suite are ~60k lines and zod costs
 * more than the JSON parse. Anything unusual goes to the schema, which also words the error.
 */
function plainResultLine(value: unknown): ResultInput | undefined {
  if (!isPlainObject(value)) return undefined;
  const { run_id, probs, skipped, errors } = value;
  if (typeof run_id !== "string") return undefined;
  for (const k of ["id", "track", "family"]) if (value[k] !== undefined && typeof value[k] !== "string") return undefined;
  if (probs !== undefined && !isPlainObject(probs)) return undefined;
  if (skipped !== undefined && !(Array.isArray(skipped) && skipped.every((s) => typeof s === "string"))) return undefined;
  if (errors !== undefined && !(isPlainObject(errors) && Object.values(errors).every((e) => typeof e === "string"))) return undefined;
  return { run_id, probs: probs ?? {}, skipped: (skipped as string[] | undefined) ?? [], ...(errors ? { errors } : {}) };
}

export async function scoreResults(options: ScoreOptions): Promise<MetricsJson> {
  const log = options.log ?? createLogger("score");
  const suite = openSuite(options.suiteDir);
  const filter = { ...(options.tracks ? { tracks: options.tracks } : {}), ...(options.families ? { families: options.families } : {}) };
  const { accumulators, identity } = await loadSuiteTracks(suite, filter);
  const byRunId = new Map<string, TrackAccumulator>();
  for (const acc of accumulators.values()) acc.sealRecords();
  const suiteTracks = new Set(suite.files.map((f) => f.track));
  const accOf = (runId: string): TrackAccumulator | undefined => {
    let acc = byRunId.get(runId);
    if (acc) return acc;
    const colon = runId.indexOf(":");
    acc = colon > 0 ? accumulators.get(runId.slice(0, colon)) : undefined;
    if (acc?.hasRecord(runId)) return acc;
    for (const a of accumulators.values()) {
      if (a.hasRecord(runId)) {
        byRunId.set(runId, a);
        return a;
      }
    }
    return undefined;
  };

  for (const file of resultFiles(options.resultsDir)) {
    const reader = readJsonLines(file, {
      onTornLastLine: (line) => log.warn(`${file}:${line}: torn last line (no newline, not valid JSON) ignored; the run may still be writing`),
    });
    for await (const { line, value } of reader) {
      const result = parseResultLine(file, line, value);
      const acc = accOf(result.run_id);
      if (acc) {
        acc.addResult(result);
        continue;
      }
      const colon = result.run_id.indexOf(":");
      const trackPart = colon > 0 ? result.run_id.slice(0, colon) : "";
      // A result of a suite track left out by --tracks/--families is not scored, and not an error.
      if (suiteTracks.has(trackPart) && !accumulators.has(trackPart)) continue;
      throw new FormatError(file, line, "run_id", `run_id ${JSON.stringify(result.run_id)} matches no record of the suite ${suite.root}`);
    }
  }

  const tracks: Record<string, TrackMetrics> = {};
  for (const [name, acc] of accumulators) {
    if (!acc.isComplete()) log.warn(`track ${name}: ${acc.recordCount - acc.resultCount} of ${acc.recordCount} records have no result line (scored as missing)`);
    if (acc.invalidDistributions > 0) log.warn(`track ${name}: ${acc.invalidDistributions} invalid distribution(s) scored as missing`);
    tracks[name] = acc.finish();
  }
  const { families, pillars, summary } = aggregate(tracks, (t) => accumulators.get(t)!.headlineResamples());
  return { format: METRICS_FORMAT, suite: { identity, tracks: suite.files.length }, tracks, families, pillars, summary };
}
