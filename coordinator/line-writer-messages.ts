// The messages between the results store (coordinator's thread) and the results writer's thread
// (line-writer-main.ts), each direction one discriminated union.
import type { MessagePort } from "node:worker_threads";
import type { ScorerFeedMessage } from "../scorer/index.js";
import type { ThreadError } from "../common/thread-error.js";
import type { LineBatch } from "./line-batch.js";

export interface LineWriterStartData {
  outDir: string;
  /** Send each written line's text back (someone in the coordinator's thread reads it: the bus, a host's onCommitted). */
  textsWanted: boolean;
  /** A scorer thread's feed (transferred): committed lines go there from the writer, the coordinator's other feed messages through it. */
  scorerFeed?: MessagePort;
}

export type StoreToWriter =
  /** Write and fsync a batch of lines; answered with "written" (batches are answered in order). */
  | { type: "write"; batch: LineBatch }
  /** Pass on to the scorer's feed, after the lines of every batch sent before it, moving `transfer` on. */
  | { type: "feed"; message: ScorerFeedMessage; transfer: ArrayBuffer[] }
  /** Close every file; answered with "closed". */
  | { type: "close" };

/** A track file whose write or fsync failed: none of its lines in the batch is committed. */
export interface FailedFile {
  family: string;
  track: string;
  path: string;
  message: string;
}

export type WriterToStore =
  | {
      type: "written";
      /** Files whose lines did not become durable; every other line of the batch did. */
      failed: FailedFile[];
      /** Per line of the batch, its text and where its scored part ends (-1: the whole), when textsWanted. */
      texts?: string[];
      scoredLengths?: number[];
    }
  | { type: "closed" }
  | { type: "error"; error: ThreadError };
