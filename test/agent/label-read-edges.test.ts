// LabelReadMethod at its edges, against the real simulated engine on 127.0.0.1:0: the engine URL
// with trailing slashes, a choice without options, a cancelled answer, a state longer than the
// context, prompts counted only when they could be too long (and at the exact token boundary),
// the chat prompt's count, current vLLM's /tokenize refusing a long prompt, the defaults.
import { describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import { LABEL_READ_SYSTEM, listOptions, questionText, statePrefix } from "../../agent/methods/label-read-template.js";
import { emptyAnswer } from "../../agent/engine-method.js";
import { labelPermutation } from "../../common/engine-protocol/label-permutation.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { labelReadSetup } from "./label-read-setup.js";

const { setup, engines } = labelReadSetup();

function record(questions: Record<string, Question>, state: Record<string, string> = { text: "short" }): RecordPayload {
  return { recordKey: "t:r1", id: "r1", state, questions, payloadSha256: "x" };
}

const noul = (instructions = "Is it a complaint?"): Question => ({ type: "noul", instructions, criteria: {} });
const LONG = "Please consider carefully ".repeat(40);
const signal = () => new AbortController().signal;

async function tokenCount(engine: SimEngine, body: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${engine.url}/tokenize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return ((await res.json()) as { count: number }).count;
}

describe("LabelReadMethod edges", () => {
  it("an engine URL with trailing slashes is read as without them", async () => {
    const engine = await startSimEngine({ model: "tiny", seed: 3 });
    engines.push(engine);
    const method = new LabelReadMethod({ baseUrl: `${engine.url}//`, retry: { minBackoffMs: 1, maxBackoffMs: 5 } });
    const out = await method.answer(record({ flag: noul() }), signal());
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["flag"]);
    expect(engine.stats().byStatus[404] ?? 0).toBe(0);
  });

  it("a choice without options is an error of that question only", async () => {
    const { method } = await setup();
    const out = await method.answer(record({ empty: { type: "choice", instructions: "Which?", criteria: {} }, flag: noul() }), signal());
    expect(out.errors).toEqual({ empty: "choice without options" });
    expect(out.skipped).toEqual([]);
    expect(Object.keys(out.probs)).toEqual(["flag"]);
  });

  it("a cancelled answer throws its reason instead of erroring its questions", async () => {
    const { method } = await setup();
    await method.info();
    const abort = new AbortController();
    abort.abort(new Error("unit cancelled"));
    await expect(method.answer(record({ flag: noul() }), abort.signal)).rejects.toThrow("unit cancelled");
  });

  it("a state longer than the context skips every question after one /tokenize", async () => {
    const { engine, method } = await setup({ maxModelLen: 120 });
    const out = await method.answer(record({ a: noul(), b: choiceQuestion(3) }, { text: "word ".repeat(200) }), signal());
    expect(out.skipped).toEqual(["a", "b"]);
    expect(out.errors).toEqual({});
    expect(out.usage.requests).toBe(1);
    expect(engine.stats().tokenizeRequests).toBe(1);
    expect(engine.stats().byEndpoint["/v1/completions"] ?? 0).toBe(0);
  });

  it("a prompt with fewer characters than the context has tokens is not counted (completions and chat)", async () => {
    for (const api of ["completions", "chat"] as const) {
      const { engine, method } = await setup({}, { api });
      const out = await method.answer(record({ flag: noul() }), signal());
      expect(out.errors, api).toEqual({});
      // The label tokens only: the answer tail once, then "yes" and "no".
      expect(engine.stats().tokenizeRequests, api).toBe(3);
    }
  });

  it("chat: a prompt over the context is counted and skipped without being sent", async () => {
    const { engine, method } = await setup({ maxModelLen: 120 }, { api: "chat" });
    const out = await method.answer(record({ a: noul(), long: choiceQuestion(3, LONG) }), signal());
    expect(out.skipped).toEqual(["long"]);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["a"]);
    expect(engine.stats().byStatus[400] ?? 0).toBe(0);
    // The one question sent: the short one.
    expect(engine.stats().byEndpoint["/v1/chat/completions"]).toBe(1);
  });

  it("current vLLM's /tokenize refusing a prompt over the context: that question is skipped", async () => {
    const { method } = await setup({ vllm: "current", maxModelLen: 120 });
    const out = await method.answer(record({ a: noul(), long: noul(LONG) }), signal());
    expect(out.skipped).toEqual(["long"]);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["a"]);
  });

  it("a prompt of exactly max_model_len minus the label's tokens is read; one token more is skipped without a request", async () => {
    // A BOS-adding tokenizer: the state prefix is counted with it, the question without it.
    const q = noul("Does the customer ask for a refund or for a replacement of the damaged box?");
    const state = { text: "The order arrived two weeks late and the box was dented." };
    const probe = await setup({ bos: true });
    const text = questionText(q, listOptions(q, labelPermutation(0, 2)));
    const tokens = (await tokenCount(probe.engine, { prompt: statePrefix(state) })) + (await tokenCount(probe.engine, { prompt: text, add_special_tokens: false }));
    expect(statePrefix(state).length + text.length).toBeGreaterThan(tokens + 1);
    // "yes" and "no" are one token each: the reply needs one.
    const fits = await setup({ bos: true, maxModelLen: tokens + 1 });
    const read = await fits.method.answer(record({ q }, state), signal());
    expect([read.skipped, read.errors, Object.keys(read.probs)]).toEqual([[], {}, ["q"]]);
    const over = await setup({ bos: true, maxModelLen: tokens });
    const skipped = await over.method.answer(record({ q }, state), signal());
    expect([skipped.skipped, skipped.errors]).toEqual([["q"], {}]);
    expect(over.engine.stats().byEndpoint["/v1/completions"] ?? 0).toBe(0);
  });

  it("only a chat read after a label's first tokens asks /detokenize for their text", async () => {
    // 45 options: AQ..AS are "A" + one more token, so one read continues the path "A".
    const chat = await setup({}, { api: "chat" });
    expect((await chat.method.answer(record({ intent: choiceQuestion(45, "Which intent?") }), signal())).errors).toEqual({});
    expect(chat.engine.stats().detokenizeRequests).toBe(1);
    const completions = await setup();
    expect((await completions.method.answer(record({ intent: choiceQuestion(45, "Which intent?") }), signal())).errors).toEqual({});
    expect(completions.engine.stats().detokenizeRequests).toBe(0);
  });

  it("a label of two tokens needs two tokens of the context: one token short, skipped without a request", async () => {
    // 45 options: AQ..AS are "A" + one more token.
    const q = choiceQuestion(45, "Which intent?");
    const state = { text: "The order arrived two weeks late and the box was dented." };
    const probe = await setup();
    const text = questionText(q, listOptions(q, labelPermutation(0, 45)));
    const tokens = (await tokenCount(probe.engine, { prompt: statePrefix(state) })) + (await tokenCount(probe.engine, { prompt: text, add_special_tokens: false }));
    const over = await setup({ maxModelLen: tokens + 1 });
    const out = await over.method.answer(record({ q }, state), signal());
    expect([out.skipped, out.errors]).toEqual([["q"], {}]);
    expect(over.engine.stats().byEndpoint["/v1/completions"] ?? 0).toBe(0);
  });

  it("chat: a prompt of exactly max_model_len minus the label's tokens is read; one token more is skipped without a request", async () => {
    const q = noul("Does the customer ask for a refund or for a replacement of the damaged box?");
    const state = { text: "The order arrived two weeks late and the box was dented." };
    const probe = await setup();
    const messages = [
      { role: "system", content: LABEL_READ_SYSTEM },
      { role: "user", content: `${JSON.stringify(state)}\n\n${questionText(q, listOptions(q, labelPermutation(0, 2)))}` },
    ];
    const tokens = await tokenCount(probe.engine, { messages, add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } });
    const fits = await setup({ maxModelLen: tokens + 1 }, { api: "chat" });
    const read = await fits.method.answer(record({ q }, state), signal());
    expect([read.skipped, read.errors, Object.keys(read.probs)]).toEqual([[], {}, ["q"]]);
    const over = await setup({ maxModelLen: tokens }, { api: "chat" });
    const skipped = await over.method.answer(record({ q }, state), signal());
    expect([skipped.skipped, skipped.errors]).toEqual([["q"], {}]);
    expect(over.engine.stats().byEndpoint["/v1/chat/completions"] ?? 0).toBe(0);
  });

  it("no questions: nothing is asked, not even the state's length; an answer's latency is its duration", async () => {
    const { engine, method } = await setup({ maxModelLen: 120 });
    const out = emptyAnswer();
    await method.answerQuestions(record({ a: noul() }, { text: "word ".repeat(200) }), [], out, signal());
    expect(out.usage.requests).toBe(0);
    expect(engine.stats().tokenizeRequests).toBe(0);
    const started = performance.now();
    const answered = await method.answer(record({ a: noul() }), signal());
    expect(answered.latencyMs).toBeGreaterThan(0);
    expect(answered.latencyMs).toBeLessThanOrEqual(performance.now() - started);
  });

  it("exact mode on a server that honours logprob_token_ids; capacity 8 by default", async () => {
    const { method } = await setup();
    expect((await method.info()).capacity).toBe(8);
    await method.answer(record({ flag: noul() }), signal());
    expect(method.approximateMode).toBe(false);
  });
});
