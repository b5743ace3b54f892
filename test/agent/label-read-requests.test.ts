// What LabelReadMethod sends, against the real simulated engine on 127.0.0.1:0 behind a recording
// gateway (engine-proxy.ts): every request names the model the agent was given (vLLM serves a LoRA
// adapter under its own name, picked by the request's `model` field, docs/features/lora.md; a
// request without it reads the base model); the run's label-permutation seeds (applyRunParams,
// from the coordinator's Welcome) are the ones read.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine } from "../../sim/engine/server.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
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

const qs: Record<string, Question> = {
  label: { type: "choice", instructions: "Which sentiment?", criteria: { negative: "bad", neutral: "", positive: "good", mixed: "both" } },
  flag: { type: "noul", instructions: "Is it a complaint?", criteria: {} },
};
const record = (questions: Record<string, Question>): RecordPayload => ({ recordKey: "t:r1", id: "r1", state: { text: "The box was dented." }, questions, payloadSha256: "x" });
const signal = () => new AbortController().signal;

describe("LabelReadMethod: requests", () => {
  it("every request names the served model: chat reads, /tokenize, /detokenize, completions reads", async () => {
    const engine = await startSimEngine({ model: "tiny", seed: 3 });
    const proxy = await startEngineProxy(engine.url);
    closers.push(() => proxy.close(), () => engine.close());
    // 45 options: AQ..AS are "A" + one more token, so the chat read after "A" asks /detokenize.
    for (const api of ["chat", "completions"] as const) {
      const out = await new LabelReadMethod({ baseUrl: proxy.url, api, retry: { minBackoffMs: 1, maxBackoffMs: 5 } }).answer(record({ intent: choiceQuestion(45, "Which intent?") }), signal());
      expect(out.errors, api).toEqual({});
    }
    const posts = proxy.requests.filter((r) => r.method === "POST");
    expect(new Set(posts.map((r) => r.path))).toEqual(new Set(["/tokenize", "/detokenize", "/v1/chat/completions", "/v1/completions"]));
    for (const r of posts) expect((r.body as { model?: unknown }).model, r.path).toBe(engine.model);
  });

  it("the run's seeds from applyRunParams are read and averaged; a run naming none gets the agent's own back", async () => {
    const { method } = await setup();
    const own = await method.answer(record(qs), signal());
    method.applyRunParams({ seeds: [0, 1, 2] });
    const run = await method.answer(record(qs), signal());
    const { method: seeded } = await setup({}, { seeds: [0, 1, 2] });
    const expected = await seeded.answer(record(qs), signal());
    expect(run.errors).toEqual({});
    expect(run.probs).toEqual(expected.probs);
    expect(run.probs).not.toEqual(own.probs);
    method.applyRunParams({ seeds: [] });
    expect((await method.answer(record(qs), signal())).probs).toEqual(own.probs);
  });
});
