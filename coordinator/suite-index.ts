// Reads the suite once at start: hashes every file (suite identity, manifest check), and keeps per
// record in scope only what the coordinator needs: ids, group, question and option keys (for
// validating results) and where its payload was spilled. Gold is read here and handed to the
// scorer of this process when it asks (onGold: it then reads nothing itself), else dropped.
import { statSync } from "node:fs";
import { join } from "node:path";
import { UsageError, FormatError } from "../common/errors.js";
import { NOUL_KEYS } from "../common/results/index.js";
import { decompressedSha256, limitRecords, manifestHashProblem, selectFiles, suiteIdentity, type TrackFilter, type GoldMessage, type Suite, openCheckedSuite } from "../common/suite/index.js";
import type { Logger } from "../common/log.js";
import { PayloadSpill, type SpillSlot } from "./payload-spill.js";
import { defaultReaderCount, readerEntry, runReaders, startReadersEarly, takeEarlyReaders, type ReaderTask } from "./suite-readers.js";
import { decodeThreadError } from "../common/thread-error.js";
import { QUESTION_KEY_SEPARATOR, readTrackFile, type ReadEntry } from "./track-reader.js";
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
  recordKey: string;
  id: string;
  groupId: string;
  payloadSha256: string;
  /** Question keys in file order, joined by QUESTION_KEY_SEPARATOR. */
  questionKeys: string;
  questionCount: number;
  /** Option keys per question; a single list when every question has the same (shared, interned). */
  optionLists: ReadonlyArray<readonly string[]>;
}

export { QUESTION_KEY_SEPARATOR };

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
  /** Records per track at most, whole groups (common/suite/record-limit.ts); all when absent. */
  limit?: number;
  logger?: Logger;
  /**
   * Receives each selected track's gold as it is read, then the suite identity (the scorer of this
   * process takes its gold from here instead of reading the suite again).
   */
  onGold?: (message: GoldMessage) => void;
  /** Reader threads (0: read in this thread). Default: defaultReaderCount() when the build has their entry. */
  readers?: number;
  /** The reader threads' entry (tests point it at the build); default readerEntry(). */
  readerEntry?: URL;
  /**
   * Each selected track once its file is read whole and verified against the manifest, in read
   * order (readOrder), with where its payloads end in the spill (spill.writtenUpTo before sending them).
   */
  onTrack?: (track: TrackIndex, spillEnd: number) => void;
  /** Test hook: awaited before a file is read (reading in this thread only), to hold a track back deterministically. */
  beforeRead?: (relPath: string) => Promise<void>;
}

/** A suite being read: the index fills in as files are verified, in read order (readOrder). */
export interface SuiteReading {
  /** Tracks and records appear as their files are verified; identity is the declared one until the end. */
  index: SuiteIndex;
  /**
   * The identity manifest.json declares (every file's sha256 there): known before a file is read,
   * and the one the read confirms, since every file is checked against it. Undefined without a manifest.
   */
  declaredIdentity: string | undefined;
  /** The selected tracks in suite order (they are read in readOrder). */
  selectedTracks: Array<{ track: string; family: string; records: number }>;
  /** Resolves once every file is read and verified; rejects with the first problem in read order (readOrder). */
  read: Promise<SuiteIndex>;
  /** Stops reading before the next file (the run ended): `read` rejects, nothing more is placed. */
  stop(): void;
}

/** What has come back of one file of the suite, until it is placed in the index (in read order). */
interface FileResult {
  blocks: Array<{ base: number; entries: ReadEntry[] }>;
  sha256?: string;
  gold?: Uint8Array[];
  error?: Error;
  done: boolean;
}

/**
 * Reads and checks the selected tracks (gold included, before anything is served), one pass over
 * each file that hashes, checks, indexes and spills, files in parallel on reader threads where
 * there are cores for them; hashes the others too. Files are placed in read order (readOrder), so
 * the first problem in that order is the one thrown, whatever thread found it. Throws on a manifest mismatch.
 */
export async function indexSuite(options: IndexOptions): Promise<SuiteIndex> {
  const reading = readSuite(options);
  return reading.read.catch((err: unknown) => {
    reading.index.spill.dispose();
    throw err;
  });
}

/**
 * Starts reading the suite (indexSuite's pass) and returns at once with the index it fills in: a
 * track is placed (onTrack) only once its file is read whole and matches the manifest. The caller
 * owns the spill (dispose() it, also when `read` rejects). Throws at once on a suite whose layout
 * is unsound.
 */
export function readSuite(options: IndexOptions): SuiteReading {
  const suite = openCheckedSuite(options.suiteDir);
  const selected = selectFiles(suite, options);
  const selectedPaths = new Set(selected.map((f) => f.relPath));
  const manifest = suite.manifest;
  const declaredIdentity = manifest ? suiteIdentity(Object.fromEntries(suite.files.map((f) => [f.relPath, (manifest.files[f.relPath]?.sha256 ?? "").toLowerCase()]))) : undefined;
  const fileHashes: Record<string, string> = {};
  const tracks: TrackIndex[] = [];
  const byRunId = new Map<string, { track: TrackIndex; record: RecordEntry }>();
  const spill = new PayloadSpill(options.spillPath);
  const index: SuiteIndex = { root: suite.root, identity: declaredIdentity ?? "", fileHashes, tracks, byRunId, totalRecords: 0, spill };
  const control = { stopped: false };
  const read = readInto(suite, selectedPaths, index, options, control);
  // An unobserved rejection before the caller awaits it would end the process.
  read.catch(() => undefined);
  return { index, declaredIdentity, selectedTracks: selected.map((f) => ({ track: f.track, family: f.family, records: estimatedRecords(manifest?.files[f.relPath]?.rows ?? 0, options.limit) })), read, stop: () => (control.stopped = true) };
}

async function readInto(suite: Suite, selectedPaths: ReadonlySet<string>, index: SuiteIndex, options: IndexOptions, control: { stopped: boolean }): Promise<SuiteIndex> {
  const { fileHashes, tracks, byRunId, spill } = index;
  const interner = new OptionInterner();
  const gold = options.onGold !== undefined;
  const results: FileResult[] = suite.files.map(() => ({ blocks: [], done: false }));
  const order = readOrder(suite, selectedPaths);
  let placed = 0;
  /** Places every finished file that follows, in read order, the ones placed already. */
  const placeReady = () => {
    for (; placed < order.length && results[order[placed]!]!.done; placed++) {
      if (control.stopped) throw new Error("reading the suite stopped: the run ended");
      const file = suite.files[order[placed]!]!;
      const result = results[order[placed]!]!;
      if (result.error) throw result.error;
      // A selected file's counts and hash were checked as it was read (readCheckedTrack); a file
      // only hashed is checked here, so that nothing placed after it rests on an unverified file.
      const problem = manifestHashProblem(suite, file, result.sha256!);
      if (problem) throw new UsageError(`suite ${suite.root} does not match its manifest.json:\n  - ${problem}`);
      fileHashes[file.relPath] = result.sha256!;
      if (!selectedPaths.has(file.relPath)) continue;
      const track: TrackIndex = { track: file.track, family: file.family, relPath: file.relPath, records: [] };
      const seen = new Set<string>();
      for (const { base, entries } of result.blocks) {
        for (const e of entries) {
          if (seen.has(e.runId)) throw new FormatError(file.path, e.line, "_evaluation.run_id", `duplicate run_id ${JSON.stringify(e.runId)}`);
          seen.add(e.runId);
          const entry: RecordEntry = {
            offset: base + e.offset,
            stateBytes: e.stateBytes,
            questionsBytes: e.questionsBytes,
            recordKey: e.runId,
            id: e.id,
            groupId: e.groupId,
            payloadSha256: e.payloadSha256,
            questionKeys: e.questionKeys,
            questionCount: e.questionCount,
            optionLists: interner.forRecord(e.options),
          };
          track.records.push(entry);
        }
      }
      if (options.limit !== undefined) track.records = limitRecords(track.records, (r) => r.groupId, options.limit);
      for (const entry of track.records) byRunId.set(entry.recordKey, { track, record: entry });
      result.blocks = [];
      tracks.push(track);
      index.totalRecords += track.records.length;
      if (options.onGold) options.onGold({ kind: "track", track: file.track, family: file.family, relPath: file.relPath, path: file.path, records: result.gold!, sha256: result.sha256! });
      options.onTrack?.(track, spill.bytes);
      result.gold = undefined;
    }
  };
  const entry = options.readerEntry ?? readerEntry();
  // The test hook holds a file back in this thread: with it, this thread reads.
  const readers = entry && !options.beforeRead ? (options.readers ?? defaultReaderCount()) : 0;
  /** Reads one file in this thread, then places what is ready. */
  const readHere = async (index: number) => {
    const file = suite.files[index]!;
    const result = results[index]!;
    await options.beforeRead?.(file.relPath);
    if (control.stopped) throw new Error("reading the suite stopped: the run ended");
    if (!selectedPaths.has(file.relPath)) result.sha256 = await decompressedSha256(file.path);
    else {
      const read = await readTrackFile(suite, file, { gold, onBlock: (b) => result.blocks.push({ base: spill.appendBlock(b.bytes), entries: b.entries }) });
      result.sha256 = read.sha256;
      if (read.gold !== undefined) result.gold = read.gold;
    }
    result.done = true;
    placeReady();
  };
  // The first file (the smallest selected) is read in this thread while the reader threads start,
  // so the first unit does not wait for a thread's start; they take the rest.
  const [head, tasks] = readerTasks(suite, order, selectedPaths, gold);
  // Threads started for this read ahead of it (startSuiteReadEarly) are taken, or ended.
  const adopted = takeEarlyReaders(entry, readers, { suiteDir: suite.root }, tasks);
  if (readers > 0 && entry) {
    let headFailed = false;
    const restRead =
      tasks.length === 0
        ? Promise.resolve()
        : runReaders(entry, readers, { suiteDir: suite.root }, tasks, (msg) => {
            // The first file failed: the read is over, the threads end.
            if (headFailed) throw new Error("reading the suite stopped: its first file failed");
            const result = results[msg.index]!;
            if (msg.type === "block") result.blocks.push({ base: spill.appendBlock(msg.bytes), entries: msg.entries });
            else {
              result.done = true;
              if (msg.type === "error") result.error = decodeThreadError(msg.error);
              else {
                result.sha256 = msg.sha256;
                if (msg.gold !== undefined) result.gold = msg.gold;
              }
              placeReady();
            }
          }, adopted);
    restRead.catch(() => undefined);
    try {
      if (head !== undefined) await readHere(head);
    } catch (err) {
      headFailed = true;
      throw err;
    }
    await restRead;
    if (placed < suite.files.length) throw new Error(`the reader threads left ${suite.files.length - placed} file(s) of ${suite.root} unread`);
  } else {
    for (const index of order) await readHere(index);
  }
  const problems = suite.files
    .map((f) => manifestHashProblem(suite, f, fileHashes[f.relPath] ?? ""))
    .filter((p): p is string => p !== undefined);
  if (problems.length > 0) {
    throw new UsageError(`suite ${suite.root} does not match its manifest.json:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  await spill.settled();
  index.identity = suiteIdentity(fileHashes);
  options.logger?.info("suite indexed", { root: suite.root, tracks: tracks.length, records: index.totalRecords, spill_bytes: spill.bytes, reader_threads: readers, started_early: adopted?.readers.length ?? 0 });
  options.onGold?.({ kind: "end", identity: index.identity });
  return index;
}

/**
 * A track's records in scope before its file is read: the manifest's rows, at most --limit. The
 * limit keeps whole groups (record-limit.ts), so the kept count is known only once the file is read.
 */
function estimatedRecords(rows: number, limit: number | undefined): number {
  return limit === undefined ? rows : Math.min(rows, limit);
}

/**
 * The order files are read and placed in (indices into suite.files). With manifest.json the run
 * serves while the suite is read, and its first unit waits for the first track read whole (its
 * sha256 is over the whole file): the selected tracks are read smallest file first, so the first
 * unit waits for the smallest selected file whatever the size of the others; files outside the
 * selection (only hashed, for the identity) come last. Without a manifest nothing is served before
 * the whole read: suite order, so the first problem reported is the first in suite order.
 */
export function readOrder(suite: Suite, selectedPaths: ReadonlySet<string>): number[] {
  const all = suite.files.map((_, i) => i);
  if (!suite.manifest) return all;
  const size = (i: number) => {
    try {
      return statSync(suite.files[i]!.path).size;
    } catch {
      // Missing: the read reports it, first.
      return -1;
    }
  };
  const sizes = all.map(size);
  const selected = all.filter((i) => selectedPaths.has(suite.files[i]!.relPath));
  // Stable: equal sizes keep suite order.
  selected.sort((a, b) => sizes[a]! - sizes[b]! || a - b);
  return [...selected, ...all.filter((i) => !selectedPaths.has(suite.files[i]!.relPath))];
}

/** The file read in the coordinator's thread first (the first in read order), and the reader threads' tasks: the rest. */
function readerTasks(suite: Suite, order: readonly number[], selectedPaths: ReadonlySet<string>, gold: boolean): [number | undefined, ReaderTask[]] {
  const [head, ...rest] = order;
  return [head, rest.map((index) => ({ index, relPath: suite.files[index]!.relPath, selected: selectedPaths.has(suite.files[index]!.relPath), gold }))];
}

/**
 * Compressed bytes of the files handed to reader threads started early: about what one reads in
 * the 0.3 s the coordinator's thread takes to load (the full suite's 26 smallest files hold 4 MB).
 */
const EARLY_READ_BYTES = 4 << 20;

/**
 * Starts the reader threads of the read that readSuite will do with these options, before the
 * coordinator's thread has loaded the rest of the coordinator (worker-main.ts). Anything wrong with
 * the suite is left to the read itself to report: then nothing is started.
 */
export function startSuiteReadEarly(options: TrackFilter & Pick<IndexOptions, "readers" | "readerEntry"> & { suiteDir: string; gold: boolean }): void {
  const entry = options.readerEntry ?? readerEntry();
  const readers = options.readers ?? defaultReaderCount();
  if (!entry || readers === 0) return;
  try {
    const suite = openCheckedSuite(options.suiteDir);
    const selectedPaths = new Set(selectFiles(suite, options).map((f) => f.relPath));
    const tasks = readerTasks(suite, readOrder(suite, selectedPaths), selectedPaths, options.gold)[1];
    // The small files first in the order, up to EARLY_READ_BYTES of them: what a thread reads while this one loads.
    let posted = 0;
    for (let bytes = 0; posted < tasks.length; posted++) {
      bytes += statSync(join(suite.root, tasks[posted]!.relPath)).size;
      if (bytes > EARLY_READ_BYTES) break;
    }
    startReadersEarly(entry, readers, { suiteDir: suite.root }, tasks, posted);
  } catch {
    // The read reports it, naming what is wrong.
  }
}

export function defaultSpillPath(outDir: string): string {
  return join(cacheDir(outDir), `payloads-${process.pid}.bin`);
}
