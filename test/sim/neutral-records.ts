// Shared by the oracle-neutrality tests: 300 records of 4 questions (a choice of 2..40 options,
// labels past Z included, a yes/no question, an 11-level grade and a 4-way choice), their oracle,
// and one method's scores on them against an oracle engine.
import { expect } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { Oracle, oracleLine } from "../../sim/engine/model/oracle.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { EngineMethod, RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/index.js";

export const Q = 0.9;
export const RECORDS = 300; // 4 questions each: 1,200 questions

export interface Rec {
  payload: RecordPayload;
  expected: Record<string, string | boolean>;
}

function records(): Rec[] {
  return Array.from({ length: RECORDS }, (_, i) => {
    const n = 2 + ((i * 7) % 39); // 2..40 options: labels past Z (AA..AN) too
    const questions: Record<string, Question> = {
      topic: { type: "choice", instructions: "Which topic?", criteria: Object.fromEntries(Array.from({ length: n }, (_, k) => [`t${k}`, k % 3 === 0 ? `topic ${k}` : ""])) } as Question,
      flag: { type: "noul", instructions: "Is it a complaint?", criteria: {} } as Question,
      grade: { type: "choice", instructions: "Grade it from 0 to 10.", criteria: Object.fromEntries(Array.from({ length: 11 }, (_, k) => [String(k), ""])) } as Question,
      tone: { type: "choice", instructions: "Which tone?", criteria: { neg: "negative", neu: "neutral", pos: "positive", mix: "mixed" } } as Question,
    };
    const expected = { topic: `t${(i * 13) % n}`, flag: i % 3 === 0, grade: String(i % 11), tone: ["neg", "neu", "pos", "mix"][i % 4]! };
    const state = { text: `Record ${i}: the customer writes about order ${i * 7} and a refund that never came.` };
    return { payload: { recordKey: `t-neutral:r${i}`, id: `r${i}`, state, questions, payloadSha256: "x" }, expected };
  });
}

export const data = records();
const oracle = new Oracle();
for (const r of data) oracle.add(oracleLine(r.payload.recordKey, r.payload.state, r.payload.questions, r.expected));

export function neutralEngine(): Promise<SimEngine> {
  return startSimEngine({ model: "neutral", seed: 3, maxModelLen: 32768, oracle, accuracy: Q });
}

export const METHODS: Record<string, (baseUrl: string, seeds: number[]) => EngineMethod> = {
  systemone: (baseUrl, seeds) => new SystemOneMethod({ baseUrl, seeds }),
  decisions: (baseUrl, seeds) => new DecisionsMethod({ baseUrl, seeds }),
  "label-read (completions)": (baseUrl, seeds) => new LabelReadMethod({ baseUrl, seeds }),
  "label-read (chat)": (baseUrl, seeds) => new LabelReadMethod({ baseUrl, seeds, api: "chat" }),
};

export interface Scores {
  accuracy: number;
  /** Mean probability of gold. */
  goldMass: number;
  /** Every question's distribution, by record and question. */
  probs: Map<string, Record<string, number>>;
}

export async function score(engine: SimEngine, name: string, seeds: number[], recs: readonly Rec[]): Promise<Scores> {
  const method = METHODS[name]!(engine.url, seeds);
  const signal = new AbortController().signal;
  let right = 0;
  let mass = 0;
  let total = 0;
  const probs = new Map<string, Record<string, number>>();
  // A few records at once, as an agent does.
  for (let i = 0; i < recs.length; i += 16) {
    const outs = await Promise.all(recs.slice(i, i + 16).map((r) => method.answer(r.payload, signal)));
    outs.forEach((out, j) => {
      const r = recs[i + j]!;
      expect(out.errors, r.payload.recordKey).toEqual({});
      for (const [qk, gold] of Object.entries(r.expected)) {
        const p = out.probs[qk]!;
        probs.set(`${r.payload.recordKey} ${qk}`, p);
        const top = Object.entries(p).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
        total++;
        if (top === String(gold)) right++;
        mass += p[String(gold)] ?? 0;
      }
    });
  }
  return { accuracy: right / total, goldMass: mass / total, probs };
}

/** The scores of `a` on the questions of `b` only. */
export function restrict(a: Scores, b: Scores, expected: ReadonlyMap<string, string>): Scores {
  const probs = new Map([...b.probs.keys()].map((k) => [k, a.probs.get(k)!]));
  let right = 0;
  let mass = 0;
  for (const [key, p] of probs) {
    const gold = expected.get(key)!;
    if (Object.entries(p).reduce((x, y) => (y[1] > x[1] ? y : x))[0] === gold) right++;
    mass += p[gold] ?? 0;
  }
  return { accuracy: right / probs.size, goldMass: mass / probs.size, probs };
}

/** Gold of every question, by record and question key as Scores.probs keys them. */
export const golds = new Map(data.flatMap((r) => Object.entries(r.expected).map(([qk, g]) => [`${r.payload.recordKey} ${qk}`, String(g)] as const)));

/** The largest difference between two runs' probabilities over the questions of `a`. */
export function worstDifference(a: Scores, b: Scores): number {
  let worst = 0;
  for (const [key, p] of a.probs) for (const [k, v] of Object.entries(p)) worst = Math.max(worst, Math.abs((b.probs.get(key)?.[k] ?? 0) - v));
  return worst;
}
