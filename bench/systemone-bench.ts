// Benchmark of SystemOneMethod against the simulated engine, in one process, over real HTTP.
//
//   node dist/bench/systemone-bench.js [--out bench/out/systemone.json] [--records N]
//
// Scenarios: (1) zero-latency engine: the agent's and the sim's own overhead per record;
// (2) a GPU-like engine (token rate, batching): throughput and the prefix cache's share of prompt
// tokens; (3) the same with 5% server errors: retries and answered share. Figures are measured,
// on whatever machine runs this; the sim's token rate is a setting, not a GPU's.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { SystemOneMethod, type RecordPayload } from "../agent/index.js";
import type { Question } from "../common/suite/index.js";
import { startSimEngine, type SimEngineOptions } from "../sim/index.js";
import { arg } from "./bench-args.js";

function makeRecord(i: number, questionCount: number, stateWords: number): RecordPayload {
  const words = Array.from({ length: stateWords }, (_, w) => `word${(i * 31 + w) % 997}`).join(" ");
  const questions: Record<string, Question> = {};
  for (let q = 0; q < questionCount; q++) {
    questions[q % 3 === 0 ? `flag${q}` : `label${q}`] =
      q % 3 === 0
        ? { type: "noul", instructions: `Is statement ${q} true of the text?`, criteria: {} }
        : { type: "choice", instructions: `Which class fits aspect ${q}?`, criteria: { A: "negative", B: "neutral", C: "positive" } };
  }
  return { recordKey: `bench:${i}`, id: String(i), state: { text: words }, questions, payloadSha256: "" };
}

interface ScenarioResult {
  scenario: string;
  engine: SimEngineOptions;
  records: number;
  questions_per_record: number;
  concurrency: number;
  wall_s: number;
  records_per_s: number;
  questions_per_s: number;
  http_requests: number;
  retries: number;
  answered_share: number;
  prompt_tokens: number;
  cached_tokens: number;
  cached_share: number;
  latency_ms_p50: number;
  latency_ms_p95: number;
}

async function scenario(name: string, engineOptions: SimEngineOptions, records: number, questionCount: number, stateWords: number, concurrency: number): Promise<ScenarioResult> {
  const engine = await startSimEngine(engineOptions);
  const method = new SystemOneMethod({ baseUrl: engine.url, retry: { retries: 6, minBackoffMs: 20, maxBackoffMs: 500 } });
  const payloads = Array.from({ length: records }, (_, i) => makeRecord(i, questionCount, stateWords));
  let next = 0;
  let requests = 0;
  let retries = 0;
  let answered = 0;
  let prompt = 0;
  let cached = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const signal = new AbortController().signal;
      while (next < payloads.length) {
        const out = await method.answer(payloads[next++]!, signal);
        requests += out.usage.requests;
        retries += out.retries;
        answered += Object.keys(out.probs).length;
        prompt += out.usage.promptTokens;
        cached += out.usage.cachedTokens ?? 0;
        latencies.push(out.latencyMs);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  await engine.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]! * 10) / 10;
  return {
    scenario: name,
    engine: engineOptions,
    records,
    questions_per_record: questionCount,
    concurrency,
    wall_s: Math.round(wall * 1000) / 1000,
    records_per_s: Math.round((records / wall) * 10) / 10,
    questions_per_s: Math.round((records * questionCount) / wall),
    http_requests: requests,
    retries,
    answered_share: answered / (records * questionCount),
    prompt_tokens: prompt,
    cached_tokens: cached,
    cached_share: Math.round((cached / Math.max(1, prompt)) * 1000) / 1000,
    latency_ms_p50: pct(0.5),
    latency_ms_p95: pct(0.95),
  };
}

const out = arg("out", "bench/out/systemone.json");
const records = Number(arg("records", "1000"));
// Warm-up (JIT, sockets), not reported.
await scenario("warm-up", { tokensPerS: 0 }, Math.min(200, records), 8, 120, 16);
const results = [
  await scenario("zero-latency", { tokensPerS: 0, seed: 1 }, records, 8, 120, 16),
  await scenario("gpu-like", { tokensPerS: 400_000, maxNumSeqs: 128, seed: 1 }, records, 8, 300, 16),
  await scenario("gpu-like-5xx-5pct", { tokensPerS: 400_000, maxNumSeqs: 128, seed: 1, faults: "5xx=0.05" }, records, 8, 300, 16),
];
const figures = { benchmark: "systemone", node: process.version, cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "", measured_at: new Date().toISOString(), results };
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(figures, null, 2) + "\n");
process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
