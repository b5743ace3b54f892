// LabelReadMethod against the real simulated engine over HTTP on 127.0.0.1:0.
import { describe, expect, it } from "vitest";
import { applyChatTemplate, SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { TokenModel } from "../../sim/engine/model/token-model.js";
import { choiceLabels, listOptions, questionText, statePrefix, LABEL_READ_SYSTEM, LABEL_READ_TEMPLATE_SHA256, LABEL_READ_TEMPLATE_VERSION } from "../../agent/methods/label-read-template.js";
import { labelPermutation } from "../../common/engine-protocol/label-permutation.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { distributionProblem, NOUL_KEYS } from "../../common/results/format.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { labelReadSetup } from "./label-read-setup.js";

const { setup } = labelReadSetup();

const STATE = { text: "Khách hàng phàn nàn rằng đơn hàng đến muộn hai tuần và hộp bị móp.", lang: "vi" };

function record(questions: Record<string, Question>, id = "r1", state: Record<string, string> = STATE): RecordPayload {
  return { recordKey: `t:${id}`, id, state, questions, payloadSha256: "x" };
}

/**
 * The sim model's exact option probabilities, computed here from its next-token distributions:
 * p(option) = P(label tokens) x (1 - P(any longer label's next token)) when the label is a
 * prefix of another, normalised over the options.
 */
function exactProbs(seed: number, state: Record<string, string>, q: Question, labelSeed = 0, chat = false): Record<string, number> {
  const tokenizer = new SimTokenizer();
  const model = new TokenModel(seed, tokenizer);
  const keys = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
  const options = listOptions(q, labelPermutation(labelSeed, keys.length));
  const text = chat
    ? applyChatTemplate(
        [
          { role: "system", content: LABEL_READ_SYSTEM },
          { role: "user", content: `${JSON.stringify(state)}\n\n${questionText(q, options)}` },
        ],
        { addGenerationPrompt: true, continueFinalMessage: false },
      )
    : statePrefix(state) + questionText(q, options);
  const prompt = tokenizer.encode(text);
  const labelIds = options.map((o) => tokenizer.encode(o.label));
  const mass = options.map((o, i) => {
    const ids = labelIds[i]!;
    let p = 1;
    for (let d = 0; d < ids.length; d++) p *= Math.exp(model.next([...prompt, ...ids.slice(0, d)]).logprob(ids[d]!));
    const longer = labelIds.filter((l) => l.length > ids.length && ids.every((t, j) => l[j] === t)).map((l) => l[ids.length]!);
    if (longer.length) {
      const next = model.next([...prompt, ...ids]);
      p *= 1 - [...new Set(longer)].reduce((s, t) => s + Math.exp(next.logprob(t)), 0);
    }
    return p;
  });
  const total = mass.reduce((a, b) => a + b, 0);
  return Object.fromEntries(options.map((o, i) => [o.key, mass[i]! / total]));
}

function expectValid(probs: Record<string, Record<string, number>>, qs: Record<string, Question>): void {
  for (const [k, dist] of Object.entries(probs)) {
    const q = qs[k]!;
    expect(distributionProblem(dist, q.type === "noul" ? [...NOUL_KEYS] : Object.keys(q.criteria)), k).toBeUndefined();
  }
}

describe("LabelReadMethod", () => {
  it("labels A..Z then AA, AB, ...; the template is versioned and hashed", () => {
    const labels = choiceLabels(60);
    expect(labels.slice(0, 3)).toEqual(["A", "B", "C"]);
    expect(labels.slice(25, 29)).toEqual(["Z", "AA", "AB", "AC"]);
    expect(labels[59]).toBe("BH");
    expect(choiceLabels(703)[702]).toBe("AAA");
    expect(LABEL_READ_TEMPLATE_VERSION).toBe("label-read/v1");
    expect(LABEL_READ_TEMPLATE_SHA256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("reads the sim model's exact normalised probabilities, multi-token labels included (trie)", async () => {
    const { engine, method } = await setup();
    const intents = choiceQuestion(60, "Which intent?");
    const qs: Record<string, Question> = {
      intent: intents,
      flag: { type: "noul", instructions: "Is it a complaint?", criteria: {} },
      label: { type: "choice", instructions: "Which sentiment?", criteria: { negative: "bad", neutral: "", positive: "good" } },
    };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.skipped).toEqual([]);
    expect(out.answeredBy).toEqual({ intent: "label-read", flag: "label-read", label: "label-read" });
    expect(out.approximate).toBe(false);
    expectValid(out.probs, qs);
    for (const [k, q] of Object.entries(qs)) {
      const exact = exactProbs(3, STATE, q);
      for (const [opt, p] of Object.entries(exact)) expect(out.probs[k]![opt], `${k}/${opt}`).toBeCloseTo(p, 12);
    }
    // The 60-option question: labels AQ..AZ are "A" + one more token, so "A" is read twice.
    const tok = new SimTokenizer();
    expect(tok.encode("AQ")).toHaveLength(2);
    expect(tok.encode("AB")).toHaveLength(1);
    expect(engine.stats().byEndpoint["/v1/completions"]).toBe(2 + 1 + 1);
    expect(out.usage.cachedTokens).toBeGreaterThan(0);
  });
});

describe("LabelReadMethod: chat completions", () => {
  it("reads the same exact probabilities through the server's chat template, continuing a begun label", async () => {
    const { engine, method } = await setup({}, { api: "chat" });
    const qs: Record<string, Question> = { intent: choiceQuestion(45, "Which intent?"), flag: { type: "noul", instructions: "Urgent?", criteria: {} } };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    for (const [k, q] of Object.entries(qs)) {
      const exact = exactProbs(3, STATE, q, 0, true);
      for (const [opt, p] of Object.entries(exact)) expect(out.probs[k]![opt], `${k}/${opt}`).toBeCloseTo(p, 12);
    }
    // AQ..AS (45 options) are two tokens: one more read after "A".
    expect(engine.stats().byEndpoint["/v1/chat/completions"]).toBe(2 + 1);
  });
});

describe("LabelReadMethod: older vLLM, seeds, long prompts", () => {
  const qs: Record<string, Question> = {
    label: { type: "choice", instructions: "Which sentiment?", criteria: { negative: "bad", neutral: "", positive: "good", mixed: "both" } },
    flag: { type: "noul", instructions: "Is it a complaint?", criteria: { true: "the customer complains" } },
  };

  it("falls back to top-k logprobs when the server ignores logprob_token_ids, and marks the answer approximate", async () => {
    const { engine, method } = await setup({ logprobTokenIds: false });
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.approximate).toBe(true);
    expect(method.approximateMode).toBe(true);
    expectValid(out.probs, qs);
    // With few labels every label is among the top 20, so the renormalised answer is exact here.
    for (const [k, q] of Object.entries(qs)) {
      const exact = exactProbs(3, STATE, q);
      for (const [opt, p] of Object.entries(exact)) expect(out.probs[k]![opt]).toBeCloseTo(p, 9);
    }
    expect(engine.stats().byStatus[400] ?? 0).toBe(0);
  });

  it("learns a smaller max_logprobs from the server's 400", async () => {
    const { engine, method } = await setup({ logprobTokenIds: false, maxLogprobs: 5 });
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.approximate).toBe(true);
    expect(engine.stats().byStatus[400]).toBe(1);
    expectValid(out.probs, qs);
  });

  it("answers with the exact probabilities again on a server that honours logprob_token_ids", async () => {
    const { method } = await setup();
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.approximate).toBe(false);
  });

  it("averages the reads under each label permutation", async () => {
    const { method } = await setup({}, { seeds: [0, 1, 2] });
    const out = await method.answer(record(qs), new AbortController().signal);
    for (const [k, q] of Object.entries(qs)) {
      const per = [0, 1, 2].map((s) => exactProbs(3, STATE, q, s));
      for (const opt of Object.keys(per[0]!)) expect(out.probs[k]![opt]).toBeCloseTo((per[0]![opt]! + per[1]![opt]! + per[2]![opt]!) / 3, 12);
    }
    // The model prefers the first labels, so a permutation changes the answer.
    expect(exactProbs(3, STATE, qs.label!, 1)).not.toEqual(exactProbs(3, STATE, qs.label!, 0));
  });

  it("puts questions whose prompt exceeds max_model_len in skipped without sending them", async () => {
    const { engine, method } = await setup({ maxModelLen: 120 });
    const long = choiceQuestion(3, "Please consider carefully ".repeat(40));
    const mixed: Record<string, Question> = { a: choiceQuestion(2), long, b: { type: "noul", instructions: "Yes?", criteria: {} } };
    const out = await method.answer(record(mixed, "r1", { text: "short" }), new AbortController().signal);
    expect(out.skipped).toEqual(["long"]);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs).sort()).toEqual(["a", "b"]);
    expect(engine.stats().byStatus[400] ?? 0).toBe(0);
  });

  it("maps the engine's own context-length 400 to skipped", async () => {
    const { engine, method } = await setup({ maxModelLen: 120 });
    // The method believes the context is large (a stale /v1/models), so the engine decides.
    await method.info();
    (method as unknown as { info_: { maxModelLen: number } }).info_.maxModelLen = 1_000_000;
    const long = choiceQuestion(3, "Please consider carefully ".repeat(40));
    const out = await method.answer(record({ long, a: choiceQuestion(2) }, "r1", { text: "short" }), new AbortController().signal);
    expect(out.skipped).toEqual(["long"]);
    expect(Object.keys(out.probs)).toEqual(["a"]);
    expect(engine.stats().byStatus[400]).toBe(1);
  });
});
