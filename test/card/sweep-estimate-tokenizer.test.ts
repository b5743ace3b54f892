// `sweep --dry-run --engine URL` measures characters per token through the engine's /tokenize: against
// a sim with a real tokenizer the ratio is that tokenizer's own, not the built-in estimate's.
import { afterAll, beforeAll, expect, it } from "vitest";
import { measureCharsPerToken } from "../../card/sweep/sweep-estimate.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { loadHfTokenizer, type HfTokenizer } from "../../sim/engine/model/hf-tokenizer.js";

const SAMPLE = [
  '{"text":"Khách hàng phàn nàn rằng đơn hàng đến muộn ba ngày và hộp bị móp."}\n\nQuestion: Which team?\nA: billing\nB: shipping\nAnswer:',
  "The parcel arrived late and crushed; the customer asks for a refund of the shipping fee.",
];

let qwen: HfTokenizer;
const engines: SimEngine[] = [];
beforeAll(async () => {
  qwen = await loadHfTokenizer("qwen3");
  engines.push(await startSimEngine({ tokenizer: qwen }), await startSimEngine({}));
}, 60_000);
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
});

it("uses the engine's real token counts", async () => {
  const real = await measureCharsPerToken(engines[0]!.url, SAMPLE);
  const builtin = await measureCharsPerToken(engines[1]!.url, SAMPLE);
  const chars = SAMPLE.reduce((n, s) => n + s.length, 0);
  const tokens = SAMPLE.reduce((n, s) => n + qwen.encode(s).length, 0);
  expect(real!.charsPerToken).toBeCloseTo(chars / tokens, 9);
  expect(Math.abs(real!.charsPerToken - builtin!.charsPerToken)).toBeGreaterThan(0.05);
});
