// The checkpoint and source of truth: `<out>/<family>/<track>.jsonl` in the reference runner's
// format, one append log (common/results/append-log.ts) per track file. Lines are batched across
// tracks and fsynced; a result counts as committed only after its fsync. On open, every track file
// is scanned for committed run_ids and a torn last line (a crash mid-write) is cut off.
import { mkdirSync } from "node:fs";
import { AppendLog, type TornLine, type CommittedLine, type ResultInput, type RowFacts, lineHasErrors, parseResultLine, scanResultRow, trackFilesUnder, trackResultsPath } from "../common/results/index.js";
import type { Logger } from "../common/log.js";
import { COORDINATOR_DEFAULTS } from "./coordinator-options.js";

export type RepairedFile = TornLine;

export interface ResultsStoreOptions {
  outDir: string;
  /** Flush once this many lines are waiting. Default COORDINATOR_DEFAULTS.storeBatchLines. */
  batchLines?: number;
  /** Flush at the latest this long (ms) after the first waiting line. Default COORDINATOR_DEFAULTS.storeFlushMs. */
  flushMs?: number;
  logger?: Logger;
  /** Called once per line after its fsync. */
  onCommitted?: (line: CommittedLine) => void;
  /** A write or fsync failed; the store refuses further lines. */
  onError?: (err: Error) => void;
  /**
   * Scan no file at open: each is scanned by scanTrack (before its track's units go out) or
   * scanRest, so a resumed start hands out work before it has re-read every committed line.
   */
  deferScan?: boolean;
}

interface TrackFileState {
  log: AppendLog;
  waiting: CommittedLine[];
}

export class ResultsStore {
  private readonly committed = new Set<string>();
  /** Committed records whose latest line has errors (issue 14: counted, and redone by the next start). */
  private readonly errored = new Set<string>();
  private readonly waiting = new Set<string>();
  /** By family, then track (no key string made per line). */
  private readonly files = new Map<string, Map<string, TrackFileState>>();
  /** The same, in the order they were first written to. */
  private readonly fileOrder: TrackFileState[] = [];
  /** The log of every track file, by path: those found at open, then those written. */
  private readonly logs = new Map<string, AppendLog>();
  private waitingCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;
  readonly repaired: RepairedFile[] = [];

  private constructor(private readonly options: ResultsStoreOptions) {}

  /** Scans `outDir` (repairing torn last lines) and returns a store that knows what is committed. */
  static async open(options: ResultsStoreOptions): Promise<ResultsStore> {
    const store = new ResultsStore(options);
    mkdirSync(options.outDir, { recursive: true });
    for (const file of trackFilesUnder(options.outDir)) store.unscanned.add(file);
    if (!options.deferScan) await store.scanRest();
    return store;
  }

  /** Track files found at open and not scanned yet: nothing may be appended to them before. */
  private readonly unscanned = new Set<string>();

  /** Scans one track's file if it was there at open and is not scanned yet (deferScan). */
  async scanTrack(family: string, track: string): Promise<void> {
    await this.scan(trackResultsPath(this.options.outDir, family, track));
  }

  /** Scans every file not scanned yet. */
  async scanRest(): Promise<void> {
    for (const file of [...this.unscanned]) await this.scan(file);
  }

  private async scan(file: string): Promise<void> {
    if (!this.unscanned.delete(file)) return;
    // A run_id lives in its track's file only, so a file's errored records are settled with it.
    const errored = new Set<string>();
    const { log, torn } = await AppendLog.open(file, {
      // A line's run_id and whether it has errors, read from its bytes where its shape is the plain
      // one the parse takes (row-scan.ts): a resumed start parsed every committed line twice (here
      // and in the scorer's replay), each a tree of objects with keys no other line has.
      scan: plainRowFacts,
      onLine: (value, line, scanned) => {
        const row = scanned ? (value as RowFacts) : factsOf(parseResultLine(file, line, value, "not a results line: "));
        this.committed.add(row.runId);
        if (row.errored) errored.add(row.runId);
        else errored.delete(row.runId);
      },
    });
    this.logs.set(file, log);
    if (torn) {
      this.repaired.push(torn);
      this.options.logger?.warn("torn last line cut off (crash mid-write?); its record will be redone", { file, line: torn.line, bytes_dropped: torn.bytesDropped });
    }
    // A record whose latest line has errors is not done: this start redoes it, and its new line
    // supersedes the old one (the results format: the later line of a run_id wins).
    for (const recordKey of errored) this.committed.delete(recordKey);
    this.retrying += errored.size;
  }

  /** Records whose latest line had errors when the store was opened (redone by this start). */
  retrying = 0;

  /** Committed records whose latest line has errors. */
  get erroredCount(): number {
    return this.errored.size;
  }

  private noteErrors(recordKey: string, errored: boolean): void {
    if (errored) this.errored.add(recordKey);
    else this.errored.delete(recordKey);
  }

  /** Committed (fsynced) or waiting to be: a second line for this run_id would be a duplicate. */
  has(recordKey: string): boolean {
    return this.committed.has(recordKey) || this.waiting.has(recordKey);
  }

  isCommitted(recordKey: string): boolean {
    return this.committed.has(recordKey);
  }

  get committedCount(): number {
    return this.committed.size;
  }

  get pendingLines(): number {
    return this.waitingCount;
  }

  /** Queues a line; false when its run_id is already committed or waiting (nothing written). */
  append(line: CommittedLine): boolean {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error("results store is closed");
    if (this.has(line.recordKey)) return false;
    let family = this.files.get(line.family);
    if (!family) this.files.set(line.family, (family = new Map()));
    let f = family.get(line.track);
    if (!f) {
      const path = trackResultsPath(this.options.outDir, line.family, line.track);
      if (this.unscanned.has(path)) throw new Error(`results store: ${path} was not scanned before a line was appended to it`);
      let log = this.logs.get(path);
      if (!log) this.logs.set(path, (log = new AppendLog(path)));
      family.set(line.track, (f = { log, waiting: [] }));
      this.fileOrder.push(f);
    }
    f.waiting.push(line);
    this.waiting.add(line.recordKey);
    this.waitingCount++;
    if (this.waitingCount >= (this.options.batchLines ?? COORDINATOR_DEFAULTS.storeBatchLines)) void this.flush().catch(() => undefined);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch(() => undefined);
      }, this.options.flushMs ?? COORDINATOR_DEFAULTS.storeFlushMs);
    }
    return true;
  }

  /** Writes and fsyncs every waiting line; resolves once they are committed. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flushing.then(() => this.writeWaiting());
    return this.flushing;
  }

  /**
   * Group commit: every track file with waiting lines is written, then all are fsynced at once, and
   * their lines count as committed together (one fsync per file per flush, run side by side).
   */
  private async writeWaiting(): Promise<void> {
    if (this.failure) throw this.failure;
    const batch: Array<{ f: TrackFileState; lines: CommittedLine[] }> = [];
    for (const f of this.fileOrder) {
      if (f.waiting.length === 0) continue;
      const lines = f.waiting;
      f.waiting = [];
      this.waitingCount -= lines.length;
      for (const l of lines) f.log.append(l.text);
      batch.push({ f, lines });
    }
    const outcomes = await Promise.allSettled(batch.map(({ f }) => f.log.flush()));
    let failed: { f: TrackFileState; err: unknown } | undefined;
    for (let i = 0; i < batch.length; i++) {
      const outcome = outcomes[i]!;
      if (outcome.status === "rejected") {
        failed ??= { f: batch[i]!.f, err: outcome.reason };
        continue;
      }
      for (const l of batch[i]!.lines) {
        this.waiting.delete(l.recordKey);
        this.committed.add(l.recordKey);
        this.noteErrors(l.recordKey, l.errored);
      }
    }
    // Lines whose fsync succeeded are committed even when another file's failed.
    for (let i = 0; i < batch.length; i++) {
      if (outcomes[i]!.status === "fulfilled") for (const l of batch[i]!.lines) this.options.onCommitted?.(l);
    }
    if (failed) {
      this.failure = new Error(`cannot write results to ${failed.f.log.path}: ${(failed.err as Error).message}`, { cause: failed.err });
      this.options.onError?.(this.failure);
      throw this.failure;
    }
  }

  /** Flushes, then closes every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      for (const log of this.logs.values()) await log.close().catch(() => undefined);
    }
  }
}

function plainRowFacts(bytes: Buffer, start: number, end: number): RowFacts | undefined {
  const row = scanResultRow(bytes, start, end);
  return row?.plain ? row : undefined;
}

function factsOf(line: ResultInput): Pick<RowFacts, "runId" | "errored"> {
  return { runId: line.run_id, errored: lineHasErrors(line) };
}
