// Shared by label-read-<tokenizer>.test.ts: label-read against a sim with a model's real tokenizer
// (loaded once per file) and an oracle, on small tracks of every shape (60 options, an 11-level
// score, several questions, yes/no) plus one 60-option question whose gold is "AY", a label of two
// tokens after "Answer:" for Qwen3 and Llama 3.1 (" A" + "Y"), one for Gemma 3.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { oracleFromSuite, oracleLine, type Oracle } from "../../sim/engine/model/oracle.js";
import { loadHfTokenizer, type HfTokenizer } from "../../sim/engine/model/hf-tokenizer.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import type { EngineMethod, RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/index.js";
import type { TokenizerName } from "../../sim/engine/model/engine-tokenizer.js";

const TRACKS = ["massive-vi-vn", "deepedubench-grading-score", "deepedu", "skillgym-sft", "vihsd"];

interface Rec {
  payload: RecordPayload;
  expected: Record<string, string | boolean>;
}

/** A 60-option question with gold at option 50: label "AY" in the listed order. */
function ayRecord(): Rec {
  const criteria = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`intent_${i}`, i % 7 === 0 ? `what intent ${i} means` : ""]));
  const questions = { intent: { type: "choice", instructions: "Which intent?", criteria } as Question };
  return { payload: { recordKey: "t-ay:r0", id: "r0", state: { text: "Dời chuyến bay của tôi sang thứ Sáu." }, questions, payloadSha256: "x" }, expected: { intent: "intent_50" } };
}

async function answers(method: EngineMethod, recs: readonly Rec[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  const signal = new AbortController().signal;
  for (const r of recs) {
    const a = await method.answer(r.payload, signal);
    expect(a.errors, r.payload.recordKey).toEqual({});
    expect(a.skipped, r.payload.recordKey).toEqual([]);
    for (const qk of Object.keys(r.expected)) out.set(`${r.payload.recordKey} ${qk}`, a.probs[qk]!);
  }
  return out;
}

function argmax(p: Record<string, number>): string {
  return Object.entries(p).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

export function realTokenizerOracleTests(name: Exclude<TokenizerName, "builtin">): void {
  let dir: string;
  let tokenizer: HfTokenizer;
  let oracle: Oracle;
  const recs: Rec[] = [];

  beforeAll(async () => {
    tokenizer = await loadHfTokenizer(name);
    dir = mkdtempSync(join(tmpdir(), `udm-${name}-oracle-`));
    await makeSuite({ out: dir, scale: "small", seed: 5, tracks: TRACKS });
    oracle = await oracleFromSuite(dir);
    for (const file of openSuite(dir).files) {
      for await (const r of readTrackRecords(file)) {
        recs.push({ payload: { recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: "x" }, expected: r.expected });
      }
    }
    const ay = ayRecord();
    oracle.add(oracleLine(ay.payload.recordKey, ay.payload.state, ay.payload.questions, ay.expected));
    recs.push(ay);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("label-read over completions and over chat: an oracle at accuracy 1 gives accuracy 1", async () => {
    const twoTokens = tokenizer.encode("Answer: AY").length - tokenizer.encode("Answer:").length;
    expect(twoTokens).toBe(name === "gemma3" ? 1 : 2);
    const engine = await startSimEngine({ model: name, seed: 3, maxModelLen: 32768, tokenizer, oracle, accuracy: 1 });
    try {
      for (const api of ["completions", "chat"] as const) {
        const got = await answers(new LabelReadMethod({ baseUrl: engine.url, api }), recs);
        const wrong = recs.flatMap((r) => Object.entries(r.expected).filter(([qk, gold]) => argmax(got.get(`${r.payload.recordKey} ${qk}`)!) !== String(gold)).map(([qk]) => `${api} ${r.payload.recordKey} ${qk}`));
        expect(wrong).toEqual([]);
      }
    } finally {
      await engine.close();
    }
  }, 60_000);

  it("at oracle accuracy 0.9, with seeds 0,1,2: label-read over completions and over chat reads the distribution /v1/systemone answers", async () => {
    const engine = await startSimEngine({ model: name, seed: 3, maxModelLen: 32768, tokenizer, oracle, accuracy: 0.9 });
    try {
      const seeds = [0, 1, 2];
      const base = await answers(new SystemOneMethod({ baseUrl: engine.url, seeds }), recs);
      for (const api of ["completions", "chat"] as const) {
        const got = await answers(new LabelReadMethod({ baseUrl: engine.url, api, seeds }), recs);
        let worst = 0;
        for (const [key, p] of base) for (const [k, v] of Object.entries(p)) worst = Math.max(worst, Math.abs((got.get(key)![k] ?? 0) - v));
        expect(worst, api).toBeLessThan(1e-6);
      }
    } finally {
      await engine.close();
    }
  }, 60_000);
}
