// Runs score shards in worker threads; the first failure stops the others and is rethrown with its type.
import { Worker } from "node:worker_threads";
import { UdmError } from "../common/errors.js";
import { decodeThreadError, type ThreadError } from "../common/thread-error.js";
import type { ShardInput, ShardOutput } from "./score-shard.js";

export async function scoreShardsInWorkers(inputs: readonly ShardInput[]): Promise<ShardOutput[]> {
  const workers: Worker[] = [];
  const runs = inputs.map(
    (input) =>
      new Promise<ShardOutput>((resolve, reject) => {
        const worker = new Worker(new URL("./score-worker.js", import.meta.url), { workerData: input });
        workers.push(worker);
        let settled = false;
        worker.once("message", (msg: { ok?: ShardOutput; error?: ThreadError }) => {
          settled = true;
          if (msg.ok) resolve(msg.ok);
          else reject(msg.error ? decodeThreadError(msg.error) : new UdmError("score worker sent no result"));
        });
        worker.once("error", (err) => {
          settled = true;
          reject(err);
        });
        worker.once("exit", (code) => {
          if (!settled) reject(new UdmError(`score worker exited with code ${code} before reporting`));
        });
      }),
  );
  try {
    return await Promise.all(runs);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
