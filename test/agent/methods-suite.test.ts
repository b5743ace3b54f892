// Every engine method against the real simulated engine on a synthetic small suite (all 44
// tracks): every question of every record gets a valid distribution, and who answered it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { EngineMethod, RecordPayload } from "../../agent/engine-method.js";
import { distributionProblem, NOUL_KEYS } from "../../common/results/format.js";

let dir: string;
let records: RecordPayload[] = [];
let tracks = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-methods-suite-"));
  await makeSuite({ out: dir, scale: "small", seed: 11 });
  const suite = openSuite(dir);
  tracks = suite.files.length;
  for (const file of suite.files) {
    for await (const r of readTrackRecords(file)) {
      records.push({ recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: r._evaluation.payload_sha256 ?? "" });
    }
  }
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  records = [];
});

const makers: Record<string, (url: string) => EngineMethod> = {
  systemone: (baseUrl) => new SystemOneMethod({ baseUrl }),
  decisions: (baseUrl) => new DecisionsMethod({ baseUrl }),
  "label-read": (baseUrl) => new LabelReadMethod({ baseUrl }),
  "label-read (chat)": (baseUrl) => new LabelReadMethod({ baseUrl, api: "chat" }),
};

describe("engine methods on the small synthetic suite", () => {
  it.each(Object.keys(makers))("%s answers every question of all 44 tracks with a valid distribution", async (name) => {
    expect(tracks).toBe(44);
    const engine: SimEngine = await startSimEngine({ model: "suite", seed: 2, maxModelLen: 32768 });
    try {
      const method = makers[name]!(engine.url);
      let questions = 0;
      let over26 = 0;
      const signal = new AbortController().signal;
      for (const record of records) {
        const out = await method.answer(record, signal);
        expect(out.errors, record.recordKey).toEqual({});
        expect(out.skipped, record.recordKey).toEqual([]);
        for (const [key, q] of Object.entries(record.questions)) {
          questions++;
          const dist = out.probs[key];
          expect(dist, `${record.recordKey} ${key}`).toBeDefined();
          expect(distributionProblem(dist!, q.type === "noul" ? [...NOUL_KEYS] : Object.keys(q.criteria)), `${record.recordKey} ${key}`).toBeUndefined();
          const big = q.type === "choice" && Object.keys(q.criteria).length > 26;
          if (big) over26++;
          const expected = name.startsWith("label-read") || big ? "label-read" : name;
          expect(out.answeredBy[key], `${record.recordKey} ${key}`).toBe(expected);
        }
      }
      expect(questions).toBeGreaterThan(records.length);
      if (name === "systemone") expect(over26).toBeGreaterThan(0);
    } finally {
      await engine.close();
    }
  }, 120_000);
});
