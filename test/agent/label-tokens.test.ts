// The token ids a label adds (agent/methods/label-tokens.ts), asked of the real simulated engine's
// /tokenize: for completions what "Answer: X" adds after "Answer:", for chat what the assistant
// message adds after the generation prompt; the prompt's tail is tokenized once per API; a label
// that adds no token cannot be read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyAnswer } from "../../agent/engine-method.js";
import { ANSWER_TAIL, CHAT_TEMPLATE_KWARGS, LabelTokenError, LabelTokenizer, type Tokenize } from "../../agent/methods/label-tokens.js";
import type { TokenizeResponse } from "../../common/engine-protocol/index.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";

let sim: SimEngine;
beforeAll(async () => {
  sim = await startSimEngine({ model: "sim/m", seed: 1 });
});
afterAll(async () => {
  await sim.close();
});

/** POST /tokenize of the sim, recording each body. */
function tokenizer(bodies: Record<string, unknown>[]): Tokenize {
  return async (body) => {
    bodies.push(body);
    const res = await fetch(`${sim.url}/tokenize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "sim/m", ...body }) });
    expect(res.status, JSON.stringify(body)).toBe(200);
    return (await res.json()) as TokenizeResponse;
  };
}

async function simTokens(body: Record<string, unknown>): Promise<TokenizeResponse> {
  return tokenizer([])(body, emptyAnswer(), new AbortController().signal);
}

describe("LabelTokenizer", () => {
  it("completions: the ids and token strings 'Answer: X' adds after 'Answer:', the tail asked once", async () => {
    const bodies: Record<string, unknown>[] = [];
    const t = new LabelTokenizer("completions", tokenizer(bodies));
    const tail = (await simTokens({ prompt: ANSWER_TAIL, add_special_tokens: false })).tokens;
    const full = await simTokens({ prompt: `${ANSWER_TAIL} AQ`, add_special_tokens: false, return_token_strs: true });
    const got = await t.tokens("AQ", emptyAnswer(), new AbortController().signal);
    expect(got.ids).toEqual(full.tokens.slice(tail.length));
    expect(got.ids.length).toBeGreaterThan(0);
    expect(got.strs).toEqual((full.token_strs ?? []).slice(tail.length));
    await t.tokens("B", emptyAnswer(), new AbortController().signal);
    await t.tokens("AQ", emptyAnswer(), new AbortController().signal);
    // One tail, one body per label (the repeated label is cached).
    expect(bodies).toEqual([
      { prompt: "Answer:", add_special_tokens: false },
      { prompt: "Answer: AQ", add_special_tokens: false, return_token_strs: true },
      { prompt: "Answer: B", add_special_tokens: false, return_token_strs: true },
    ]);
  });

  it("chat: what the assistant message adds after the generation prompt, thinking off", async () => {
    const bodies: Record<string, unknown>[] = [];
    const t = new LabelTokenizer("chat", tokenizer(bodies));
    const user = { role: "user", content: "x" };
    const tail = (await simTokens({ messages: [user], add_generation_prompt: true, chat_template_kwargs: CHAT_TEMPLATE_KWARGS })).tokens;
    const full = await simTokens({ messages: [user, { role: "assistant", content: "AQ" }], add_generation_prompt: false, continue_final_message: true, chat_template_kwargs: CHAT_TEMPLATE_KWARGS, return_token_strs: true });
    const got = await t.tokens("AQ", emptyAnswer(), new AbortController().signal);
    expect(got.ids).toEqual(full.tokens.slice(tail.length));
    expect(got.ids.length).toBeGreaterThan(0);
    expect(bodies[0]).toEqual({ messages: [user], add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } });
    expect(bodies[1]).toEqual({ messages: [user, { role: "assistant", content: "AQ" }], add_generation_prompt: false, continue_final_message: true, chat_template_kwargs: { enable_thinking: false }, return_token_strs: true });
  });

  it("a label that adds no token after the prompt cannot be read", async () => {
    const t = new LabelTokenizer("completions", tokenizer([]));
    await expect(t.tokens("", emptyAnswer(), new AbortController().signal)).rejects.toThrow(LabelTokenError);
    await expect(t.tokens("", emptyAnswer(), new AbortController().signal)).rejects.toThrow('label "" does not tokenize as a continuation of the prompt for this model');
  });
});
