// The checkpoint and source of truth: append-only `<out>/<family>/<track>.jsonl` in the reference
// runner's format. Lines are written in batches and fsynced; a result counts as committed only
// after its fsync. On open, every track file is scanned for committed run_ids and a torn last line
// (a crash mid-write) is cut back to the last complete line.
import { existsSync, mkdirSync, readdirSync, statSync, truncateSync, openSync, readSync, closeSync, appendFileSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { readJsonLines } from "../common/jsonl-reader.js";
import { ResultLineSchema } from "../common/results/format.js";
import { parseOrThrow } from "../common/parse.js";
import type { Logger } from "../common/log.js";

/** One results line: the reference runner's fields first, then ours. */
export interface StoredResultLine {
  run_id: string;
  id: string;
  track: string;
  family: string;
  probs: Record<string, Record<string, number>>;
  skipped: string[];
  errors?: Record<string, string>;
  [extra: string]: unknown;
}

export interface RepairedFile {
  file: string;
  /** 1-based line that was cut off. */
  line: number;
  bytesDropped: number;
}

export interface ResultsStoreOptions {
  outDir: string;
  /** Flush once this many lines are waiting. Default 256. */
  batchLines?: number;
  /** Flush at the latest this long after the first waiting line. Default 50 ms. */
  flushMs?: number;
  logger?: Logger;
  /** Called once per line after its fsync. */
  onCommitted?: (line: StoredResultLine) => void;
  /** A write or fsync failed; the store refuses further lines. */
  onError?: (err: Error) => void;
}

interface TrackFileState {
  path: string;
  handle?: FileHandle;
  waiting: StoredResultLine[];
}

export class ResultsStore {
  private readonly committed = new Set<string>();
  private readonly waiting = new Set<string>();
  private readonly files = new Map<string, TrackFileState>();
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
    for (const file of trackFilesUnder(options.outDir)) await store.scan(file);
    return store;
  }

  private async scan(file: string): Promise<void> {
    let torn: { line: number; offset: number } | undefined;
    for await (const { line, value } of readJsonLines(file, { onTornLastLine: (l, offset) => (torn = { line: l, offset }) })) {
      this.committed.add(parseOrThrow(ResultLineSchema, value, { file, line, prefix: "not a results line: " }).run_id);
    }
    const size = statSync(file).size;
    if (torn) {
      truncateSync(file, torn.offset);
      this.repaired.push({ file, line: torn.line, bytesDropped: size - torn.offset });
      this.options.logger?.warn("torn last line cut off (crash mid-write?); its record will be redone", {
        file,
        line: torn.line,
        bytes_dropped: size - torn.offset,
      });
    } else if (size > 0 && lastByte(file, size) !== 0x0a) {
      // A complete last line without its newline: end it so the next append starts a new line.
      appendFileSync(file, "\n");
    }
  }

  /** Committed (fsynced) or waiting to be: a second line for this run_id would be a duplicate. */
  has(runId: string): boolean {
    return this.committed.has(runId) || this.waiting.has(runId);
  }

  isCommitted(runId: string): boolean {
    return this.committed.has(runId);
  }

  get committedCount(): number {
    return this.committed.size;
  }

  get pendingLines(): number {
    return this.waitingCount;
  }

  /** Queues a line; false when its run_id is already committed or waiting (nothing written). */
  append(line: StoredResultLine): boolean {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error("results store is closed");
    if (this.has(line.run_id)) return false;
    const key = `${line.family}/${line.track}`;
    let f = this.files.get(key);
    if (!f) this.files.set(key, (f = { path: join(this.options.outDir, line.family, `${line.track}.jsonl`), waiting: [] }));
    f.waiting.push(line);
    this.waiting.add(line.run_id);
    this.waitingCount++;
    if (this.waitingCount >= (this.options.batchLines ?? 256)) void this.flush().catch(() => undefined);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch(() => undefined);
      }, this.options.flushMs ?? 50);
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

  private async writeWaiting(): Promise<void> {
    if (this.failure) throw this.failure;
    for (const f of this.files.values()) {
      if (f.waiting.length === 0) continue;
      const lines = f.waiting;
      f.waiting = [];
      this.waitingCount -= lines.length;
      try {
        if (!f.handle) {
          mkdirSync(join(f.path, ".."), { recursive: true });
          f.handle = await open(f.path, "a");
        }
        await f.handle.write(lines.map((l) => JSON.stringify(l) + "\n").join(""));
        await f.handle.datasync();
      } catch (err) {
        this.failure = new Error(`cannot write results to ${f.path}: ${(err as Error).message}`, { cause: err });
        this.options.onError?.(this.failure);
        throw this.failure;
      }
      for (const l of lines) {
        this.waiting.delete(l.run_id);
        this.committed.add(l.run_id);
      }
      for (const l of lines) this.options.onCommitted?.(l);
    }
  }

  /** Flushes, then closes every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      for (const f of this.files.values()) await f.handle?.close().catch(() => undefined);
    }
  }
}

/** `<out>/<family>/<track>.jsonl` for every family folder (dot folders skipped). */
export function trackFilesUnder(outDir: string): string[] {
  if (!existsSync(outDir)) return [];
  const out: string[] = [];
  for (const family of readdirSync(outDir).sort()) {
    if (family.startsWith(".")) continue;
    const dir = join(outDir, family);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir).sort()) if (name.endsWith(".jsonl")) out.push(join(dir, name));
  }
  return out;
}

function lastByte(file: string, size: number): number {
  const fd = openSync(file, "r");
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0]!;
  } finally {
    closeSync(fd);
  }
}
