// The checkpoint and source of truth: `<out>/<family>/<track>.jsonl` in the reference runner's
// format, one append log (common/results/append-log.ts) per track file. Lines are batched across
// tracks and fsynced; a result counts as committed only after its fsync. On open, every track file
// is scanned for committed run_ids and a torn last line (a crash mid-write) is cut off.
//
// Lines are written in this thread, or, given a results writer (line-writer-thread.ts), in that
// thread: then an accepted result goes there in a compact form (line-batch.ts), and this store keeps
// only what is waiting and what is committed.
import { mkdirSync } from "node:fs";
import { AppendLog, type TornLine, type CommittedLine, type LineQuestions, type ResultAnswer, type ResultInput, type RowFacts, lineHasErrors, parseResultLine, scanResultRow, trackFilesUnder, trackResultsPath, writeResultLine } from "../common/results/index.js";
import type { Logger } from "../common/log.js";
import { COORDINATOR_DEFAULTS } from "./coordinator-options.js";
import { LineBatchEncoder, type BatchRecord } from "./line-batch.js";
import type { LineWriterThread, WriteAnswer } from "./line-writer-thread.js";

/**
 * A committed line as the coordinator's thread learns of it: its text is there where lines are
 * written in this thread, or where the results writer was asked for texts (LineWriterOptions.textsWanted).
 */
export type CommitNotice = Omit<CommittedLine, "text"> & { text?: string };

/** The line of a notice, for a consumer that reads its text (the bus, a host's onCommitted). */
export function noticeLine(notice: CommitNotice): CommittedLine {
  if (notice.text === undefined) throw new Error(`results store: the text of ${notice.recordKey}'s line was not asked of the results writer`);
  return notice as CommittedLine;
}

export type RepairedFile = TornLine;

/** Batches the results writer holds at once: one written while the next is read. */
const WRITER_BATCHES_IN_FLIGHT = 2;
/** Probabilities in a writer's batch at most (their texts ~2 MB), whatever its lines' shapes. */
const WRITER_BATCH_VALUES = 100_000;

export interface ResultsStoreOptions {
  outDir: string;
  /** Flush once this many lines are waiting. Default COORDINATOR_DEFAULTS.storeBatchLines. */
  batchLines?: number;
  /** Flush at the latest this long (ms) after the first waiting line. Default COORDINATOR_DEFAULTS.storeFlushMs. */
  flushMs?: number;
  logger?: Logger;
  /** Called once per line after its fsync. */
  onCommitted?: (line: CommitNotice) => void;
  /** A write or fsync failed; the store refuses further lines. */
  onError?: (err: Error) => void;
  /**
   * Scan no file at open: each is scanned by scanTrack (before its track's units go out) or
   * scanRest, so a resumed start hands out work before it has re-read every committed line.
   */
  deferScan?: boolean;
  /** Lines are written in this thread (the store closes it with itself). */
  writer?: LineWriterThread;
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
  /** With a writer: the lines sent in the next batch, in order, and the batch being made. */
  private queued: CommitNotice[] = [];
  private readonly encoder: LineBatchEncoder | undefined;

  private constructor(private readonly options: ResultsStoreOptions) {
    if (options.writer) this.encoder = new LineBatchEncoder();
  }

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

  /** Queues a line written here; false when its run_id is already committed or waiting (nothing written). */
  append(line: CommittedLine): boolean {
    if (!this.admit(line.recordKey)) return false;
    if (this.encoder) {
      this.checkScanned(line.family, line.track);
      this.encoder.written(line);
      const { text: _text, ...notice } = line;
      this.queued.push(notice);
    } else this.queueHere(line);
    this.waited();
    return true;
  }

  /** Queues the line of an accepted answer; false when its run_id is already committed or waiting. */
  appendAnswer(record: BatchRecord, qs: LineQuestions, answer: ResultAnswer, track: string, family: string, agentId: string): boolean {
    if (!this.encoder) return this.append(writeResultLine(record, qs, answer, track, family, agentId));
    if (!this.admit(record.recordKey)) return false;
    this.checkScanned(family, track);
    this.encoder.accepted(record, qs, answer, track, family, agentId);
    this.queued.push({
      recordKey: record.recordKey,
      track,
      family,
      errored: lineHasErrors(answer),
      usage: { latencyMs: answer.latencyMs, promptTokens: answer.promptTokens, cachedTokens: answer.cachedTokens, completionTokens: answer.completionTokens },
    });
    this.waited();
    return true;
  }

  private admit(recordKey: string): boolean {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error("results store is closed");
    if (this.has(recordKey)) return false;
    this.waiting.add(recordKey);
    this.waitingCount++;
    return true;
  }

  /** Track files a writer was sent lines of (by family, then track): each was checked once to be scanned. */
  private readonly sentTo = new Map<string, Set<string>>();

  private checkScanned(family: string, track: string): void {
    let tracks = this.sentTo.get(family);
    if (!tracks) this.sentTo.set(family, (tracks = new Set()));
    if (tracks.has(track)) return;
    this.scannedPath(family, track);
    tracks.add(track);
  }

  /** The track's results file, which must not be one found at open and not scanned yet. */
  private scannedPath(family: string, track: string): string {
    const path = trackResultsPath(this.options.outDir, family, track);
    if (this.unscanned.has(path)) throw new Error(`results store: ${path} was not scanned before a line was appended to it`);
    return path;
  }

  private queueHere(line: CommittedLine): void {
    let family = this.files.get(line.family);
    if (!family) this.files.set(line.family, (family = new Map()));
    let f = family.get(line.track);
    if (!f) {
      const path = this.scannedPath(line.family, line.track);
      let log = this.logs.get(path);
      if (!log) this.logs.set(path, (log = new AppendLog(path)));
      family.set(line.track, (f = { log, waiting: [] }));
      this.fileOrder.push(f);
    }
    f.waiting.push(line);
  }

  /** A line joined the waiting ones: flush when the batch is full, or start its clock. */
  private waited(): void {
    // A writer's batch is also full at WRITER_BATCH_VALUES probabilities: its lines' texts are what
    // the writer's capped heap holds at once (256 lines of 64 questions of 26 options are ~10 MB).
    if (this.waitingCount >= (this.options.batchLines ?? COORDINATOR_DEFAULTS.storeBatchLines) || (this.encoder?.values ?? 0) >= WRITER_BATCH_VALUES) void this.flush().catch(() => undefined);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch(() => undefined);
      }, this.options.flushMs ?? COORDINATOR_DEFAULTS.storeFlushMs);
    }
  }

  /** Writes and fsyncs every waiting line; resolves once they are committed. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.options.writer) {
      this.sendWaiting(this.options.writer);
      return this.flushing;
    }
    // A flush that has not started yet takes every line waiting when it starts: a second is not queued
    // (each line appended while a slow fsync ran queued one more, thousands over a run).
    if (this.flushQueued) return this.flushing;
    this.flushQueued = true;
    this.flushing = this.flushing.then(() => {
      this.flushQueued = false;
      return this.writeWaiting();
    });
    return this.flushing;
  }

  private flushQueued = false;

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
    let failed: { path: string; err: unknown } | undefined;
    for (let i = 0; i < batch.length; i++) {
      const outcome = outcomes[i]!;
      if (outcome.status === "rejected") {
        failed ??= { path: batch[i]!.f.log.path, err: outcome.reason };
        continue;
      }
      for (const l of batch[i]!.lines) this.committedOne(l);
    }
    // Lines whose fsync succeeded are committed even when another file's failed.
    for (let i = 0; i < batch.length; i++) {
      if (outcomes[i]!.status === "fulfilled") for (const l of batch[i]!.lines) this.options.onCommitted?.(l);
    }
    if (failed) this.failed(failed.path, failed.err);
  }

  /**
   * The same, by the writer's thread: the waiting lines become one batch, sent as soon as fewer than
   * WRITER_BATCHES_IN_FLIGHT batches are unanswered, and its answer (which files failed) is taken
   * after those of the batches before it. The thread writes batches in turn; those not sent yet wait
   * here in their compact form, so a slow disk does not pile batches up in the thread's capped heap.
   */
  private sendWaiting(writer: LineWriterThread): void {
    if (this.failure || this.queued.length === 0) return;
    const lines = this.queued;
    this.queued = [];
    this.waitingCount -= lines.length;
    const { batch, transfer } = this.encoder!.take();
    let send!: () => void;
    const answer = new Promise<WriteAnswer>((resolve, reject) => (send = () => writer.write(batch, transfer).then(resolve, reject)));
    this.unsent.push(send);
    this.sendMore();
    this.flushing = this.flushing.then(() =>
      answer.then(
        (a) => {
          this.inFlight--;
          this.sendMore();
          this.written(lines, a);
        },
        (err: unknown) => {
          // The thread is gone: none of these lines is known to be durable (a restart redoes them).
          for (const l of lines) this.waiting.delete(l.recordKey);
          this.failure ??= err as Error;
          this.options.onError?.(this.failure);
          throw this.failure;
        },
      ),
    );
    this.flushing.catch(() => undefined);
  }

  /** Batches made and not yet sent to the writer, oldest first; how many sent are unanswered. */
  private readonly unsent: Array<() => void> = [];
  private inFlight = 0;

  private sendMore(): void {
    while (this.inFlight < WRITER_BATCHES_IN_FLIGHT && this.unsent.length > 0) {
      this.inFlight++;
      this.unsent.shift()!();
    }
  }

  private written(lines: CommitNotice[], answer: WriteAnswer): void {
    const { failed, texts, scoredLengths } = answer;
    const durable = failed.length === 0 ? lines : lines.filter((l) => !failed.some((f) => f.family === l.family && f.track === l.track));
    if (texts) {
      for (let i = 0; i < lines.length; i++) {
        lines[i]!.text = texts[i]!;
        if (scoredLengths![i]! >= 0) lines[i]!.scoredLength = scoredLengths![i]!;
      }
    }
    for (const l of durable) this.committedOne(l);
    // Lines whose fsync succeeded are committed even when another file's failed.
    for (const l of durable) this.options.onCommitted?.(l);
    const first = failed[0];
    if (first) this.failed(first.path, new Error(first.message));
  }

  private committedOne(l: CommitNotice): void {
    this.waiting.delete(l.recordKey);
    this.committed.add(l.recordKey);
    this.noteErrors(l.recordKey, l.errored);
  }

  private failed(path: string, err: unknown): never {
    this.failure = new Error(`cannot write results to ${path}: ${(err as Error).message}`, { cause: err });
    this.options.onError?.(this.failure);
    throw this.failure;
  }

  /** Flushes, then closes every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      for (const log of this.logs.values()) await log.close().catch(() => undefined);
      await this.options.writer?.close();
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
