// Reader threads of the coordinator's start: the suite's files read in parallel, one file per
// thread at a time (suite-reader-main.ts), so reading uses every core while the coordinator's own
// thread only places what comes back (suite-index.ts). Threads exist only in the build (dist/);
// from sources the index reads in its own thread.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
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
  | { type: "file"; index: number; sha256: string; goldJsonl?: string }
  | { type: "error"; index: number; error: ThreadError };

/** Heap of each reader thread: one file's records and gold at a time. */
const READER_HEAP_MB = 192;

/** The reader threads' entry, present only in the build; undefined when running from sources. */
export function readerEntry(): URL | undefined {
  const url = new URL("./suite-reader-main.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/**
 * Reader threads to start: UDM_SUITE_READERS, else none. Measured on the 2-core machine
 * (bench/startup-bench.ts, README "Startup"), two threads did not shorten the start and raised
 * peak RSS by ~200 MB, so the coordinator's thread reads unless asked; `cores` caps a request.
 */
export function defaultReaderCount(): number {
  const fromEnv = process.env.UDM_SUITE_READERS;
  if (fromEnv !== undefined && /^\d+$/.test(fromEnv)) return Math.min(Number(fromEnv), availableParallelism());
  return 0;
}

/**
 * Runs `tasks` on `count` reader threads, handing each thread the next task when it finishes one,
 * and calls `onMessage` with everything they send, in the order it arrives. Stops dispatching past
 * a task that failed (`stopAfter` says up to which task index still matters). Resolves when every
 * dispatched task is done; rejects when onMessage throws or a thread dies; the threads are ended
 * either way.
 */
export function runReaders(entry: URL, count: number, data: ReaderStartData, tasks: readonly ReaderTask[], onMessage: (msg: ReaderToIndex) => void): Promise<void> {
  const workers = Array.from(
    { length: Math.max(1, Math.min(count, tasks.length)) },
    () => new Worker(entry, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: READER_HEAP_MB, maxYoungGenerationSizeMb: 32 }, stdout: false, stderr: false }),
  );
  let next = 0;
  let running = 0;
  let stopAfter = Infinity;
  let finished = false;
  return new Promise<void>((resolve, reject) => {
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      for (const w of workers) void w.terminate();
      if (err) reject(err);
      else resolve();
    };
    const give = (w: Worker) => {
      if (next < tasks.length && tasks[next]!.index <= stopAfter) {
        w.postMessage(tasks[next++]);
        running++;
      } else if (running === 0) finish();
    };
    for (const w of workers) {
      w.on("message", (msg: ReaderToIndex) => {
        if (finished) return;
        try {
          onMessage(msg);
        } catch (err) {
          finish(err);
          return;
        }
        if (msg.type === "block") return;
        if (msg.type === "error") stopAfter = Math.min(stopAfter, msg.index);
        running--;
        give(w);
      });
      w.on("error", (err) => finish(new Error(`suite reader thread failed: ${err.message}`, { cause: err })));
      w.on("exit", (code) => finish(new Error(`suite reader thread exited with code ${code} before the suite was read`)));
      give(w);
    }
  });
}
