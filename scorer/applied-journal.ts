// The streaming scorer's checkpoint: every result line it applied, appended to one JSONL file and
// fsynced before the line is acked on the bus. A restarted scorer replays the journal into its
// accumulators, so nothing acked is lost and redelivered lines are recognised by run_id. The file
// is a results file like the coordinator's, so `udm-orch score --results <out>` reads it too.
import { appendFileSync, closeSync, existsSync, openSync, readSync, statSync, truncateSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { FormatError } from "../common/errors.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import type { Logger } from "../common/log.js";
import { parseResultLine } from "./result-line.js";
import type { ResultInput } from "./track-accumulator.js";

export class AppliedJournal {
  private handle: FileHandle | undefined;
  private waiting: string[] = [];
  private writing: Promise<void> = Promise.resolve();

  private constructor(readonly path: string) {}

  /**
   * Opens the journal, first calling `onLine` for every line already in it (in order). A torn last
   * line (a crash mid-write; that line was never acked) is cut off.
   */
  static async open(path: string, onLine: (line: ResultInput) => void, log: Logger): Promise<AppliedJournal> {
    const journal = new AppliedJournal(path);
    if (existsSync(path)) {
      let torn: { line: number; offset: number } | undefined;
      for await (const { line, value } of readJsonLines(path, { onTornLastLine: (l, offset) => (torn = { line: l, offset }) })) {
        onLine(parseResultLine(path, line, value));
      }
      if (torn) {
        log.warn("journal: torn last line cut off (the scorer died mid-write; the line was not acked and comes again)", { file: path, line: torn.line });
        truncateSync(path, torn.offset);
      } else if (lastByte(path) !== undefined && lastByte(path) !== 0x0a) {
        // A last line without its newline was complete JSON: keep it, end it.
        appendFileSync(path, "\n");
      }
    }
    journal.handle = await open(path, "a");
    return journal;
  }

  /** Queues one line (its JSON text); it is durable after the next flush(). */
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
      if (!this.handle) throw new FormatError(this.path, undefined, undefined, "journal is closed");
      await this.handle.write(lines.join("\n") + "\n");
      await this.handle.datasync();
    });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.handle?.close();
    this.handle = undefined;
  }
}

function lastByte(path: string): number | undefined {
  const size = statSync(path).size;
  if (size === 0) return undefined;
  const fd = openSync(path, "r");
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0];
  } finally {
    closeSync(fd);
  }
}
