// The oversized-state check counts tokens (the real sim engine's /tokenize), not characters: a state
// with more characters than max_model_len but fewer tokens is read; at the token boundary it is skipped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyAnswer } from "../../agent/engine-method.js";
import { StateFit } from "../../agent/methods/state-fit.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";

let sim: SimEngine;
beforeAll(async () => {
  sim = await startSimEngine({ model: "sim/m", seed: 1 });
});
afterAll(async () => {
  await sim.close();
});

// {"s":"abcd abcd … abcd "}: the sim's tokenizer makes each "abcd" one token and spaces none, so
// 100 words are 100 + 8 tokens ({ " s " : " … " }) in 5·100 + 8 = 508 characters.
const state = { s: "abcd ".repeat(100) };
const TOKENS = 108;

async function cannotFit(maxModelLen: number): Promise<boolean> {
  const out = emptyAnswer();
  const skip = await new StateFit(sim.url, "sim/m", 5_000).cannotFit(state, maxModelLen, out, new AbortController().signal);
  // The engine was asked: without /tokenize the check answers "fits" whatever the state.
  expect(out.usage.requests).toBe(1);
  return skip;
}

describe("StateFit", () => {
  it("the fixture's token count is what the engine says", async () => {
    const res = await fetch(`${sim.url}/tokenize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "sim/m", prompt: JSON.stringify(state) }) });
    expect(((await res.json()) as { count: number }).count).toBe(TOKENS);
    expect(JSON.stringify(state).length).toBe(508);
  });

  it("more characters than max_model_len but fewer tokens: not skipped", async () => {
    // One token of the window is the reply: the state fits while tokens <= max_model_len - 2.
    expect(await cannotFit(TOKENS + 2)).toBe(false);
  });

  it("one token more than fits: skipped", async () => {
    expect(await cannotFit(TOKENS + 1)).toBe(true);
  });

  it("no window, or fewer characters than max_model_len has tokens: fits without asking the engine", async () => {
    const fit = new StateFit(sim.url, "sim/m", 5_000);
    for (const maxModelLen of [0, -1, 509, 10_000]) {
      const out = emptyAnswer();
      expect(await fit.cannotFit(state, maxModelLen, out, new AbortController().signal), String(maxModelLen)).toBe(false);
      expect(out.usage.requests, String(maxModelLen)).toBe(0);
    }
    // As many characters as max_model_len: asked (and 108 tokens fit in 508).
    const out = emptyAnswer();
    expect(await fit.cannotFit(state, 508, out, new AbortController().signal)).toBe(false);
    expect(out.usage.requests).toBe(1);
  });

  it("asks once per state", async () => {
    const fit = new StateFit(sim.url, "sim/m", 5_000);
    const first = emptyAnswer();
    const second = emptyAnswer();
    expect(await fit.cannotFit(state, TOKENS + 1, first, new AbortController().signal)).toBe(true);
    expect(await fit.cannotFit(state, TOKENS + 2, second, new AbortController().signal)).toBe(false);
    expect([first.usage.requests, second.usage.requests]).toEqual([1, 0]);
  });

  it("an engine error other than the context length (unknown model, engine down): the state is read, the engine decides", async () => {
    const unknownModel = emptyAnswer();
    expect(await new StateFit(sim.url, "other", 5_000).cannotFit(state, TOKENS + 1, unknownModel, new AbortController().signal)).toBe(false);
    expect(unknownModel.usage.requests).toBe(1);
    expect(await new StateFit("http://127.0.0.1:1", "sim/m", 5_000).cannotFit(state, TOKENS + 1, emptyAnswer(), new AbortController().signal)).toBe(false);
  });

  it("current vLLM's /tokenize refusing the state as over max_model_len (its 400): skipped", async () => {
    // That 400 is the answer to the question asked: the state alone is longer than the window.
    const current = await startSimEngine({ model: "sim/m", seed: 1, vllm: "current", maxModelLen: TOKENS - 1 });
    try {
      const out = emptyAnswer();
      expect(await new StateFit(current.url, "sim/m", 5_000).cannotFit(state, TOKENS - 1, out, new AbortController().signal)).toBe(true);
      expect(out.usage.requests).toBe(1);
    } finally {
      await current.close();
    }
  });

  it("a cancelled read throws its reason", async () => {
    const abort = new AbortController();
    abort.abort(new Error("unit cancelled"));
    await expect(new StateFit(sim.url, "sim/m", 5_000).cannotFit(state, TOKENS + 1, emptyAnswer(), abort.signal)).rejects.toThrow("unit cancelled");
  });
});
