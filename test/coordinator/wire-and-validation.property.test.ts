// Property tests (fast-check) of what crosses the agent -> coordinator edge and of the suite schema:
// an answer survives the agent's toWire, protobuf encoding and the coordinator's resultFromWire
// unchanged; the result validator accepts exactly the answers that place every question once with a
// valid distribution, names the first fault of any other, and never throws; the record fast path
// agrees with RecordSchema on arbitrarily mutated records.
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { loadPackageDefinition } from "../../proto/loader.js";
import type { ProtoGrpcType } from "../../proto/generated/orchestrator.js";
import { toWire } from "../../agent/transport/wire.js";
import type { RecordAnswer } from "../../agent/engine-method.js";
import { resultFromWire } from "../../coordinator/transport/wire.js";
import { validateResult } from "../../coordinator/result-validator.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";
import type { IncomingResult } from "../../coordinator/incoming-result.js";
import { RecordSchema, wellFormedRecord } from "../../common/suite/schema.js";
import { answeredByRecord } from "../../common/results/index.js";

const definition = loadPackageDefinition();
const attach = (grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType).udm.v1.Coordinator.service.Attach;

const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !k.includes("\u0000") && k !== "__proto__");
/** A distribution over `n` options that sums to 1 (up to float error). */
const dist = (keys: readonly string[]) =>
  fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: keys.length, maxLength: keys.length }).map((ws) => {
    const total = ws.reduce((a, b) => a + b, 0) || 1;
    const d: Record<string, number> = {};
    keys.forEach((k, i) => (d[k] = (total === 1 && ws.every((w) => w === 0) ? (i === 0 ? 1 : 0) : ws[i]! / total)));
    return d;
  });

describe("agent toWire -> protobuf -> coordinator resultFromWire (property)", () => {
  const answer = fc
    .uniqueArray(key, { minLength: 1, maxLength: 6 })
    .chain((qs) =>
      fc.record({
        probs: fc.tuple(...qs.map((q) => dist(["A", "B", "C"]).map((d) => [q, d] as const))).map((e) => Object.fromEntries(e.slice(0, Math.ceil(e.length / 2)))),
        skipped: fc.constant(qs.slice(Math.ceil(qs.length / 2)).slice(0, 1)),
        errors: fc.constant(Object.fromEntries(qs.slice(Math.ceil(qs.length / 2) + 1).map((q) => [q, `engine: ${q} failed`]))),
        // cachedTokens null: the engine did not report it; it must arrive as unknown, not 0.
        usage: fc.record({ promptTokens: fc.nat(), cachedTokens: fc.option(fc.nat(), { nil: null }), completionTokens: fc.nat(), requests: fc.nat({ max: 1000 }) }),
        latencyMs: fc.nat({ max: 1e6 }),
        answeredBy: fc.constant(Object.fromEntries(qs.map((q) => [q, "systemone"]))),
        retries: fc.nat({ max: 50 }),
        approximate: fc.boolean(),
      }),
    );

  it("keeps probs, skipped, errors, usage and flags", () => {
    fc.assert(
      fc.property(answer, key, fc.stringMatching(/^[0-9a-f]{0,64}$/), (a, runId, sha) => {
        const wire = toWire("t/0", { recordKey: runId, payloadSha256: sha }, a as RecordAnswer);
        const bytes = attach.requestSerialize({ result: wire });
        const decoded = attach.requestDeserialize(bytes);
        const got = resultFromWire(decoded.result!);
        expect(got.recordKey).toBe(runId);
        expect(got.unitId).toBe("t/0");
        expect(got.payloadSha256).toBe(sha);
        expect(got.skipped).toEqual(a.skipped);
        expect(got.errors).toEqual(a.errors);
        expect(answeredByRecord(got.answeredBy)).toEqual(a.answeredBy);
        expect([got.promptTokens, got.cachedTokens, got.completionTokens, got.requests]).toEqual([a.usage.promptTokens, a.usage.cachedTokens, a.usage.completionTokens, a.usage.requests]);
        expect([got.latencyMs, got.retries, got.approximate]).toEqual([a.latencyMs, a.retries, a.approximate]);
        // proto `double` carries every probability exactly.
        expect(got.probs).toEqual(a.probs);
      }),
      { numRuns: 300 },
    );
  });

  it("decodes random bytes to a message or an error, never a crash of the process", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (b) => {
        try {
          const m = attach.requestDeserialize(Buffer.from(b));
          if (m.result) resultFromWire(m.result);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("validateResult (property)", () => {
  const interner = new OptionInterner();
  const spec = fc.uniqueArray(key, { minLength: 1, maxLength: 6 }).chain((qs) =>
    fc.tuple(fc.constant(qs), fc.array(fc.constantFrom<readonly string[]>(["A", "B"], ["A", "B", "C", "D"], ["true", "false"]), { minLength: qs.length, maxLength: qs.length })),
  );
  const entryOf = (qs: string[], options: ReadonlyArray<readonly string[]>): RecordEntry =>
    ({ recordKey: "t:r", id: "r", groupId: "g", payloadSha256: "", offset: 0, stateBytes: 0, questionsBytes: 0, ...compactQuestions(qs.map((k, i) => ({ key: k, options: options[i]! })), interner) }) as RecordEntry;
  const ctx = (record: RecordEntry) => ({ record, holdsLease: true, inUnit: true });
  const base = (): IncomingResult => ({ unitId: "t/0", recordKey: "t:r", probs: {}, skipped: [], errors: {}, promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0, latencyMs: 0, payloadSha256: "", answeredBy: {}, retries: 0, approximate: false });

  /** A valid answer: each question in exactly one of probs / skipped / errors, by `places`. */
  const valid = spec.chain(([qs, options]) =>
    fc.tuple(fc.constant(qs), fc.constant(options), fc.array(fc.constantFrom("probs", "skipped", "errors"), { minLength: qs.length, maxLength: qs.length }), fc.tuple(...options.map((o) => dist(o)))),
  );
  const build = (qs: string[], places: string[], dists: Array<Record<string, number>>): IncomingResult => {
    const r = base();
    qs.forEach((q, i) => {
      if (places[i] === "probs") r.probs[q] = dists[i]!;
      else if (places[i] === "skipped") r.skipped.push(q);
      else r.errors[q] = "failed";
    });
    return r;
  };

  it("accepts every answer that places each question once with a valid distribution", () => {
    fc.assert(fc.property(valid, ([qs, options, places, dists]) => {
      expect(validateResult(build(qs, places, dists), ctx(entryOf(qs, options)))).toBeUndefined();
    }), { numRuns: 500 });
  });

  it("names the fault of a broken answer", () => {
    const fault = fc.constantFrom("drop", "unknown", "twice", "negative", "nan", "sum", "extra-option");
    fc.assert(
      fc.property(valid, fault, fc.nat(), ([qs, options, places, dists], f, pick) => {
        const i = pick % qs.length;
        const q = qs[i]!;
        const r = build(qs, places, dists);
        const expectReason = (reason: string): void => {
          expect(validateResult(r, ctx(entryOf(qs, options)))?.reason).toBe(reason);
        };
        const setProbs = (d: Record<string, number>) => {
          delete r.errors[q];
          r.skipped = r.skipped.filter((k) => k !== q);
          r.probs[q] = d;
        };
        switch (f) {
          case "drop":
            delete r.probs[q];
            delete r.errors[q];
            r.skipped = r.skipped.filter((k) => k !== q);
            expectReason("unanswered_question");
            return;
          case "unknown":
            r.errors[`${q}\u0000x`] = "?";
            expectReason("unknown_question");
            return;
          case "twice":
            if (places[i] === "errors") r.skipped.push(q);
            else r.errors[q] = "also failed";
            expectReason("conflicting_question");
            return;
          case "negative":
            setProbs({ ...dists[i]!, [options[i]![0]!]: -0.5 });
            expectReason("bad_distribution");
            return;
          case "nan":
            setProbs({ ...dists[i]!, [options[i]![0]!]: Number.NaN });
            expectReason("bad_distribution");
            return;
          case "sum":
            setProbs(Object.fromEntries(options[i]!.map((o) => [o, 0.9])));
            expectReason("bad_distribution");
            return;
          case "extra-option":
            setProbs({ ...dists[i]!, zzz: 0 });
            expectReason("bad_distribution");
            return;
        }
      }),
      { numRuns: 700 },
    );
  });

  it("never throws, whatever the agent sends", () => {
    fc.assert(
      fc.property(spec, fc.dictionary(key, fc.anything()), fc.array(fc.anything()), fc.dictionary(key, fc.anything()), ([qs, options], probs, skipped, errors) => {
        const r = { ...base(), probs, skipped, errors } as unknown as IncomingResult;
        validateResult(r, ctx(entryOf(qs, options)));
      }),
      { numRuns: 500 },
    );
  });
});

describe("suite schema: the record fast path agrees with RecordSchema (property)", () => {
  const record = () => ({
    id: "r1",
    family: "sentiment",
    split: "test",
    state: { text: "câu" },
    questions: { label: { type: "choice", instructions: "Pick", criteria: { A: "a", B: "b" } }, "doc:1": { type: "noul", instructions: "P", criteria: {} } },
    expected: { label: "A", "doc:1": true },
    metadata: { group_id: "g", lang: "vi" },
    scoring: { type: "retrieval_ranking", qrels: { "1": 2 } },
    _evaluation: { run_id: "t:r1", payload_sha256: "ab" },
  });
  const paths = [
    ["id"], ["family"], ["split"], ["state"], ["state", "text"], ["questions"], ["questions", "label"], ["questions", "label", "type"],
    ["questions", "label", "criteria"], ["questions", "label", "criteria", "A"], ["questions", "doc:1", "instructions"], ["expected"], ["expected", "label"],
    ["metadata"], ["metadata", "group_id"], ["metadata", "lang"], ["scoring"], ["scoring", "type"], ["scoring", "qrels"], ["scoring", "qrels", "1"],
    ["_evaluation"], ["_evaluation", "run_id"], ["_evaluation", "payload_sha256"],
  ];
  const mutation = fc.tuple(fc.constantFrom(...paths), fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })));

  it("accepts with the same value, or rejects, as zod does", () => {
    fc.assert(
      fc.property(fc.array(mutation, { maxLength: 3 }), (muts) => {
        const r: Record<string, any> = record();
        for (const [path, value] of muts) {
          let o: any = r;
          for (const p of path.slice(0, -1)) o = o !== null && typeof o === "object" ? o[p] : undefined;
          if (o === null || typeof o !== "object") continue;
          if (value === undefined) delete o[path[path.length - 1]!];
          else o[path[path.length - 1]!] = value;
        }
        const zod = RecordSchema.safeParse(structuredClone(r));
        const fast = wellFormedRecord(structuredClone(r));
        if (fast) {
          expect(zod.success).toBe(true);
          expect(fast).toEqual(zod.data);
        }
        if (!zod.success) expect(fast).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });
});
