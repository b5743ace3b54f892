// label-read against a BOS-adding model (the sim with `bos`, like Llama's and Gemma's tokenizers):
// the reads after a label's first tokens send the prompt's ids with BOS, as the server made them of
// the first read's text, so they hit the prefix cache the first read filled. Without BOS (how
// they were sent before issue 13: /tokenize with add_special_tokens false) the same ids miss it.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import { choiceQuestion, postJson } from "../sim/engine-fixtures.js";
import { startEngineProxy } from "./engine-proxy.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const STATE = { text: "Khách hàng phàn nàn rằng đơn hàng đến muộn hai tuần và hộp bị móp. ".repeat(6) };
type Usage = { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } | null };

describe("label-read on a BOS-adding model", () => {
  it("deeper trie reads carry BOS and hit the prefix cache; the same ids without BOS would miss it", async () => {
    const sim: SimEngine = await startSimEngine({ model: "llama-like", seed: 4, bos: true, maxModelLen: 32768 });
    const proxy = await startEngineProxy(sim.url);
    closers.push(() => proxy.close(), () => sim.close());
    // 60 options: labels past AP are two tokens for the sim's tokenizer, so the trie reads deeper.
    const record: RecordPayload = { recordKey: "t:r1", id: "r1", state: STATE, questions: { intent: choiceQuestion(60, "Which intent?") }, payloadSha256: "x" };
    const out = await new LabelReadMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } }).answer(record, new AbortController().signal);
    expect(out.errors).toEqual({});

    const reads = proxy.to("/v1/completions");
    const first = reads.find((r) => typeof (r.body as { prompt: unknown }).prompt === "string")!;
    const deeper = reads.filter((r) => Array.isArray((r.body as { prompt: unknown }).prompt));
    expect(deeper.length).toBeGreaterThan(0);
    const text = (first.body as { prompt: string }).prompt;
    const withBos = (await postJson(`${sim.url}/tokenize`, { prompt: text })).body.tokens as number[];
    const withoutBos = (await postJson(`${sim.url}/tokenize`, { prompt: text, add_special_tokens: false })).body.tokens as number[];
    expect(withBos.length).toBe(withoutBos.length + 1);
    expect(withBos.slice(1)).toEqual(withoutBos);

    for (const r of deeper) {
      const ids = (r.body as { prompt: number[] }).prompt;
      expect(ids.slice(0, withBos.length)).toEqual(withBos);
      const usage = (r.response as { usage: Usage }).usage;
      // Every whole 16-token block of the first read's prompt is served from the cache.
      expect(usage.prompt_tokens_details?.cached_tokens ?? 0).toBeGreaterThanOrEqual(Math.floor(withBos.length / 16) * 16 - 16);
    }

    // The same deeper read without BOS: another token sequence from the first token on, no block in common.
    const path = (deeper[0]!.body as { prompt: number[] }).prompt.slice(withBos.length);
    const { prompt: _, ...params } = deeper[0]!.body as Record<string, unknown>;
    const before = sim.stats().cachedTokens;
    const missed = await postJson(`${sim.url}/v1/completions`, { ...params, prompt: [...withoutBos, ...path] });
    expect(missed.status).toBe(200);
    expect(sim.stats().cachedTokens - before).toBe(0);
  });
});
