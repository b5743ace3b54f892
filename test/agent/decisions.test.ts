// DecisionsMethod against the real simulated engine over HTTP on 127.0.0.1:0.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { DecisionsMethod, decisionToDistribution, type DecisionsOptions } from "../../agent/methods/decisions.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { choiceQuestion, postJson } from "../sim/engine-fixtures.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function setup(sim: SimEngineOptions = {}, method: Partial<DecisionsOptions> = {}): Promise<{ engine: SimEngine; method: DecisionsMethod }> {
  const engine = await startSimEngine({ model: "tiny", ...sim });
  engines.push(engine);
  return { engine, method: new DecisionsMethod({ baseUrl: engine.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 }, ...method }) };
}

const STATE = { text: "The parcel arrived two weeks late and the box was crushed." };
const record = (questions: Record<string, Question>, id = "r1"): RecordPayload => ({ recordKey: `t:${id}`, id, state: STATE, questions, payloadSha256: "x" });

describe("DecisionsMethod", () => {
  it("sends predicates and choices named by question key and maps the answers back", async () => {
    const { engine, method } = await setup();
    const qs: Record<string, Question> = {
      flag: { type: "noul", instructions: "Complaint?", criteria: {} },
      team: { type: "choice", instructions: "Which team?", criteria: { billing: "payments", shipping: "parcels", security: "" } },
    };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.answeredBy).toEqual({ flag: "decisions", team: "decisions" });
    const direct = await postJson(`${engine.url}/v1/decisions`, {
      model: "sim/tiny",
      input: JSON.stringify(STATE),
      questions: [
        { type: "predicate", name: "flag", instructions: "Complaint?" },
        { type: "choice", name: "team", instructions: "Which team?", choices: [{ value: "billing", description: "payments" }, { value: "shipping", description: "parcels" }, { value: "security", description: "" }] },
      ],
    });
    const p = direct.body.answers[0].probability as number;
    expect(out.probs.flag).toEqual({ true: p, false: 1 - p });
    const team = Object.fromEntries(direct.body.answers[1].probabilities.map((e: { value: string; probability: number }) => [e.value, e.probability]));
    for (const k of Object.keys(team)) expect(out.probs.team![k]).toBeCloseTo(team[k], 12);
    expect(out.usage.requests).toBe(1);
    expect(out.usage.completionTokens).toBe(2);
  });

  it("routes >26 options to label-read, and everything to label-read after a 501", async () => {
    const { method } = await setup();
    const out = await method.answer(record({ big: choiceQuestion(40), small: choiceQuestion(3) }), new AbortController().signal);
    expect(out.answeredBy).toEqual({ big: "label-read", small: "decisions" });
    const off = await setup({ systemone: false });
    const all = await off.method.answer(record({ a: choiceQuestion(3), b: { type: "noul", instructions: "?", criteria: {} } }), new AbortController().signal);
    expect(all.errors).toEqual({});
    expect(all.answeredBy).toEqual({ a: "label-read", b: "label-read" });
    expect(off.engine.stats().byEndpoint["/v1/decisions"]).toBe(1);
  });

  it("averages reads under reordered choices (seeds)", async () => {
    const qs: Record<string, Question> = { team: choiceQuestion(5, "Which?") };
    const single = [];
    for (const seed of [0, 1, 2]) single.push(await (await setup({}, { seeds: [seed] })).method.answer(record(qs), new AbortController().signal));
    const { method } = await setup({}, { seeds: [0, 1, 2] });
    const out = await method.answer(record(qs), new AbortController().signal);
    for (const opt of Object.keys(qs.team!.criteria)) {
      expect(out.probs.team![opt]).toBeCloseTo(single.reduce((a, r) => a + r.probs.team![opt]!, 0) / 3, 12);
    }
    expect(single[1]!.probs.team).not.toEqual(single[0]!.probs.team);
  });

  it("reads a predicate once whatever the seeds: its request cannot change with them", async () => {
    const flag: Question = { type: "noul", instructions: "Complaint?", criteria: {} };
    const once = await setup();
    const single = await once.method.answer(record({ flag }), new AbortController().signal);
    const { engine, method } = await setup({}, { seeds: [0, 1, 2] });
    const out = await method.answer(record({ flag }), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.probs.flag).toEqual(single.probs.flag);
    expect(engine.stats().byEndpoint["/v1/decisions"]).toBe(1);
    // With a choice beside it, the choice still goes under every seed, the predicate in the first request only.
    const mixed = await setup({}, { seeds: [0, 1, 2] });
    const both = await mixed.method.answer(record({ flag, team: choiceQuestion(3, "Which?") }), new AbortController().signal);
    expect(both.errors).toEqual({});
    expect(both.probs.flag).toEqual(single.probs.flag);
    expect(mixed.engine.stats().byEndpoint["/v1/decisions"]).toBe(3);
    expect(mixed.engine.stats().reads).toBe(4);
  });

  it("skips questions too long for max_model_len", async () => {
    const { method } = await setup({ maxModelLen: 120 });
    const out = await method.answer(record({ a: choiceQuestion(2), long: choiceQuestion(3, "Please consider carefully ".repeat(40)) }), new AbortController().signal);
    expect(out.skipped).toEqual(["long"]);
    expect(Object.keys(out.probs)).toEqual(["a"]);
  });

  it("refuses answers that do not fit the question", () => {
    const q: Question = { type: "choice", instructions: "", criteria: { a: "", b: "" } };
    expect(decisionToDistribution(q, { type: "choice", probabilities: [{ value: "a", probability: 1 }] })).toMatch(/no probability for choice "b"/);
    expect(decisionToDistribution(q, { type: "predicate", probability: 0.5 })).toMatch(/predicate/);
    expect(decisionToDistribution({ type: "noul", instructions: "", criteria: {} }, { type: "predicate", probability: 0.25 })).toEqual({ true: 0.25, false: 0.75 });
  });
});
