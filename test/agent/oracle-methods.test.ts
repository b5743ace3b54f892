// An oracle engine at accuracy 1 gives accuracy 1 for every engine method and seed setting: the
// simulated engine answers every question with its gold (sim/engine/model/oracle.ts), so any
// question whose answer is not the gold shows a method mapping labels, options or seeds back
// wrong. Every track of the small synthetic suite, >26-option tracks included; tracks whose
// payloads repeat with other gold (routing) cannot have one oracle answer and are left aside.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { oracleFromSuite, type Oracle } from "../../sim/engine/model/oracle.js";
import { FAMILY_PILLAR } from "../../common/catalogue.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { EngineMethod, RecordPayload } from "../../agent/engine-method.js";
import type { MethodOptions } from "../../agent/methods/method-options.js";

interface OracleRecord {
  track: string;
  family: string;
  payload: RecordPayload;
  expected: Record<string, string | boolean>;
}

let dir: string;
let oracle: Oracle;
let records: OracleRecord[] = [];
/** Tracks with a payload that repeats with other gold: no single oracle answer. */
const ambiguousTracks = new Set<string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-oracle-methods-"));
  await makeSuite({ out: dir, scale: "small", seed: 11 });
  oracle = await oracleFromSuite(dir);
  const gold = new Map<string, Set<string>>();
  const trackOf = new Map<string, Set<string>>();
  for (const file of openSuite(dir).files) {
    for await (const r of readTrackRecords(file)) {
      records.push({
        track: file.track,
        family: file.family,
        payload: { recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: r._evaluation.payload_sha256 ?? "" },
        expected: r.expected,
      });
      for (const [qk, q] of Object.entries(r.questions)) {
        if (r.expected[qk] === undefined) continue;
        // What the engine sees of a question: the state, the question's key and its options.
        const key = JSON.stringify([r.state, qk, Object.keys(q.criteria)]);
        gold.set(key, (gold.get(key) ?? new Set()).add(String(r.expected[qk])));
        trackOf.set(key, (trackOf.get(key) ?? new Set()).add(file.track));
      }
    }
  }
  for (const [key, golds] of gold) if (golds.size > 1) for (const t of trackOf.get(key)!) ambiguousTracks.add(t);
}, 180_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  records = [];
});

const SEEDS = [0, 1, 2];
const makers: Record<string, (o: MethodOptions) => EngineMethod> = {
  systemone: (o) => new SystemOneMethod(o),
  decisions: (o) => new DecisionsMethod(o),
  "label-read (completions)": (o) => new LabelReadMethod(o),
  "label-read (chat)": (o) => new LabelReadMethod({ ...o, api: "chat" }),
};

function argmax(dist: Record<string, number>): string {
  return Object.entries(dist).reduce((best, e) => (e[1] > best[1] ? e : best))[0];
}

describe("oracle engine at accuracy 1, --seeds 0,1,2", () => {
  it("leaves aside only routing tracks, and keeps >26-option tracks", () => {
    expect(records.length).toBeGreaterThan(0);
    for (const t of ambiguousTracks) {
      const family = records.find((r) => r.track === t)!.family;
      expect(FAMILY_PILLAR[family], t).toBe("agentic_routing");
    }
    expect(records.some((r) => Object.values(r.payload.questions).some((q) => q.type === "choice" && Object.keys(q.criteria).length > 26))).toBe(true);
  });

  it.each(Object.keys(makers))("%s: every question of every other track is answered with its gold", async (name) => {
    const engine = await startSimEngine({ model: "oracle", seed: 5, maxModelLen: 32768, oracle, accuracy: 1 });
    try {
      const method = makers[name]!({ baseUrl: engine.url, seeds: SEEDS });
      const signal = new AbortController().signal;
      const wrong: string[] = [];
      const byTrack = new Map<string, { right: number; all: number }>();
      let over26 = 0;
      for (const r of records) {
        if (ambiguousTracks.has(r.track)) continue;
        const out = await method.answer(r.payload, signal);
        expect(out.errors, r.payload.recordKey).toEqual({});
        expect(out.skipped, r.payload.recordKey).toEqual([]);
        for (const [qk, gold] of Object.entries(r.expected)) {
          const q = r.payload.questions[qk];
          if (!q) continue;
          if (q.type === "choice" && Object.keys(q.criteria).length > 26) over26++;
          const got = argmax(out.probs[qk]!);
          const t = byTrack.get(r.track) ?? { right: 0, all: 0 };
          t.all++;
          if (got === String(gold)) t.right++;
          else if (wrong.length < 10) wrong.push(`${r.payload.recordKey} ${qk}: ${got} (gold ${String(gold)}, by ${out.answeredBy[qk]})`);
          byTrack.set(r.track, t);
        }
      }
      const below = [...byTrack].filter(([, t]) => t.right < t.all).map(([track, t]) => `${track} ${t.right}/${t.all}`);
      expect(below, wrong.join("\n")).toEqual([]);
      expect(over26).toBeGreaterThan(0);
    } finally {
      await engine.close();
    }
  }, 600_000);
});
