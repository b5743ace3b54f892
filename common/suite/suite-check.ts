// The one startup check of a suite, shared by `suite verify`, `score`, `run`, the coordinator and
// the streaming scorer so they can never disagree: the file list against manifest.json, one file
// per track, no symlink that leaves the suite, every record's gold against its questions, and each
// file's rows, groups and sha256 against the manifest.
import { FormatError, UsageError } from "../errors.js";
import { openSuite, readTrackRecords, type Suite, type TrackFile } from "./suite.js";
import type { SuiteRecord } from "./schema.js";
import type { TextsAsBytes } from "./record-texts.js";

/** Most candidates in one reranking row (the card: chunks of at most 25). */
export const MAX_RERANK_CHUNK = 25;

/** Problems of the suite's layout, found without reading a record: `<path>: <problem>`. */
export function layoutProblems(suite: Suite): string[] {
  const problems = [...suite.layoutProblems];
  const byTrack = new Map<string, TrackFile[]>();
  for (const f of suite.files) byTrack.set(f.track, [...(byTrack.get(f.track) ?? []), f]);
  for (const [track, files] of byTrack) {
    if (files.length > 1) problems.push(`track ${JSON.stringify(track)} has a file in ${files.length} family folders: ${files.map((f) => f.relPath).join(", ")}`);
  }
  const manifest = suite.manifest;
  if (!manifest) return problems;
  const present = new Set(suite.files.map((f) => f.relPath));
  for (const f of suite.files) if (!manifest.files[f.relPath]) problems.push(`${f.relPath}: extra file, not listed in manifest.json`);
  for (const path of Object.keys(manifest.files)) {
    if (!present.has(path)) problems.push(`${path}: missing file (listed in manifest.json)`);
  }
  const tracks = new Set(suite.files.map((f) => f.track));
  for (const track of manifest.tracks ?? []) {
    if (!tracks.has(track) && !Object.keys(manifest.files).some((p) => p.endsWith(`/${track}.jsonl.gz`))) {
      problems.push(`manifest.json:tracks: track ${JSON.stringify(track)} has no file`);
    }
  }
  if (manifest.tracks) {
    const listed = new Set(manifest.tracks);
    for (const f of suite.files) if (!listed.has(f.track)) problems.push(`manifest.json:tracks: track ${JSON.stringify(f.track)} has a file but is not listed`);
  }
  return problems;
}

/** Opens a suite and refuses it (UsageError, exit 2) when its layout has any problem. */
export function openCheckedSuite(dir: string): Suite {
  const suite = openSuite(dir);
  const problems = layoutProblems(suite);
  if (problems.length > 0) throw new UsageError(`suite ${suite.root} is not sound (run \`udm-orch suite verify\`):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  return suite;
}

/** Consistency of the records of one file that a schema cannot express: identity fields, gold against options, reranking chunks. */
export class RecordChecker {
  private readonly groupQrels = new Map<string, string>();
  constructor(private readonly file: TrackFile) {}

  check(rec: SuiteRecord, report: (field: string, problem: string) => void): void {
    const file = this.file;
    const evaluation = rec._evaluation as { track?: unknown; group_id?: unknown };
    if (evaluation.track !== undefined && evaluation.track !== file.track) {
      report("_evaluation.track", `${JSON.stringify(evaluation.track)} but the file is track ${JSON.stringify(file.track)}`);
    }
    if (evaluation.group_id !== undefined && evaluation.group_id !== rec.metadata.group_id) {
      report("_evaluation.group_id", `${JSON.stringify(evaluation.group_id)} differs from metadata.group_id ${JSON.stringify(rec.metadata.group_id)}`);
    }
    if (rec.family !== file.family) report("family", `${JSON.stringify(rec.family)} but the file is in folder ${JSON.stringify(file.family)}`);
    for (const [key, gold] of Object.entries(rec.expected)) {
      const q = rec.questions[key];
      if (!q) report(`expected.${key}`, "gold for a question that the record does not ask");
      else if (q.type === "noul" && typeof gold !== "boolean") report(`expected.${key}`, `noul gold must be true or false, got ${JSON.stringify(gold)}`);
      else if (q.type === "choice" && (typeof gold !== "string" || !Object.hasOwn(q.criteria, gold))) {
        report(`expected.${key}`, `${JSON.stringify(gold)} is not one of the options of questions.${key}.criteria`);
      }
    }
    for (const [key, q] of Object.entries(rec.questions)) {
      if (q.type === "choice" && Object.keys(q.criteria).length === 0) report(`questions.${key}.criteria`, "choice question without options");
    }
    const scoring = rec.scoring;
    if (scoring && "type" in scoring && scoring.type === "retrieval_ranking") {
      const n = Object.keys(rec.questions).length;
      if (n > MAX_RERANK_CHUNK) report("questions", `reranking chunk holds ${n} candidates (at most ${MAX_RERANK_CHUNK})`);
      const qrels = JSON.stringify(Object.entries(scoring.qrels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const first = this.groupQrels.get(rec.metadata.group_id);
      if (first === undefined) this.groupQrels.set(rec.metadata.group_id, qrels);
      else if (first !== qrels) report("scoring.qrels", `differs from the qrels of an earlier chunk of group ${JSON.stringify(rec.metadata.group_id)}`);
    }
  }
}

export interface FileCounts {
  rows: number;
  groups: number;
  sha256: string;
}

/** A file's counts and hash against its manifest entry: `<relPath>: <problem>` each. */
export function manifestProblems(suite: Suite, file: TrackFile, counts: FileCounts): string[] {
  if (!suite.manifest) return [];
  const entry = suite.manifest.files[file.relPath];
  if (!entry) return [`${file.relPath}: extra file, not listed in manifest.json`];
  const problems: string[] = [];
  if (entry.sha256.toLowerCase() !== counts.sha256) problems.push(`${file.relPath}: sha256 mismatch (manifest ${entry.sha256}, decompressed file ${counts.sha256})`);
  if (entry.rows !== undefined && entry.rows !== counts.rows) problems.push(`${file.relPath}: rows ${counts.rows}, manifest says ${entry.rows}`);
  if (entry.groups !== undefined && entry.groups !== counts.groups) problems.push(`${file.relPath}: groups ${counts.groups}, manifest says ${entry.groups}`);
  return problems;
}

/**
 * The records of one track file, checked as `verify` checks them: the first bad record throws a
 * FormatError naming file, line and field; once the file is read whole, counts or a hash that
 * differ from the manifest throw a UsageError. `onHash` gets the sha256 of the decompressed bytes;
 * with `raw`, each record carries its line's bytes; with `textsAsBytes`, its texts may be byte
 * strings (ReadRecordsOptions.textsAsBytes).
 */
export async function* readCheckedTrack(
  suite: Suite,
  file: TrackFile,
  onHash?: (sha256: string) => void,
  options: { raw?: boolean; textsAsBytes?: boolean } = {},
): AsyncGenerator<SuiteRecord & TextsAsBytes & { line: number; raw?: Buffer }> {
  const checker = new RecordChecker(file);
  const groups = new Set<string>();
  let rows = 0;
  let sha256 = "";
  for await (const rec of readTrackRecords(file, { onHash: (h) => (sha256 = h), ...(options.raw ? { raw: true } : {}), ...(options.textsAsBytes ? { textsAsBytes: true } : {}) })) {
    checker.check(rec, (field, problem) => {
      throw new FormatError(file.path, rec.line, field, problem);
    });
    rows++;
    groups.add(rec.metadata.group_id);
    yield rec;
  }
  const problems = manifestProblems(suite, file, { rows, groups: groups.size, sha256 });
  if (problems.length > 0) {
    throw new UsageError(`suite ${suite.root} does not match its manifest.json:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  onHash?.(sha256);
}
