// Worker-thread entry of `score`: scores one shard of tracks and posts the result (or the typed error) back.
import { parentPort, workerData } from "node:worker_threads";
import { createLogger } from "../common/log.js";
import { encodeThreadError } from "../common/thread-error.js";
import { scoreShard, type ShardInput } from "./score-shard.js";

const port = parentPort;
if (!port) throw new Error("score-worker.js runs only as a worker thread");
try {
  const out = await scoreShard(workerData as ShardInput, createLogger("score"));
  port.postMessage({ ok: out }, out.tracks.map((t) => t.resamples.buffer as ArrayBuffer));
} catch (err) {
  port.postMessage({ error: encodeThreadError(err) });
}
