// One way to host a worker thread (the coordinator, its suite readers, the scorer thread, score
// shards): started from an entry module with its data and an optional heap cap, its messages handed
// on, and its end (an error it reported, a crash, running out of heap, exiting) reported once.
//
// Thread or not: threads run only from compiled JavaScript. A Node 20 worker cannot load a .ts
// entry, so code running from sources (vitest, tsx) does the work in its own thread instead. The
// choice is made from the URL of the running module (threadEntry), not by looking for a build on disk.
import { Worker, type TransferListItem } from "node:worker_threads";
import { decodeThreadError, type ThreadError } from "../thread-error.js";

/**
 * Young-generation cap that goes with a heap cap, where the host names none (youngGenerationMb).
 * Each capped thread grows its young generation to its cap, so the caps add up in the process's
 * RSS (at 32 MB the start's peak RSS was 453-466 MB, at 16 MB 360-403). The coordinator's and the
 * scorer's threads take results at a steady rate and hold the run's state: at 6 MB the run phase's
 * peak RSS was 386-413 MB against 420-478 MB at 16, and the start's 285-295 against 351-360, with
 * the coordinator thread's CPU the same (1.51-2.36 s against 1.59-2.20 s; coordinator-bench, four
 * pairs side by side). The suite readers parse in bursts and keep a larger one (suite-readers.ts).
 */
const YOUNG_GENERATION_MB = 6;

/** Whether the module at `caller` (its import.meta.url) may start worker threads: it is compiled JavaScript. */
export function threadsUsable(caller: string): boolean {
  return /\.[cm]?js$/.test(new URL(caller).pathname);
}

/**
 * The URL of the thread entry `file` (relative to `caller`, the calling module's import.meta.url),
 * or undefined when the caller runs from sources and so must do the work in its own thread.
 */
export function threadEntry(file: string, caller: string): URL | undefined {
  return threadsUsable(caller) ? new URL(file, caller) : undefined;
}

/** How a thread ended without being terminated by its host. */
export type ThreadFailure =
  /** It reported the error it stopped on (a ThreadError message, decoded). */
  | { kind: "threw"; error: Error }
  /** An uncaught error, or its heap cap reached (`outOfMemory`). */
  | { kind: "crashed"; error: Error; outOfMemory: boolean }
  /** It exited by itself (also after its last message: hosts ignore what they expect). */
  | { kind: "exited"; code: number };

export interface ThreadHostOptions<Out> {
  workerData?: unknown;
  /** Moved, not copied, into the thread with workerData (MessagePorts). */
  transferList?: readonly TransferListItem[];
  /** V8 old-generation cap in MB; none: Node's default. */
  maxHeapMb?: number;
  /** V8 young-generation cap in MB, with maxHeapMb; default YOUNG_GENERATION_MB. */
  youngGenerationMb?: number;
  /** Picks out the message by which the thread reports its fatal error; it goes to onFailure, decoded. */
  fatalError?: (msg: Out) => ThreadError | undefined;
  onMessage: (msg: Out) => void;
  /** Called at most once, and not after terminate(). */
  onFailure: (failure: ThreadFailure) => void;
}

export class ThreadHost<In, Out> {
  private readonly worker: Worker;
  private ended = false;

  constructor(entry: URL, options: ThreadHostOptions<Out>) {
    const { maxHeapMb, youngGenerationMb = YOUNG_GENERATION_MB } = options;
    this.worker = new Worker(entry, {
      workerData: options.workerData,
      ...(options.transferList ? { transferList: [...options.transferList] } : {}),
      ...(maxHeapMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: youngGenerationMb } } : {}),
      stdout: false,
      stderr: false,
    });
    const fail = (failure: ThreadFailure) => {
      if (this.ended) return;
      this.ended = true;
      options.onFailure(failure);
    };
    const { fatalError, onMessage } = options;
    this.worker.on("message", (msg: Out) => {
      const fatal = fatalError?.(msg);
      if (fatal) fail({ kind: "threw", error: decodeThreadError(fatal) });
      else onMessage(msg);
    });
    this.worker.on("error", (err) => fail({ kind: "crashed", error: err, outOfMemory: (err as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY" }));
    this.worker.on("exit", (code) => fail({ kind: "exited", code }));
  }

  post(msg: In, transfer?: readonly TransferListItem[]): void {
    this.worker.postMessage(msg, transfer);
  }

  /** Stops the thread; its exit is not reported as a failure. */
  async terminate(): Promise<void> {
    this.ended = true;
    await this.worker.terminate();
  }
}
