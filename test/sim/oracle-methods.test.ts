// Oracle mode answers every way a question can reach the engine: /v1/systemone, /v1/decisions, and
// label-read prompts over /v1/completions and /v1/chat/completions (label permutations, labels of
// two tokens read as a trie, more than 26 options). An oracle engine at accuracy 1 gives every
// method accuracy 1 with seeds 0,1,2; at accuracy 0 gold is never on top.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { oracleFromSuite, type Oracle } from "../../sim/engine/model/oracle.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { EngineMethod, RecordPayload } from "../../agent/engine-method.js";

/** Choice and noul tracks of every shape: >26 options (massive-vi-vn: 60), several questions, noul chunks. */
const TRACKS = ["massive-vi-vn", "vihsd", "trec-dl19", "fineweb-c-vi", "deepedubench-grading-score"];

let dir: string;
let oracle: Oracle;
const records: Array<RecordPayload & { expected: Record<string, string | boolean> }> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-oracle-methods-"));
  await makeSuite({ out: dir, scale: "small", seed: 5, tracks: TRACKS });
  oracle = await oracleFromSuite(dir);
  for (const file of openSuite(dir).files) {
    for await (const r of readTrackRecords(file)) {
      records.push({ recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: r._evaluation.payload_sha256 ?? "", expected: r.expected });
    }
  }
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SEEDS = [0, 1, 2];
const makers: Record<string, (url: string) => EngineMethod> = {
  systemone: (baseUrl) => new SystemOneMethod({ baseUrl, seeds: SEEDS }),
  decisions: (baseUrl) => new DecisionsMethod({ baseUrl, seeds: SEEDS }),
  "label-read (completions)": (baseUrl) => new LabelReadMethod({ baseUrl, seeds: SEEDS }),
  "label-read (chat)": (baseUrl) => new LabelReadMethod({ baseUrl, api: "chat", seeds: SEEDS }),
};

function argmax(dist: Record<string, number>): string {
  return Object.entries(dist).reduce((best, e) => (e[1] > best[1] ? e : best))[0];
}

async function accuracy(name: string, acc: number): Promise<{ hits: number; total: number; over26: number; twoTokenGold: number }> {
  const engine = await startSimEngine({ model: "oracle", seed: 3, maxModelLen: 32768, oracle, accuracy: acc });
  try {
    const method = makers[name]!(engine.url);
    const signal = new AbortController().signal;
    let hits = 0;
    let total = 0;
    let over26 = 0;
    let twoTokenGold = 0;
    for (const record of records) {
      const out = await method.answer(record, signal);
      expect(out.errors, record.recordKey).toEqual({});
      for (const [key, q] of Object.entries(record.questions)) {
        const gold = String(record.expected[key]);
        const n = q.type === "choice" ? Object.keys(q.criteria).length : 2;
        if (n > 26) over26++;
        // Past Z the labels go AA, AB, ...; from AQ on a label is two tokens for the sim's tokenizer.
        if (q.type === "choice" && Object.keys(q.criteria).indexOf(gold) >= 26 + 16) twoTokenGold++;
        total++;
        if (argmax(out.probs[key]!) === gold) hits++;
      }
    }
    return { hits, total, over26, twoTokenGold };
  } finally {
    await engine.close();
  }
}

describe("oracle mode for every engine method", () => {
  it.each(Object.keys(makers))("%s: accuracy 1 at oracle accuracy 1, with seeds 0,1,2", async (name) => {
    const r = await accuracy(name, 1);
    expect(r.total).toBeGreaterThan(records.length);
    expect(r.over26).toBeGreaterThan(0);
    expect(r.twoTokenGold).toBeGreaterThan(0);
    expect(r.hits).toBe(r.total);
  }, 120_000);

  it("puts gold on top for no method at oracle accuracy 0", async () => {
    for (const name of ["decisions", "label-read (completions)"]) {
      const r = await accuracy(name, 0);
      expect(r.hits, name).toBe(0);
    }
  }, 120_000);
});
