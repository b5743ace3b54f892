// Entry of the results writer's thread (line-writer-thread.ts): it takes batches of accepted results
// from the results store, writes their lines (common/results writeResultLine) to the track files,
// fsyncs them, passes the committed lines to the scorer's feed, and answers the store. The store in
// the coordinator's thread keeps what is committed; this thread keeps only the open files.
import { parentPort, workerData } from "node:worker_threads";
import { announceThread } from "../common/threads/index.js";
import { AppendLog, trackResultsPath, writeResultLine, type CommittedLine } from "../common/results/index.js";
import { encodeThreadError } from "../common/thread-error.js";
import type { ScorerFeedMessage } from "../scorer/index.js";
import { LineBatchDecoder, type LineBatch } from "./line-batch.js";
import type { FailedFile, LineWriterStartData, StoreToWriter, WriterToStore } from "./line-writer-messages.js";

const store = parentPort;
if (!store) throw new Error("line-writer-main.ts must run in a worker thread");
const { outDir, textsWanted, scorerFeed } = workerData as LineWriterStartData;
const post = (msg: WriterToStore) => store.postMessage(msg);
announceThread("results-writer");
const decoder = new LineBatchDecoder();
let failed = false;

// One message at a time, in order: a feed message goes on after the lines of every batch before it.
let queue = Promise.resolve();
store.on("message", (msg: StoreToWriter) => {
  queue = queue.then(() => (failed ? undefined : handle(msg))).catch((err: unknown) => {
    failed = true;
    post({ type: "error", error: encodeThreadError(err) });
  });
});

async function handle(msg: StoreToWriter): Promise<void> {
  switch (msg.type) {
    case "write":
      return write(msg.batch);
    case "feed":
      scorerFeed?.postMessage(msg.message, msg.transfer);
      return;
    case "close":
      for (const tracks of files.values()) for (const f of tracks.values()) await f.log.close().catch(() => undefined);
      files.clear();
      scorerFeed?.close();
      post({ type: "closed" });
      return;
  }
}

interface FileLines {
  log: AppendLog;
  family: string;
  track: string;
  /** Lines of the batch being written, and whether its flush succeeded. */
  lines: number;
  ok: boolean;
}

/** Every track file written to, by family, then track (no path made per line). */
const files = new Map<string, Map<string, FileLines>>();

function fileOf(family: string, track: string): FileLines {
  let tracks = files.get(family);
  if (!tracks) files.set(family, (tracks = new Map()));
  let f = tracks.get(track);
  if (!f) tracks.set(track, (f = { log: new AppendLog(trackResultsPath(outDir, family, track)), family, track, lines: 0, ok: true }));
  return f;
}

/** Group commit, as the store did in its own thread: every file written, then all fsynced at once. */
async function write(batch: LineBatch): Promise<void> {
  const lines: CommittedLine[] = [];
  const lineFiles: FileLines[] = [];
  const touched: FileLines[] = [];
  decoder.read(batch, (entry) => {
    const line = entry.kind === "written" ? entry.line : writeResultLine(entry.record, entry.qs, entry.answer, entry.track, entry.family, entry.agentId);
    const f = fileOf(line.family, line.track);
    if (f.lines++ === 0) touched.push(f);
    f.log.append(line.text);
    lines.push(line);
    lineFiles.push(f);
  });
  const outcomes = await Promise.allSettled(touched.map((f) => f.log.flush()));
  const failedFiles: FailedFile[] = [];
  for (let i = 0; i < touched.length; i++) {
    const f = touched[i]!;
    f.lines = 0;
    f.ok = outcomes[i]!.status === "fulfilled";
    if (!f.ok) failedFiles.push({ family: f.family, track: f.track, path: f.log.path, message: ((outcomes[i] as PromiseRejectedResult).reason as Error).message });
  }
  if (scorerFeed) {
    const texts: string[] = [];
    const scoredLengths: number[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (!lineFiles[i]!.ok) continue;
      texts.push(lines[i]!.text);
      scoredLengths.push(lines[i]!.scoredLength ?? -1);
    }
    if (texts.length > 0) scorerFeed.postMessage({ type: "committed", lines: texts, scoredLengths } satisfies ScorerFeedMessage);
  }
  post({
    type: "written",
    failed: failedFiles,
    ...(textsWanted ? { texts: lines.map((l) => l.text), scoredLengths: lines.map((l) => l.scoredLength ?? -1) } : {}),
  });
}
