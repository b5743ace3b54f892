// An append-only JSON Lines file made durable in batches: lines are queued, then written together and
// fsynced (a line counts only after its fsync). Opening a log reads every line already in it and
// repairs what a crash mid-write leaves: a torn last line (no newline, not JSON; it was never
// durable) is cut off, and a complete last line without its newline is ended, so the next append
// starts a line of its own. The coordinator's results store and the scorer's journal are such logs.
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync, truncateSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { readJsonLines } from "../jsonl-reader.js";

export interface TornLine {
  file: string;
  /** 1-based line that was cut off. */
  line: number;
  bytesDropped: number;
}

export interface AppendLogOpenOptions {
  /** Every line already in the file, in order (the torn last line excluded); `scanned`: `value` is what `scan` read. */
  onLine?: (value: unknown, line: number, scanned: boolean) => void;
  /** Reads a line from its bytes instead of parsing it, where it can (ReadOptions.scan). */
  scan?: (bytes: Buffer, start: number, end: number) => unknown;
  /** Create the file now if it is missing (otherwise it appears with the first flush). */
  create?: boolean;
}

export class AppendLog {
  private handle: FileHandle | undefined;
  private waiting: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Bytes in the file up to its last durable line (this log is the file's only writer), once known. */
  private size: number | undefined;

  /** A log on `path`; the file is not read (see open()) and is created by the first flush. */
  constructor(readonly path: string) {}

  /** Reads and repairs the file (when it exists), then returns the log and the line it cut off, if any. */
  static async open(path: string, options: AppendLogOpenOptions = {}): Promise<{ log: AppendLog; torn: TornLine | undefined }> {
    const log = new AppendLog(path);
    const torn = existsSync(path) ? await readAndRepair(path, options) : undefined;
    if (options.create) log.handle = await openForAppend(path);
    return { log, torn };
  }

  /** Queues one line (its JSON text, no newline); it is durable after the next flush(). */
  append(json: string): void {
    this.waiting.push(json);
  }

  get pending(): number {
    return this.waiting.length;
  }

  /** Writes and fsyncs what is queued; flushes run one at a time, in order. */
  flush(): Promise<void> {
    this.writing = this.writing.then(async () => {
      if (this.waiting.length === 0) return;
      const lines = this.waiting;
      this.waiting = [];
      if (this.closed) throw new Error(`${this.path}: append log is closed`);
      this.handle ??= await openForAppend(this.path);
      const handle = this.handle;
      const bytes = encodeLines(lines);
      const start = (this.size ??= (await handle.stat()).size);
      try {
        // A nearly full disk takes part of a write without an error: the rest is written (and
        // fails with ENOSPC) before any line counts, so none counts that is not wholly on disk.
        for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
        await handle.datasync();
        this.size = start + bytes.length;
      } catch (err) {
        // Nothing of a failed batch stays behind: the file ends with its last durable line.
        await handle.truncate(start).catch(() => undefined);
        throw err;
      }
    });
    return this.writing;
  }

  /** Writes what is queued (a failure is left to flush() to report), then closes the file. */
  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    this.closed = true;
    const h = this.handle;
    this.handle = undefined;
    await h?.close();
  }
}

/**
 * The lines, each with its newline, as UTF-8: the bytes of `Buffer.from(lines.join("\n") + "\n")`,
 * encoded line by line into one buffer. The joined text of a batch (hundreds of KB) would be a
 * large object in the old generation, and a coordinator writing thousands of lines a second
 * then spent its time in full collections.
 */
export function encodeLines(lines: readonly string[]): Buffer {
  let size = lines.length;
  // Stryker disable next-line StringLiteral: Node reads an empty encoding as UTF-8 (the same bytes)
  for (const line of lines) size += Buffer.byteLength(line, "utf8");
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    // Stryker disable next-line StringLiteral: as above
    at += bytes.write(line, at, "utf8");
    bytes[at++] = 0x0a;
  }
  return bytes;
}

async function openForAppend(path: string): Promise<FileHandle> {
  mkdirSync(dirname(path), { recursive: true });
  return open(path, "a");
}

async function readAndRepair(path: string, { onLine, scan }: AppendLogOpenOptions): Promise<TornLine | undefined> {
  let torn: { line: number; offset: number } | undefined;
  const reading = readJsonLines(path, { onTornLastLine: (l, offset) => (torn = { line: l, offset }), ...(scan ? { scan } : {}) });
  for await (const { line, value, scanned } of reading) onLine?.(value, line, scanned === true);
  const size = statSync(path).size;
  if (torn) {
    truncateSync(path, torn.offset);
    return { file: path, line: torn.line, bytesDropped: size - torn.offset };
  }
  if (size > 0 && lastByte(path, size) !== 0x0a) appendFileSync(path, "\n");
  return undefined;
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
