// Reads the suite once at start: hashes every file (suite identity, manifest check), and keeps per
// record in scope only what the coordinator needs: ids, group, question and option keys (for
// validating results) and where its payload was spilled. Gold is read here and handed to the
// scorer of this process when it asks (onGold: it then reads nothing itself), else dropped.
import { join } from "node:path";
import { UsageError, FormatError } from "../common/errors.js";
import { NOUL_KEYS } from "../common/results/format.js";
import { decompressedSha256, manifestHashProblem, selectFiles, suiteIdentity, type Suite, type TrackFile, type TrackFilter } from "../common/suite/suite.js";
import { goldOf, type GoldMessage, type GoldRecord } from "../common/suite/gold-feed.js";
import { openCheckedSuite, readCheckedTrack } from "../common/suite/suite-check.js";
import type { Logger } from "../common/log.js";
import { PayloadSpill, type SpillSlot } from "./payload-spill.js";
import { payloadSpans } from "./payload-spans.js";
import { cacheDir } from "./out-dir-lock.js";

export interface QuestionSpec {
  key: string;
  /** Criteria keys in criteria order; ["true", "false"] for noul. */
  options: readonly string[];
}

/**
 * What the coordinator keeps of one record. Questions are held compactly (one string of keys, shared
 * option lists): the full suite has 427,652 questions, and an object per question cost ~27 MB of
 * heap (measured). questionSpecs() expands them when a result is checked.
 */
export interface RecordEntry extends SpillSlot {
  runId: string;
  id: string;
  groupId: string;
  payloadSha256: string;
  /** Question keys in file order, joined by QUESTION_KEY_SEPARATOR. */
  questionKeys: string;
  questionCount: number;
  /** Option keys per question; a single list when every question has the same (shared, interned). */
  optionLists: ReadonlyArray<readonly string[]>;
}

export const QUESTION_KEY_SEPARATOR = "\u0000";

export function questionSpecs(r: RecordEntry): QuestionSpec[] {
  if (r.questionCount === 0) return [];
  const keys = r.questionKeys.split(QUESTION_KEY_SEPARATOR);
  const shared = r.optionLists.length === 1 ? r.optionLists[0]! : undefined;
  return keys.map((key, i) => ({ key, options: shared ?? r.optionLists[i] ?? [] }));
}

/** Interns option lists (A..D, "0".."4", noul) and lists of lists, so records share them. */
export class OptionInterner {
  private readonly lists = new Map<string, readonly string[]>([[NOUL_KEYS.join("\u0000"), NOUL_KEYS]]);
  private readonly listIds = new Map<readonly string[], number>();
  private readonly perRecord = new Map<string, ReadonlyArray<readonly string[]>>();

  list(keys: readonly string[]): readonly string[] {
    const k = keys.join("\u0000");
    const hit = this.lists.get(k);
    if (hit) return hit;
    this.lists.set(k, keys);
    return keys;
  }

  /** The per-record option lists: one shared list when all questions agree. */
  forRecord(lists: ReadonlyArray<readonly string[]>): ReadonlyArray<readonly string[]> {
    const interned = lists.map((l) => this.list(l));
    const distinct = new Set(interned);
    const compact = distinct.size <= 1 ? [...distinct] : interned;
    const k = compact.map((l) => this.idOf(l)).join(",");
    const hit = this.perRecord.get(k);
    if (hit) return hit;
    this.perRecord.set(k, compact);
    return compact;
  }

  private idOf(list: readonly string[]): number {
    let id = this.listIds.get(list);
    if (id === undefined) this.listIds.set(list, (id = this.listIds.size));
    return id;
  }
}

/** The compact form of a record's questions (keys in order, option keys per question). */
export function compactQuestions(specs: readonly QuestionSpec[], interner: OptionInterner): Pick<RecordEntry, "questionKeys" | "questionCount" | "optionLists"> {
  return {
    questionKeys: specs.map((q) => q.key).join(QUESTION_KEY_SEPARATOR),
    questionCount: specs.length,
    optionLists: interner.forRecord(specs.map((q) => q.options)),
  };
}

export interface TrackIndex {
  track: string;
  family: string;
  relPath: string;
  /** In file order. */
  records: RecordEntry[];
}

export interface SuiteIndex {
  root: string;
  identity: string;
  /** relPath -> sha256 of the decompressed bytes, every file of the suite. */
  fileHashes: Record<string, string>;
  tracks: TrackIndex[];
  /** run_id -> record, with its track. */
  byRunId: Map<string, { track: TrackIndex; record: RecordEntry }>;
  totalRecords: number;
  spill: PayloadSpill;
}

export interface IndexOptions extends TrackFilter {
  suiteDir: string;
  /** Where the payload spill file goes (removed by spill.dispose()). */
  spillPath: string;
  logger?: Logger;
  /**
   * Receives each selected track's gold as it is read, then the suite identity (the scorer of this
   * process takes its gold from here instead of reading the suite again).
   */
  onGold?: (message: GoldMessage) => void;
}

/**
 * Reads and checks the selected tracks (gold included, before anything is served), one pass over
 * each file that hashes, checks, indexes and spills; hashes the others too. Throws on a manifest
 * mismatch.
 */
export async function indexSuite(options: IndexOptions): Promise<SuiteIndex> {
  const suite = openCheckedSuite(options.suiteDir);
  const selected = selectFiles(suite, options);
  const selectedPaths = new Set(selected.map((f) => f.relPath));
  const fileHashes: Record<string, string> = {};
  const tracks: TrackIndex[] = [];
  const byRunId = new Map<string, { track: TrackIndex; record: RecordEntry }>();
  const spill = new PayloadSpill(options.spillPath);
  const interner = new OptionInterner();
  try {
    for (const file of suite.files) {
      if (!selectedPaths.has(file.relPath)) {
        fileHashes[file.relPath] = await decompressedSha256(file.path);
        continue;
      }
      const { track, sha256 } = await indexTrackFile(suite, file, { spill, interner, byRunId, gold: options.onGold !== undefined });
      fileHashes[file.relPath] = sha256;
      tracks.push(track.index);
      if (options.onGold) options.onGold({ kind: "track", track: file.track, family: file.family, relPath: file.relPath, path: file.path, recordsJson: track.goldJson!, sha256 });
    }
    const problems = suite.files
      .map((f) => manifestHashProblem(suite, f, fileHashes[f.relPath] ?? ""))
      .filter((p): p is string => p !== undefined);
    if (problems.length > 0) {
      throw new UsageError(`suite ${suite.root} does not match its manifest.json:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    }
    await spill.settled();
  } catch (err) {
    spill.dispose();
    throw err;
  }
  const totalRecords = tracks.reduce((n, t) => n + t.records.length, 0);
  const identity = suiteIdentity(fileHashes);
  options.logger?.info("suite indexed", { root: suite.root, tracks: tracks.length, records: totalRecords, spill_bytes: spill.bytes });
  options.onGold?.({ kind: "end", identity });
  return { root: suite.root, identity, fileHashes, tracks, byRunId, totalRecords, spill };
}

interface TrackFileSinks {
  spill: PayloadSpill;
  interner: OptionInterner;
  /** Every run_id indexed so far, across files (a run_id may appear once in the suite). */
  byRunId: Map<string, { track: TrackIndex; record: RecordEntry }>;
  /** Collect the gold of the records (GoldMessage.recordsJson). */
  gold: boolean;
}

/** The one pass over a selected track file: read, hash, check (readCheckedTrack), index, spill, and its gold. */
async function indexTrackFile(suite: Suite, file: TrackFile, sinks: TrackFileSinks): Promise<{ track: { index: TrackIndex; goldJson: string | undefined }; sha256: string }> {
  const { spill, interner, byRunId } = sinks;
  const track: TrackIndex = { track: file.track, family: file.family, relPath: file.relPath, records: [] };
  const gold: GoldRecord[] | undefined = sinks.gold ? [] : undefined;
  let sha256 = "";
  for await (const rec of readCheckedTrack(suite, file, (h) => (sha256 = h), { raw: true })) {
    const runId = rec._evaluation.run_id;
    if (byRunId.has(runId)) throw new FormatError(file.path, rec.line, "_evaluation.run_id", `duplicate run_id ${JSON.stringify(runId)}`);
    const questions: QuestionSpec[] = [];
    for (const key in rec.questions) {
      if (key.includes(QUESTION_KEY_SEPARATOR)) throw new FormatError(file.path, rec.line, `questions.${key}`, "a question key may not contain a NUL character");
      const q = rec.questions[key]!;
      questions.push({ key, options: q.type === "noul" ? NOUL_KEYS : Object.keys(q.criteria) });
    }
    const raw = rec.raw;
    const spans = raw ? payloadSpans(raw) : undefined;
    const slot =
      raw && spans
        ? spill.addBytes(raw, spans.stateStart, spans.stateEnd, raw, spans.questionsStart, spans.questionsEnd)
        : spill.add(JSON.stringify(rec.state), JSON.stringify(rec.questions));
    const entry: RecordEntry = {
      ...slot,
      runId,
      id: rec.id,
      groupId: rec.metadata.group_id,
      payloadSha256: rec._evaluation.payload_sha256 ?? "",
      ...compactQuestions(questions, interner),
    };
    track.records.push(entry);
    byRunId.set(runId, { track, record: entry });
    gold?.push(goldOf(rec));
  }
  return { track: { index: track, goldJson: gold ? JSON.stringify(gold) : undefined }, sha256 };
}

export function defaultSpillPath(outDir: string): string {
  return join(cacheDir(outDir), `payloads-${process.pid}.bin`);
}
