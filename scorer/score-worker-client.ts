// Runs score shards in worker threads; the first failure stops the others and is rethrown with its type.
// From sources (no compiled score-worker.js to start: common/threads) the shards run one after another here.
import { UdmError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { ThreadHost, threadEntry } from "../common/threads/index.js";
import { decodeThreadError, type ThreadError } from "../common/thread-error.js";
import { scoreShard, type ShardInput, type ShardOutput } from "./score-shard.js";

type ShardMessage = { ok?: ShardOutput; error?: ThreadError };

export async function scoreShardsInWorkers(inputs: readonly ShardInput[]): Promise<ShardOutput[]> {
  const entry = threadEntry("./score-worker.js", import.meta.url);
  if (!entry) {
    const outputs: ShardOutput[] = [];
    for (const input of inputs) outputs.push(await scoreShard(input, createLogger("score")));
    return outputs;
  }
  const workers: Array<ThreadHost<never, ShardMessage>> = [];
  const runs = inputs.map(
    (input) =>
      new Promise<ShardOutput>((resolve, reject) => {
        let settled = false;
        const worker = new ThreadHost<never, ShardMessage>(entry, {
          workerData: input,
          onMessage: (msg) => {
            if (settled) return;
            settled = true;
            if (msg.ok) resolve(msg.ok);
            else reject(msg.error ? decodeThreadError(msg.error) : new UdmError("score worker sent no result"));
          },
          onFailure: (f) => {
            if (f.kind !== "exited") {
              settled = true;
              reject(f.error);
            } else if (!settled) reject(new UdmError(`score worker exited with code ${f.code} before reporting`));
          },
        });
        workers.push(worker);
      }),
  );
  try {
    return await Promise.all(runs);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
