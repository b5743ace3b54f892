// The results writer's thread as the results store sees it (results-store.ts): batches go in, each
// is answered once its lines are durable (in the order sent); scorer-feed messages are passed on in
// the same order. The thread (line-writer-main.ts) runs only from the build; from sources the store
// writes in its own thread (common/threads: threadEntry).
import type { MessagePort, TransferListItem } from "node:worker_threads";
import { UdmError } from "../common/errors.js";
import { ThreadHost, threadEntry, type ThreadFailure } from "../common/threads/index.js";
import type { ScorerFeedMessage } from "../scorer/index.js";
import type { LineBatch } from "./line-batch.js";
import type { LineWriterStartData, StoreToWriter, WriterToStore } from "./line-writer-messages.js";

export type WriteAnswer = Extract<WriterToStore, { type: "written" }>;

/**
 * V8 old-generation cap of the writer's thread: it keeps no state but its open files, and a batch's
 * lines (~1 KB each) die with the batch.
 */
const WRITER_HEAP_MB = 24;
/** Its young generation: the lines die young, and each MB of it is RSS (common/threads YOUNG_GENERATION_MB). */
const WRITER_YOUNG_MB = 4;

/** The writer thread's entry when running from the build (dist/); undefined from sources. */
export function lineWriterEntry(): URL | undefined {
  return threadEntry("./line-writer-main.js", import.meta.url);
}

export interface LineWriterOptions {
  outDir: string;
  /** Answer each batch with its lines' texts (the bus or a host's onCommitted reads them in the coordinator's thread). */
  textsWanted: boolean;
  /** The sending end of a scorer thread's feed: committed lines go there from the writer's thread. */
  scorerFeed?: MessagePort;
}

export class LineWriterThread {
  private readonly thread: ThreadHost<StoreToWriter, WriterToStore>;
  private readonly waiting: Array<{ resolve: (a: WriteAnswer) => void; reject: (e: Error) => void }> = [];
  private closing: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private closed: Promise<void> | undefined;
  private error: Error | undefined;
  readonly textsWanted: boolean;

  constructor(entry: URL, options: LineWriterOptions) {
    const { scorerFeed, ...rest } = options;
    this.textsWanted = options.textsWanted;
    const workerData: LineWriterStartData = { ...rest, ...(scorerFeed ? { scorerFeed } : {}) };
    this.thread = new ThreadHost<StoreToWriter, WriterToStore>(entry, {
      workerData,
      ...(scorerFeed ? { transferList: [scorerFeed] } : {}),
      maxHeapMb: WRITER_HEAP_MB,
      youngGenerationMb: WRITER_YOUNG_MB,
      fatalError: (msg) => (msg.type === "error" ? msg.error : undefined),
      onMessage: (msg) => {
        if (msg.type === "written") this.waiting.shift()?.resolve(msg);
        else if (msg.type === "closed") this.closing?.resolve();
      },
      onFailure: (failure) => this.fail(failureError(failure)),
    });
  }

  /** Resolves once the batch's lines are written and fsynced (or their files failed: see the answer). */
  write(batch: LineBatch, transfer: TransferListItem[]): Promise<WriteAnswer> {
    if (this.error) return Promise.reject(this.error);
    return new Promise<WriteAnswer>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.thread.post({ type: "write", batch }, transfer);
    });
  }

  /**
   * A message for the scorer's feed, passed on after the lines of every batch written before it;
   * `transfer` (a track's gold chunks) is moved into the writer's thread, and from there to the scorer's.
   */
  feed(message: ScorerFeedMessage, transfer: ArrayBuffer[] = []): void {
    if (this.error) return;
    this.thread.post({ type: "feed", message, transfer }, transfer);
  }

  /** Closes the files (after every batch sent), then ends the thread. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (!this.error) {
        await new Promise<void>((resolve, reject) => {
          this.closing = { resolve, reject };
          this.thread.post({ type: "close" });
        }).catch(() => undefined);
      }
      await this.thread.terminate();
    })();
    return this.closed;
  }

  private fail(err: Error): void {
    if (this.error) return;
    this.error = err;
    for (const w of this.waiting.splice(0)) w.reject(err);
    this.closing?.reject(err);
  }
}

function failureError(failure: ThreadFailure): Error {
  switch (failure.kind) {
    case "threw":
      return new UdmError(`results writer failed: ${failure.error.message}`, { cause: failure.error });
    case "crashed":
      return new UdmError(failure.outOfMemory ? `results writer ran out of memory (its heap cap is ${WRITER_HEAP_MB} MB)` : `results writer crashed: ${failure.error.message}`, { cause: failure.error });
    case "exited":
      return new UdmError(`results writer exited (code ${failure.code})`);
  }
}
