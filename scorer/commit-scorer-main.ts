// Entry of the scorer thread (commit-scorer-thread.ts): a CommitScorer fed straight from the
// coordinator's thread, so the suite's gold and every committed line bypass the host's thread, whose
// heap cannot be capped and which serves the live page.
import { parentPort, workerData } from "node:worker_threads";
import { announceThread } from "../common/threads/index.js";
import { createLogger } from "../common/log.js";
import { encodeThreadError } from "../common/thread-error.js";
import { readScoredPart, scoredPart } from "../common/results/index.js";
import { CommitScorer } from "./commit-scorer.js";
import type { HostToScorer, ScorerFeedMessage, ScorerThreadStartData, ScorerToHost } from "./commit-scorer-messages.js";

announceThread("scorer");
const host = parentPort;
if (!host) throw new Error("commit-scorer-main.ts must run in a worker thread");
const { feed, logLevel, ...options } = workerData as ScorerThreadStartData;
const post = (msg: ScorerToHost) => host.postMessage(msg);
let failed = false;
const fail = (err: unknown) => {
  if (failed) return;
  failed = true;
  post({ type: "error", error: encodeThreadError(err) });
  feed.close();
};

const scorer: CommitScorer = new CommitScorer({
  ...options,
  log: createLogger("coordinator/scorer", logLevel),
  onTrackFinal: (track, metrics) => post({ type: "trackFinal", track, metrics, current: scorer.current(), v1Interval: scorer.v1Interval() }),
});
const gold = scorer.goldFeed();
gold.loaded.then(() => post({ type: "loaded" }), fail);

// The host's "finish" and the feed's last lines come on different ports: finish waits for the feed's end.
let markEnded!: () => void;
const ended = new Promise<void>((resolve) => (markEnded = resolve));
feed.on("message", (msg: ScorerFeedMessage) => {
  if (failed) return;
  try {
    switch (msg.type) {
      case "gold":
        gold.onGold(msg.message);
        break;
      case "committed":
        for (let i = 0; i < msg.lines.length; i++) scorer.committed(readScoredPart(scoredPart(msg.lines[i]!, msg.scoredLengths[i]!)));
        break;
      case "end":
        markEnded();
        break;
    }
  } catch (err) {
    fail(err);
  }
});
host.on("message", (msg: HostToScorer) => {
  const answer = async () => {
    switch (msg.type) {
      case "replay":
        await scorer.replayCommitted();
        post({ type: "replayed", current: scorer.current(), v1Interval: scorer.v1Interval() });
        break;
      case "finish":
        await ended;
        post({ type: "finished", metrics: scorer.finish() });
        break;
    }
  };
  answer().catch(fail);
});
