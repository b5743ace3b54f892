// Reader threads of the coordinator's start: the suite's files read in parallel, one file per
// thread at a time (suite-reader-main.ts), so reading uses every core while the coordinator's own
// thread only places what comes back (suite-index.ts). Threads run only from the build (dist/);
// from sources the index reads in its own thread (common/threads: threadEntry).
import { availableParallelism } from "node:os";
import { ThreadHost, threadEntry, type ThreadFailure } from "../common/threads/index.js";
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
/**
 * Young generation of each reader thread: a file's records are parsed in bursts, and the threads
 * end with the read. At the coordinator's 6 MB (common/threads/thread-host.ts) resumed starts took
 * 1.8-2.5 CPU-s more in two of three pairs of startup-bench; at 16 MB, the same as before.
 */
const READER_YOUNG_GENERATION_MB = 16;
/** The heap caps every reader thread is started with. */
const READER_LIMITS = { maxHeapMb: READER_HEAP_MB, youngGenerationMb: READER_YOUNG_GENERATION_MB };

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

type ReaderHost = ThreadHost<ReaderTask, ReaderToIndex>;
type OnReaderMessage = (msg: ReaderToIndex) => void;
type OnReaderFailure = (failure: ThreadFailure) => void;

/** A reader thread started ahead of the read, its first task posted; what it sends waits for bind(). */
export interface EarlyReader {
  host: ReaderHost;
  /** Hands the thread's messages and its failure (those that came before, first) to the read. */
  bind(onMessage: OnReaderMessage, onFailure: OnReaderFailure): void;
  /** Messages (and a failure) that came before bind() and wait for it. */
  buffered(): number;
}

/** Reader threads started ahead of the read and the tasks posted to them: tasks[0, posted). */
export interface EarlyReaders {
  readers: EarlyReader[];
  posted: number;
}

/** The reader threads startReadersEarly started, until the read takes them (or ends them). */
let early: { entry: string; data: ReaderStartData; tasks: readonly ReaderTask[] } & EarlyReaders | undefined;

/**
 * Starts the reader threads of a read to come and posts them its first `posted` tasks (at least
 * one each, handed round), so they load and read while the coordinator's thread is still loading
 * (0.3 s of grpc-js, protobufjs and the rest before it reached the read: the reader thread started
 * 0.33 s after it). runReaders takes them when it is given the same entry, suite and tasks
 * (takeEarlyReaders); what they send meanwhile waits for it.
 */
export function startReadersEarly(entry: URL, count: number, data: ReaderStartData, tasks: readonly ReaderTask[], posted = 1): void {
  if (early || count <= 0 || tasks.length === 0) return;
  const readers: EarlyReader[] = [];
  const threads = Math.min(count, tasks.length);
  for (let i = 0; i < threads; i++) {
    let target: { onMessage: OnReaderMessage; onFailure: OnReaderFailure } | undefined;
    const waiting: Array<() => void> = [];
    const host: ReaderHost = new ThreadHost(entry, {
      workerData: data,
      ...READER_LIMITS,
      onMessage: (msg) => (target ? target.onMessage(msg) : waiting.push(() => target!.onMessage(msg))),
      onFailure: (f) => (target ? target.onFailure(f) : waiting.push(() => target!.onFailure(f))),
    });
    readers.push({
      host,
      bind: (onMessage, onFailure) => {
        target = { onMessage, onFailure };
        for (const deliver of waiting.splice(0)) deliver();
      },
      buffered: () => waiting.length,
    });
  }
  const n = Math.min(tasks.length, Math.max(threads, posted));
  for (let t = 0; t < n; t++) readers[t % threads]!.host.post(tasks[t]!);
  early = { entry: entry.href, data, tasks, readers, posted: n };
}

/**
 * The threads startReadersEarly started, when they were started for this read (the same entry,
 * suite, thread count and tasks); otherwise none, and any started are ended.
 */
export function takeEarlyReaders(entry: URL | undefined, count: number, data: ReaderStartData, tasks: readonly ReaderTask[]): EarlyReaders | undefined {
  const started = early;
  early = undefined;
  if (!started) return undefined;
  const same =
    entry?.href === started.entry &&
    started.data.suiteDir === data.suiteDir &&
    count > 0 &&
    started.readers.length === Math.min(count, tasks.length) &&
    started.tasks.length === tasks.length &&
    started.tasks.every((t, i) => t.index === tasks[i]!.index && t.relPath === tasks[i]!.relPath && t.selected === tasks[i]!.selected && t.gold === tasks[i]!.gold);
  if (same) return { readers: started.readers, posted: started.posted };
  for (const r of started.readers) void r.host.terminate();
  return undefined;
}

/**
 * Runs `tasks` on `count` reader threads, handing each thread the next task when it finishes one,
 * and calls `onMessage` with everything they send, in the order it arrives. Stops dispatching past
 * a task that failed (tasks are placed in the order given: those after it no longer matter). Resolves when every
 * dispatched task is done; rejects when onMessage throws or a thread dies; the threads are ended
 * either way. `adopted`: threads of takeEarlyReaders for these tasks, which hold tasks[0, posted) already.
 */
export function runReaders(entry: URL, count: number, data: ReaderStartData, tasks: readonly ReaderTask[], onMessage: (msg: ReaderToIndex) => void, adopted?: EarlyReaders): Promise<void> {
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
    const fresh: ReaderHost[] = [];
    const binds: Array<() => void> = [];
    for (let i = 0; i < Math.max(1, Math.min(count, tasks.length)); i++) {
      let w!: ReaderHost;
      const handlers = {
        onMessage: (msg: ReaderToIndex) => {
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
        onFailure: (f: ThreadFailure) =>
          finish(
            f.kind === "exited"
              ? new Error(`suite reader thread exited with code ${f.code} before the suite was read`)
              : new Error(`suite reader thread failed: ${f.error.message}`, { cause: f.error }),
          ),
      };
      const pre = adopted?.readers[i];
      if (pre) {
        w = pre.host;
        binds.push(() => pre.bind(handlers.onMessage, handlers.onFailure));
      } else {
        w = new ThreadHost(entry, { workerData: data, ...READER_LIMITS, ...handlers });
        fresh.push(w);
      }
      workers.push(w);
    }
    // The adopted threads hold the first tasks: counted before what they sent meanwhile is handed on.
    next = running = binds.length > 0 ? adopted!.posted : 0;
    for (const bind of binds) bind();
    for (const w of fresh) give(w);
  });
}
