// The coordinator's hand-written codecs against the generic protobuf ones (fast-check): results
// decoded from bytes (result-decoder.ts) equal what the proto-loader decoder and resultFromWire make
// of the same bytes, single or batched, map or compact form; random bytes decode or fail with an
// error; a WorkUnit encoded from the payload spill (work-unit-encoder.ts) decodes to the message the
// generic encoder would send; a result in the compact form writes the same line bytes as its map form.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { loadPackageDefinition } from "../../proto/loader.js";
import type { ProtoGrpcType } from "../../proto/generated/orchestrator.js";
import type { RecordResult } from "../../proto/generated/udm/v1/RecordResult.js";
import type { CoordinatorMessage } from "../../proto/generated/udm/v1/CoordinatorMessage.js";
import { toCompactWire, toWire } from "../../agent/transport/wire.js";
import type { RecordAnswer } from "../../agent/engine-method.js";
import { agentEventFromBytes, resultFromWire, unitToWire } from "../../coordinator/transport/wire.js";
import { decodeResults } from "../../coordinator/transport/result-decoder.js";
import { encodeWorkUnit } from "../../coordinator/transport/work-unit-encoder.js";
import { PayloadSpill } from "../../coordinator/payload-spill.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";
import { resultLine } from "../../coordinator/result-line.js";
import { validateResult } from "../../coordinator/result-validator.js";
import type { PlannedUnit } from "../../coordinator/planner.js";

const attach = (grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType).udm.v1.Coordinator.service.Attach;
const genericDecode = attach.requestDeserialize as (b: Buffer) => ReturnType<typeof attach.requestDeserialize>;

const key = fc.string({ minLength: 0, maxLength: 30 }).filter((k) => k !== "__proto__");
const num = fc.oneof(fc.double(), fc.constantFrom(0, 1, 0.5, Number.NaN, -0));
const result: fc.Arbitrary<RecordResult> = fc.record({
  unit_id: key,
  run_id: key,
  probs: fc.dictionary(key, fc.record({ p: fc.dictionary(key, num, { maxKeys: 5 }) }), { maxKeys: 4 }),
  skipped: fc.array(key, { maxLength: 3 }),
  errors: fc.dictionary(key, key, { maxKeys: 3 }),
  usage: fc.record({ prompt_tokens: fc.nat(), cached_tokens: fc.option(fc.nat(), { nil: undefined }), completion_tokens: fc.nat(), requests: fc.nat() }, { requiredKeys: ["prompt_tokens", "completion_tokens", "requests"] }),
  latency_ms: num,
  payload_sha256: key,
  answered_by: fc.dictionary(key, key, { maxKeys: 3 }),
  retries: fc.nat(),
  approximate: fc.boolean(),
  prob_questions: fc.array(key, { maxLength: 4 }),
  prob_values: fc.array(num, { maxLength: 12 }),
});

describe("results decoded from bytes (property)", () => {
  it("equal the generic decoder's, single and batched", () => {
    fc.assert(
      fc.property(fc.array(result, { minLength: 1, maxLength: 4 }), (rs) => {
        const single = attach.requestSerialize({ result: rs[0]! });
        expect(decodeResults(single)).toEqual([resultFromWire(genericDecode(single).result!)]);
        const batch = attach.requestSerialize({ results: { results: rs } });
        expect(decodeResults(batch)).toEqual(genericDecode(batch).results!.results.map(resultFromWire));
        const event = agentEventFromBytes(batch, genericDecode);
        expect(event.kind).toBe(rs.length === 1 ? "result" : "results");
      }),
      { numRuns: 300 },
    );
  });

  it("leave every other message to the generic decoder", () => {
    for (const msg of [{ hello: { agent_id: "a", methods: ["systemone"], ready: true } }, { credit: { units: 3 } }, { unit_done: { unit_id: "u" } }, { heartbeat: { ready: true } }]) {
      const bytes = attach.requestSerialize(msg);
      expect(decodeResults(bytes)).toBeUndefined();
      expect(agentEventFromBytes(bytes, genericDecode).kind).toBe(Object.keys(msg)[0] === "unit_done" ? "unitDone" : Object.keys(msg)[0]);
    }
  });

  it("decode random bytes to results or fail with an Error, never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (b) => {
        try {
          decodeResults(Buffer.from(b));
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("WorkUnit encoded from the spill", () => {
  const dir = mkdtempSync(join(tmpdir(), "udm-wu-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const spill = new PayloadSpill(join(dir, "payloads.bin"));
  const interner = new OptionInterner();
  const text = fc.string({ maxLength: 200, unit: "grapheme" });
  const recordArb = fc.record({ runId: text, id: text, sha: fc.stringMatching(/^[0-9a-f]{0,64}$/), state: text, questions: text });

  it("decodes to what the generic encoder sends, contiguous records or not", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 0, maxLength: 8 }), fc.array(fc.boolean(), { maxLength: 8 }), text, fc.array(text, { maxLength: 3 }), fc.boolean(), fc.nat(), (recs, keep, track, groups, backup, leaseMs) => {
        const entries: RecordEntry[] = recs.map((r) => ({
          ...spill.add(r.state, r.questions),
          recordKey: r.runId,
          id: r.id,
          groupId: "g",
          payloadSha256: r.sha,
          ...compactQuestions([], interner),
        }));
        // Leaving some out makes runs of records that are not next to each other in the spill.
        const sent = entries.filter((_, i) => keep[i] ?? true);
        const unit = { unitId: `${track}/1`, track, family: "f", groupIds: groups, records: entries } as unknown as PlannedUnit;
        const decode = attach.responseDeserialize as (b: Buffer) => unknown;
        const encode = attach.responseSerialize as (m: CoordinatorMessage) => Buffer;
        const fast = encodeWorkUnit(unit, sent, backup, leaseMs, spill);
        expect(decode(fast.bytes)).toEqual(decode(encode(unitToWire(unit, sent, backup, leaseMs, spill))));
        // The next unit is encoded into this one's buffer when it is large enough.
        fast.written();
      }),
      { numRuns: 200 },
    );
    spill.dispose();
  });
});

describe("compact form", () => {
  const interner = new OptionInterner();
  const questions = [
    { key: "label", options: ["A", "B", "C"] },
    { key: "doc:1", options: ["true", "false"] },
    { key: "doc:2", options: ["true", "false"] },
  ];
  const record = { recordKey: "t:r", id: "r", groupId: "g", payloadSha256: "ab", offset: 0, stateBytes: 0, questionsBytes: 0, ...compactQuestions(questions, interner) } as RecordEntry;
  const payload = {
    recordKey: "t:r",
    payloadSha256: "ab",
    questions: {
      label: { type: "choice" as const, instructions: "", criteria: { A: "a", B: "b", C: "c" } },
      "doc:1": { type: "noul" as const, instructions: "", criteria: {} },
      "doc:2": { type: "noul" as const, instructions: "", criteria: {} },
    },
  };
  const answer = (probs: RecordAnswer["probs"], skipped: string[] = [], errors: Record<string, string> = {}): RecordAnswer => ({
    probs,
    skipped,
    errors,
    usage: { promptTokens: 5, cachedTokens: 2, completionTokens: 1, requests: 3 },
    latencyMs: 12.5,
    answeredBy: { label: "systemone", "doc:1": "label-read" },
    retries: 1,
    approximate: false,
  });
  const viaBytes = (r: RecordResult) => decodeResults(attach.requestSerialize({ results: { results: [r, r] } }))![0]!;
  const ctx = { record, holdsLease: true, inUnit: true };

  it("writes the same line bytes as the map form, whatever order the answer's options came in", () => {
    const a = answer({ "doc:2": { false: 0.75, true: 0.25 }, label: { C: 0.2, A: 0.5, B: 0.3 } }, ["doc:1"]);
    const compactWire = toCompactWire("t/0", payload, a);
    expect(compactWire.prob_questions).toEqual(["doc:2", "label"]);
    expect(compactWire.prob_values).toEqual([0.25, 0.75, 0.5, 0.3, 0.2]);
    expect(compactWire.probs).toEqual({});
    const fromCompact = viaBytes(compactWire);
    const fromMap = viaBytes(toWire("t/0", payload, a));
    expect(validateResult(fromCompact, ctx)).toBeUndefined();
    expect(validateResult(fromMap, ctx)).toBeUndefined();
    expect(resultLine(fromCompact, record, "t", "f", "agent-1").text).toBe(resultLine(fromMap, record, "t", "f", "agent-1").text);
  });

  it("falls back to the map form for an answer whose options are not the question's, so it is rejected as before", () => {
    const a = answer({ label: { A: 0.5, B: 0.5 }, "doc:1": { true: 1, false: 0 } }, ["doc:2"]);
    const wire = toCompactWire("t/0", payload, a);
    expect(wire.prob_questions).toBeUndefined();
    expect(validateResult(viaBytes(wire), ctx)).toMatchObject({ reason: "bad_distribution", detail: expect.stringContaining("probs.label") });
  });

  it("names the fault of a broken compact result", () => {
    const base: RecordResult = { unit_id: "t/0", run_id: "t:r", prob_questions: ["label", "doc:1", "doc:2"], prob_values: [0.2, 0.3, 0.5, 1, 0, 0.5, 0.5] };
    const reason = (r: RecordResult) => validateResult(viaBytes(r), ctx)?.reason;
    expect(reason(base)).toBeUndefined();
    expect(reason({ ...base, prob_values: base.prob_values!.slice(1) })).toBe("bad_distribution");
    expect(reason({ ...base, prob_values: [0.2, 0.3, 0.5, 1, 0, 0.5, 0.6] })).toBe("bad_distribution");
    expect(reason({ ...base, prob_values: [0.2, 0.3, 0.5, Number.POSITIVE_INFINITY, 0, 0.5, 0.5] })).toBe("bad_distribution");
    expect(reason({ ...base, prob_values: [-0.2, 0.7, 0.5, 1, 0, 0.5, 0.5] })).toBe("bad_distribution");
    expect(reason({ ...base, prob_questions: ["label", "doc:1", "doc:3"] })).toBe("unknown_question");
    expect(reason({ ...base, prob_questions: ["label", "doc:1"], prob_values: [0.2, 0.3, 0.5, 1, 0] })).toBe("unanswered_question");
    expect(reason({ ...base, skipped: ["doc:2"] })).toBe("conflicting_question");
    expect(reason({ ...base, probs: { label: { p: { A: 1, B: 0, C: 0 } } } })).toBe("conflicting_question");
    expect(reason({ ...base, prob_questions: ["label", "doc:1", "doc:1"], prob_values: [0.2, 0.3, 0.5, 1, 0, 0.5, 0.5] })).toBe("conflicting_question");
  });
});
