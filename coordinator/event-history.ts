// The live page's event history kept in the --out directory (`<out>/run-events.log`, one LiveEvent a
// line: JSON Lines, named .log because every *.jsonl below the directory is a results file), so a
// restarted coordinator replays what happened before it. Append-only and bounded: past MAX_BYTES the file becomes run-events.1.log (replacing the one
// before) and a new one starts, so at most about twice MAX_BYTES stay on disk. Lines are written
// synchronously: events come a few a second at most (unit-by-unit events are not kept here).
import { appendFileSync, existsSync, readFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import type { LiveEvent } from "./observability/live-event.js";

export const EVENTS_FILE = "run-events.log";
export const EVENTS_ROTATED_FILE = "run-events.1.log";
export const MAX_BYTES = 1 << 20;

export class EventHistory {
  private readonly path: string;
  private bytes: number;

  constructor(
    private readonly outDir: string,
    private readonly onError: (err: Error) => void,
    private readonly maxBytes = MAX_BYTES,
  ) {
    this.path = join(outDir, EVENTS_FILE);
    this.bytes = existsSync(this.path) ? statSync(this.path).size : 0;
    // A killed coordinator may have left a line without its newline: the next one starts its own.
    this.torn = this.bytes > 0 && !readFileSync(this.path).subarray(-1).equals(Buffer.from("\n"));
  }

  private torn: boolean;

  /** The last `n` events kept (rotated file first), oldest first; a torn or foreign line is skipped. */
  last(n: number): LiveEvent[] {
    const out: LiveEvent[] = [];
    for (const name of [EVENTS_ROTATED_FILE, EVENTS_FILE]) {
      const path = join(this.outDir, name);
      if (!existsSync(path)) continue;
      for (const line of readFileSync(path, "utf8").split("\n")) {
        if (!line) continue;
        try {
          const e = JSON.parse(line) as LiveEvent;
          if (e && typeof e.type === "string" && typeof e.at === "string") out.push(e);
        } catch {
          // A line a killed coordinator left half written.
        }
      }
    }
    return out.slice(-n);
  }

  append(e: LiveEvent): void {
    const line = (this.torn ? "\n" : "") + JSON.stringify(e) + "\n";
    this.torn = false;
    try {
      if (this.bytes > 0 && this.bytes + line.length > this.maxBytes) {
        renameSync(this.path, join(this.outDir, EVENTS_ROTATED_FILE));
        this.bytes = 0;
      }
      appendFileSync(this.path, line);
      this.bytes += Buffer.byteLength(line);
    } catch (err) {
      // The history is a view for people: a failed write must not stop the run.
      this.onError(err as Error);
    }
  }
}
