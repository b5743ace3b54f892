// The sim's vLLM profiles (--vllm): what each answers where the default (structured-seed) differs.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { choiceQuestion, postJson } from "./engine-fixtures.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function engine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const e = await startSimEngine({ model: "tiny", ...options });
  engines.push(e);
  return e;
}

const STATE = { text: "short state" };

describe("sim --vllm", () => {
  it("legacy: no /v1/systemone nor /v1/decisions (FastAPI's 404), logprob_token_ids ignored", async () => {
    const e = await engine({ vllm: "legacy" });
    for (const path of ["/v1/systemone", "/v1/decisions"]) {
      const r = await postJson(`${e.url}${path}`, { state: STATE, questions: { a: choiceQuestion(2) } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ detail: "Not Found" });
    }
    const r = await postJson(`${e.url}/v1/completions`, { prompt: "Hi", max_tokens: 1, logprobs: 2, logprob_token_ids: [5, 6, 7] });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.choices[0].logprobs.top_logprobs[0])).toHaveLength(2);
    const def = await engine();
    expect((await postJson(`${def.url}/v1/systemone`, { state: STATE, questions: { a: choiceQuestion(2) } })).status).toBe(200);
  });

  it("current: /tokenize refuses a prompt over max_model_len with the context-length 400", async () => {
    const e = await engine({ vllm: "current", maxModelLen: 16 });
    const r = await postJson(`${e.url}/tokenize`, { prompt: "lorem ipsum ".repeat(20) });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^This model's maximum context length is 16 tokens\. However, your request has \d+ input tokens/);
    expect((await postJson(`${e.url}/tokenize`, { prompt: "lorem" })).status).toBe(200);
    const def = await engine({ maxModelLen: 16 });
    expect((await postJson(`${def.url}/tokenize`, { prompt: "lorem ipsum ".repeat(20) })).status).toBe(200);
  });

  it("current: a structured decision over the context is a 400 without figures", async () => {
    const e = await engine({ vllm: "current", maxModelLen: 40 });
    const r = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { a: choiceQuestion(2, "Think ".repeat(60)) } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe("Winnow decision exceeds the model context");
  });

  it("current: admission counts questions against max_num_queued_reqs (503 over it); usage has prompt_tokens_details null", async () => {
    const e = await engine({ vllm: "current", maxNumQueuedReqs: 64 });
    const questions = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, choiceQuestion(2)]));
    expect((await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: questions(64) })).status).toBe(200);
    const small = await engine({ vllm: "current", maxNumQueuedReqs: 63 });
    const r = await postJson(`${small.url}/v1/systemone`, { state: STATE, questions: questions(64) });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe(503);
    const c = await postJson(`${e.url}/v1/completions`, { prompt: "Hi", max_tokens: 1 });
    expect(c.body.usage.prompt_tokens_details).toBeNull();
  });
});

describe("sim --vllm current: no seed on /v1/systemone, cached reads drift", () => {
  const body = (seed: number | undefined) => ({ state: { text: "a state long enough to fill a cache block or two of sixteen tokens each" }, questions: { a: choiceQuestion(5) }, ...(seed === undefined ? {} : { seed }) });
  const probs = async (url: string, seed?: number): Promise<number[]> => {
    const r = await postJson(`${url}/v1/systemone`, body(seed));
    expect(r.status).toBe(200);
    return Object.values(r.body.answers.a.probabilities as Record<string, number>);
  };
  const largest = (a: number[], b: number[]) => Math.max(...a.map((p, i) => Math.abs(p - b[i]!)));

  it("current: a seed is accepted and ignored; the cold read and the warm ones differ by at most 0.026, the warm ones not at all (structured-seed: bit-exact, seed honoured)", async () => {
    const e = await engine({ vllm: "current" });
    const cold = await probs(e.url, 1);
    const warm = await probs(e.url, 1);
    const otherSeed = await probs(e.url, 2);
    const garbageSeed = await postJson(`${e.url}/v1/systemone`, { ...body(undefined), seed: "not a number" });
    expect(garbageSeed.status).toBe(200);
    expect(largest(cold, warm)).toBeGreaterThan(1e-3);
    expect(largest(cold, warm)).toBeLessThanOrEqual(0.026);
    expect(otherSeed).toEqual(warm);
    expect(warm.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    // The default profile (structured-seed) stays as it was: bit-exact reads, the seed honoured.
    const def = await engine();
    const defCold = await probs(def.url, 1);
    expect(await probs(def.url, 1)).toEqual(defCold);
    expect(largest(defCold, await probs(def.url, 2))).toBeGreaterThan(0.05);
  });
});

describe("sim --vllm current: cached completion reads drift", () => {
  const prompt = "a prompt long enough to fill two or three cache blocks of sixteen tokens each, so that a repeat hits the cache";
  const logprobs = async (url: string): Promise<Record<string, number>> => {
    const r = await postJson(`${url}/v1/completions`, { prompt, max_tokens: 1, logprobs: 5 });
    expect(r.status).toBe(200);
    return r.body.choices[0].logprobs.top_logprobs[0] as Record<string, number>;
  };

  it("current: a repeat (warm) reports each top token's probability within 0.026 of the cold read, not equal; structured-seed: equal", async () => {
    const e = await engine({ vllm: "current" });
    const cold = await logprobs(e.url);
    const warm = await logprobs(e.url);
    expect(Object.keys(warm)).toEqual(Object.keys(cold));
    const moves = Object.keys(cold).map((k) => Math.abs(Math.exp(warm[k]!) - Math.exp(cold[k]!)));
    expect(Math.max(...moves)).toBeGreaterThan(0);
    expect(Math.max(...moves)).toBeLessThanOrEqual(0.026);
    const def = await engine();
    expect(await logprobs(def.url)).toEqual(await logprobs(def.url));
  });
});
