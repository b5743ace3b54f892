// LabelReadMethod's length checks against the real simulated engine on 127.0.0.1:0: a prompt is
// counted with /tokenize only when its characters could exceed max_model_len (a token is at least
// one character), at the exact character boundary, for completions and chat (whose template adds
// up to 64 tokens); a server that reports no max_model_len counts nothing; skipped questions keep
// the record's order whatever order their counts finished in.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine } from "../../sim/engine/server.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import { LABEL_READ_SYSTEM, listOptions, questionText, statePrefix } from "../../agent/methods/label-read-template.js";
import { labelPermutation } from "../../common/engine-protocol/label-permutation.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { startEngineProxy } from "./engine-proxy.js";
import { labelReadSetup } from "./label-read-setup.js";

const { setup } = labelReadSetup();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const STATE = { text: "The order arrived two weeks late and the box was dented." };
const q: Question = { type: "noul", instructions: "Does the customer ask for a refund or for a replacement of the damaged box?", criteria: {} };
const record = (questions: Record<string, Question>, state: Record<string, string> = STATE): RecordPayload => ({ recordKey: "t:r1", id: "r1", state, questions, payloadSha256: "x" });
const signal = () => new AbortController().signal;
/** /tokenize requests of the label tokens alone: the answer tail, then "yes" and "no". */
const LABEL_COUNTS = 3;

describe("LabelReadMethod: which prompts are counted", () => {
  it("completions: a prompt of exactly max_model_len minus the label's tokens in characters is not counted; one more character is", async () => {
    const chars = (statePrefix(STATE) + questionText(q, listOptions(q, labelPermutation(0, 2)))).length;
    // "yes" and "no" are one token: the reply needs one.
    const fits = await setup({ maxModelLen: chars + 1 });
    const read = await fits.method.answer(record({ q }), signal());
    expect([read.skipped, read.errors, Object.keys(read.probs)]).toEqual([[], {}, ["q"]]);
    expect(fits.engine.stats().tokenizeRequests).toBe(LABEL_COUNTS);
    // One character over: the prefix and the question are counted (far fewer tokens), then read.
    const counted = await setup({ maxModelLen: chars });
    const over = await counted.method.answer(record({ q }), signal());
    expect([over.skipped, over.errors, Object.keys(over.probs)]).toEqual([[], {}, ["q"]]);
    expect(counted.engine.stats().tokenizeRequests).toBe(LABEL_COUNTS + 2);
  });

  it("chat: messages of exactly max_model_len minus the template's 64 tokens and the label's in characters are not counted; one more character is", async () => {
    const messages = [LABEL_READ_SYSTEM, `${JSON.stringify(STATE)}\n\n${questionText(q, listOptions(q, labelPermutation(0, 2)))}`];
    const chars = messages.reduce((n, m) => n + m.length, 0);
    const fits = await setup({ maxModelLen: chars + 64 + 1 }, { api: "chat" });
    const read = await fits.method.answer(record({ q }), signal());
    expect([read.skipped, read.errors, Object.keys(read.probs)]).toEqual([[], {}, ["q"]]);
    expect(fits.engine.stats().tokenizeRequests).toBe(LABEL_COUNTS);
    const counted = await setup({ maxModelLen: chars + 64 }, { api: "chat" });
    const over = await counted.method.answer(record({ q }), signal());
    expect([over.skipped, over.errors, Object.keys(over.probs)]).toEqual([[], {}, ["q"]]);
    expect(counted.engine.stats().tokenizeRequests).toBe(LABEL_COUNTS + 1);
  });

  it("a server whose /v1/models reports no max_model_len: no prompt is counted or skipped, however long", async () => {
    // An OpenAI-compatible gateway in front of vLLM lists models without vLLM's max_model_len
    // field; the method then has no limit to check (0 = not reported, model-info.ts).
    const engine = await startSimEngine({ model: "tiny", seed: 3, maxModelLen: 100_000 });
    const proxy = await startEngineProxy(engine.url, {
      response: (path, body) => {
        if (path === "/v1/models") for (const card of body.data as Array<Record<string, unknown>>) delete card.max_model_len;
        return body;
      },
    });
    closers.push(() => proxy.close(), () => engine.close());
    const method = new LabelReadMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } });
    expect((await method.info()).maxModelLen).toBe(0);
    const long: Question = { type: "noul", instructions: "Please consider carefully ".repeat(40), criteria: {} };
    const out = await method.answer(record({ q, long }), signal());
    expect([out.skipped, out.errors, Object.keys(out.probs).sort()]).toEqual([[], {}, ["long", "q"]]);
    expect(proxy.to("/tokenize")).toHaveLength(LABEL_COUNTS);
  });

  it("skipped questions keep the record's order, whichever count finished first", async () => {
    // "wide" (60 options) first tokenizes its 60 labels; "plain" needs only the noul labels, which
    // "a" already read, so its count ends first.
    const long = "Please consider carefully ".repeat(40);
    const { method } = await setup({ maxModelLen: 120 });
    const qs: Record<string, Question> = { a: { type: "noul", instructions: "Yes?", criteria: {} }, wide: choiceQuestion(60, long), plain: { type: "noul", instructions: long, criteria: {} } };
    const out = await method.answer(record(qs, { text: "short" }), signal());
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["a"]);
    expect(out.skipped).toEqual(["wide", "plain"]);
  });
});
