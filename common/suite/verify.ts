// `suite verify`: every line against the schema, counts and hashes against the manifest, the
// file list against the manifest, and the identity fields of every record. It goes on past
// problems so that one run lists all of them (file:line:field: problem).
import { FormatError } from "../errors.js";
import { openSuite, readTrackRecords, suiteIdentity, type Suite, type TrackFile } from "./suite.js";
import type { SuiteRecord } from "./schema.js";

export interface SuiteVerification {
  /** One line per problem, `<relative path>[:<line>][:<field>]: <problem>`; empty when clean. */
  problems: string[];
  files: number;
  records: number;
  /** Suite identity over the files as read (SUITE_FORMAT.md). */
  identity: string;
  /** Whether a manifest.json was there to check counts and hashes against. */
  manifest: boolean;
}

/** Most candidates in one reranking row (the card: chunks of at most 25). */
export const MAX_RERANK_CHUNK = 25;

interface FileCheck {
  rows: number;
  groups: number;
  sha256: string | undefined;
  /** The file could not be read to its end (corrupt gzip, unreadable). */
  unreadable: boolean;
}

export async function verifySuite(dir: string): Promise<SuiteVerification> {
  const suite = openSuite(dir);
  const problems: string[] = [];
  const hashes: Record<string, string> = {};
  let records = 0;
  for (const file of suite.files) {
    const check = await checkFile(file, problems);
    records += check.rows;
    if (check.sha256) hashes[file.relPath] = check.sha256;
    compareWithManifest(suite, file, check, problems);
  }
  checkFileList(suite, problems);
  return { problems, files: suite.files.length, records, identity: suiteIdentity(hashes), manifest: suite.manifest !== undefined };
}

async function checkFile(file: TrackFile, problems: string[]): Promise<FileCheck> {
  const report = (line: number | undefined, field: string | undefined, problem: string) =>
    problems.push(`${file.relPath}${line !== undefined ? `:${line}` : ""}${field ? `:${field}` : ""}: ${problem}`);
  const badLines = new Set<number>();
  const groups = new Set<string>();
  const groupQrels = new Map<string, string>();
  let good = 0;
  let sha256: string | undefined;
  let unreadable = false;
  try {
    const reader = readTrackRecords(file, {
      onHash: (h) => (sha256 = h),
      onProblem: (e) => {
        if (e.line !== undefined) badLines.add(e.line);
        report(e.line, e.field, e.problem);
      },
    });
    for await (const rec of reader) {
      good++;
      groups.add(rec.metadata.group_id);
      checkRecord(file, rec, groupQrels, (field, problem) => report(rec.line, field, problem));
    }
  } catch (err) {
    unreadable = true;
    report(err instanceof FormatError ? err.line : undefined, undefined, err instanceof FormatError ? err.problem : String(err));
  }
  return { rows: good + badLines.size, groups: groups.size, sha256, unreadable };
}

/** Consistency a schema cannot express: identity fields, gold against options, reranking chunks. */
function checkRecord(
  file: TrackFile,
  rec: SuiteRecord & { line: number },
  groupQrels: Map<string, string>,
  report: (field: string, problem: string) => void,
): void {
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
    else if (q.type === "choice" && (typeof gold !== "string" || !(gold in q.criteria))) {
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
    const first = groupQrels.get(rec.metadata.group_id);
    if (first === undefined) groupQrels.set(rec.metadata.group_id, qrels);
    else if (first !== qrels) report("scoring.qrels", `differs from the qrels of an earlier chunk of group ${JSON.stringify(rec.metadata.group_id)}`);
  }
}

function compareWithManifest(suite: Suite, file: TrackFile, check: FileCheck, problems: string[]): void {
  if (!suite.manifest) return;
  const entry = suite.manifest.files[file.relPath];
  if (!entry) {
    problems.push(`${file.relPath}: extra file, not listed in manifest.json`);
    return;
  }
  if (check.unreadable) return; // counts and hash of a file read in part would only repeat the problem
  if (check.sha256 && entry.sha256.toLowerCase() !== check.sha256) {
    problems.push(`${file.relPath}: sha256 mismatch (manifest ${entry.sha256}, decompressed file ${check.sha256})`);
  }
  if (entry.rows !== undefined && entry.rows !== check.rows) problems.push(`${file.relPath}: rows ${check.rows}, manifest says ${entry.rows}`);
  if (entry.groups !== undefined && entry.groups !== check.groups) problems.push(`${file.relPath}: groups ${check.groups}, manifest says ${entry.groups}`);
}

function checkFileList(suite: Suite, problems: string[]): void {
  if (!suite.manifest) return;
  const present = new Set(suite.files.map((f) => f.relPath));
  for (const path of Object.keys(suite.manifest.files)) {
    if (!present.has(path)) problems.push(`${path}: missing file (listed in manifest.json)`);
  }
  const tracks = new Set(suite.files.map((f) => f.track));
  for (const track of suite.manifest.tracks ?? []) {
    if (!tracks.has(track) && !Object.keys(suite.manifest.files).some((p) => p.endsWith(`/${track}.jsonl.gz`))) {
      problems.push(`manifest.json:tracks: track ${JSON.stringify(track)} has no file`);
    }
  }
  const listed = new Set(suite.manifest.tracks ?? []);
  if (suite.manifest.tracks) {
    for (const f of suite.files) if (!listed.has(f.track)) problems.push(`manifest.json:tracks: track ${JSON.stringify(f.track)} has a file but is not listed`);
  }
}
