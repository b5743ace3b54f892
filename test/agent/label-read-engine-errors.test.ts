// LabelReadMethod when the engine fails, against the real simulated engine on 127.0.0.1:0 (with
// its --faults) or behind a gateway (engine-proxy.ts): retried 5xx add up in the record's retries;
// 5xx past the retries and a /tokenize route the gateway does not serve are the question's errors,
// not skipped questions (only a prompt over the context is skipped) and not another read.
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

const noul: Question = { type: "noul", instructions: "Is it a complaint?", criteria: {} };
const record = (questions: Record<string, Question>): RecordPayload => ({ recordKey: "t:r1", id: "r1", state: { text: "The box was dented." }, questions, payloadSha256: "x" });
const signal = () => new AbortController().signal;

describe("LabelReadMethod: engine failures", () => {
  it("5xx answered by retries: the record's retries are the failed attempts of all its questions", async () => {
    const { engine, method } = await setup({ faults: "5xx=0.3" });
    const out = await method.answer(record({ a: noul, b: choiceQuestion(60, "Which intent?"), c: choiceQuestion(3) }), signal());
    expect(out.errors).toEqual({});
    expect(engine.stats().faults.serverErrors).toBeGreaterThan(0);
    expect(out.retries).toBe(engine.stats().faults.serverErrors);
  });

  it("5xx past the retries: the question's error, after the retries, in exact mode", async () => {
    const { engine, method } = await setup({ faults: "5xx=1" }, { retry: { retries: 1, minBackoffMs: 1, maxBackoffMs: 5 } });
    const out = await method.answer(record({ flag: noul }), signal());
    expect(Object.keys(out.errors)).toEqual(["flag"]);
    expect(out.errors.flag).toMatch(/failed after 2 attempt\(s\): .*HTTP 50[03]/);
    expect(out.skipped).toEqual([]);
    expect(out.retries).toBe(1);
    expect(engine.stats().byEndpoint["/v1/completions"]).toBe(2);
    expect(method.approximateMode).toBe(false);
  });

  it("/tokenize not served by the gateway (404): the questions' errors, not skipped", async () => {
    // Gateways that forward only /v1/* answer FastAPI's own 404 for vLLM's /tokenize.
    const engine = await startSimEngine({ model: "tiny", seed: 3 });
    const proxy = await startEngineProxy(engine.url, { answer: (path) => (path === "/tokenize" ? { status: 404, body: { detail: "Not Found" } } : undefined) });
    closers.push(() => proxy.close(), () => engine.close());
    const method = new LabelReadMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } });
    const out = await method.answer(record({ flag: noul, label: choiceQuestion(3) }), signal());
    expect(out.skipped).toEqual([]);
    expect(Object.keys(out.errors).sort()).toEqual(["flag", "label"]);
    for (const message of Object.values(out.errors)) expect(message).toContain("/tokenize: HTTP 404");
    expect(proxy.to("/v1/completions")).toHaveLength(0);
  });
});
