// Reader threads of the coordinator's start: the suite's files read in parallel, one file per
// thread at a time (suite-reader-main.ts), so reading uses every core while the coordinator's own
// thread only places what comes back (suite-index.ts). Threads run only from the build (dist/);
// from sources the index reads in its own thread (common/threads: threadEntry).
import { availableParallelism } from "node:os";
import { ThreadHost, threadEntry } from "../common/threads/index.js";
import type { ThreadError } from "../common/thread-error.js";
import type { ReadEntry } from "./track-reader.js";

export interface ReaderStartData {
  suiteDir: string;
}

/** One file to read: `selected` files are indexed, the others only hashed. */
export interface ReaderTask {
  index: number;
  relPath: string;
  selected: boolean;
  gold: boolean;
}

export type ReaderToIndex =
  | { type: "block"; index: number; bytes: Uint8Array; entries: ReadEntry[] }
  | { type: "file"; index: number; sha256: string; gold?: Uint8Array[] }
  | { type: "error"; index: number; error: ThreadError };

/** Heap of each reader thread: one file's records and gold at a time. */
const READER_HEAP_MB = 192;

/** The reader threads' entry when running from the build; undefined from sources. */
export function readerEntry(): URL | undefined {
  return threadEntry("./suite-reader-main.js", import.meta.url);
}

/**
 * Reader threads to start: UDM_SUITE_READERS, else one where there are two cores or more. Since the
 * coordinator serves while it reads (issue 26), a read in its own thread competes with serving:
 * one reader thread takes the read (decompress, hash, parse, check) off it, and the coordinator's
 * thread only places what comes back. Measured on the 2-core machine under load (startup-bench,
 * README "Startup"): whole read 3.1x read-and-parse with one reader, 5.2x without, for ~90 MB
 * more peak RSS; a second thread did not help on 2 cores. `cores` caps a request.
 */
export function defaultReaderCount(): number {
  const fromEnv = process.env.UDM_SUITE_READERS;
  if (fromEnv !== undefined && /^\d+$/.test(fromEnv)) return Math.min(Number(fromEnv), availableParallelism());
  return availableParallelism() >= 2 ? 1 : 0;
}

/**
 * Runs `tasks` on `count` reader threads, handing each thread the next task when it finishes one,
 * and calls `onMessage` with everything they send, in the order it arrives. Stops dispatching past
 * a task that failed (tasks are placed in the order given: those after it no longer matter). Resolves when every
 * dispatched task is done; rejects when onMessage throws or a thread dies; the threads are ended
 * either way.
 */
export function runReaders(entry: URL, count: number, data: ReaderStartData, tasks: readonly ReaderTask[], onMessage: (msg: ReaderToIndex) => void): Promise<void> {
  let next = 0;
  let running = 0;
  /** Position in `tasks` of the first task that failed: tasks after it no longer matter. */
  let stopAfter = Infinity;
  const positionOf = new Map(tasks.map((t, i) => [t.index, i]));
  let finished = false;
  return new Promise<void>((resolve, reject) => {
    const workers: Array<ThreadHost<ReaderTask, ReaderToIndex>> = [];
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      for (const w of workers) void w.terminate();
      if (err) reject(err);
      else resolve();
    };
    const give = (w: ThreadHost<ReaderTask, ReaderToIndex>) => {
      if (next < tasks.length && next <= stopAfter) {
        w.post(tasks[next++]!);
        running++;
      } else if (running === 0) finish();
    };
    for (let i = 0; i < Math.max(1, Math.min(count, tasks.length)); i++) {
      const w: ThreadHost<ReaderTask, ReaderToIndex> = new ThreadHost(entry, {
        workerData: data,
        maxHeapMb: READER_HEAP_MB,
        onMessage: (msg) => {
          if (finished) return;
          try {
            onMessage(msg);
          } catch (err) {
            finish(err);
            return;
          }
          if (msg.type === "block") return;
          if (msg.type === "error") stopAfter = Math.min(stopAfter, positionOf.get(msg.index) ?? 0);
          running--;
          give(w);
        },
        onFailure: (f) =>
          finish(
            f.kind === "exited"
              ? new Error(`suite reader thread exited with code ${f.code} before the suite was read`)
              : new Error(`suite reader thread failed: ${f.error.message}`, { cause: f.error }),
          ),
      });
      workers.push(w);
    }
    for (const w of workers) give(w);
  });
}
