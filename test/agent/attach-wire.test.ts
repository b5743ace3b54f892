// toWire / fromWire: the only place the agent converts between proto messages and domain types.
import { describe, expect, it } from "vitest";
import { failedAnswer, fromWire, toWire, PayloadError } from "../../agent/transport/wire.js";
import type { RecordAnswer } from "../../agent/engine-method.js";
import { makeUnit } from "./attach-fakes.js";

describe("fromWire", () => {
  it("parses state_json and questions_json once into RecordPayloads, in order", () => {
    const unit = fromWire({ ...makeUnit("u", 2), group_ids: ["g1", "g2"], backup: true } as Parameters<typeof fromWire>[0]);
    expect(unit).toMatchObject({ unitId: "u", track: "track-x", groupIds: ["g1", "g2"], leaseMs: 60_000, backup: true });
    expect(unit.records).toHaveLength(2);
    const first = unit.records[0]!;
    expect("payload" in first && first.payload).toEqual({
      recordKey: "u-r0",
      id: "u-id0",
      state: { query: "shared prefix of u", doc: "chunk 0" },
      questions: {
        q_choice: { type: "choice", instructions: "Pick one.", criteria: { a: "first", b: "second", c: "third" } },
        q_noul: { type: "noul", instructions: "Is it?", criteria: {} },
      },
      payloadSha256: makeUnit("u", 2).records![0]!.payload_sha256,
    });
  });

  it("falls back to group_id when group_ids is empty", () => {
    const w = { ...makeUnit("u", 1), group_ids: [], backup: false };
    expect(fromWire(w as Parameters<typeof fromWire>[0]).groupIds).toEqual(["u-g"]);
  });

  it.each([
    ["state_json", "{oops", /field state_json: not JSON/, ["q_choice", "q_noul"]],
    ["state_json", JSON.stringify({ text: 3 }), /field state_json: .* at text/, ["q_choice", "q_noul"]],
    ["questions_json", JSON.stringify({ q: { type: "rank", instructions: "", criteria: {} } }), /field questions_json: .* at q\.type/, []],
    ["questions_json", "[]", /field questions_json/, []],
  ] as const)("a bad %s names unit, record and field", (field, value, message, keys) => {
    const w = makeUnit("u", 1);
    w.records![0]![field] = value;
    const rec = fromWire({ ...w, group_ids: [], backup: false } as Parameters<typeof fromWire>[0]).records[0]!;
    expect("unreadable" in rec).toBe(true);
    if (!("unreadable" in rec)) return;
    expect(rec.unreadable.error).toBeInstanceOf(PayloadError);
    expect(rec.unreadable.error.message).toMatch(/^unit u record u-r0 /);
    expect(rec.unreadable.error.message).toMatch(message);
    expect(rec.unreadable.questionKeys).toEqual(keys);
    expect(rec.unreadable.recordKey).toBe("u-r0");
  });
});

describe("toWire", () => {
  it("maps every RecordAnswer field onto RecordResult", () => {
    const answer: RecordAnswer = {
      probs: { label: { A: 0.25, B: 0.75 }, ok: { true: 0.9, false: 0.1 } },
      skipped: ["long"],
      errors: { broken: "HTTP 500 after 5 attempts" },
      usage: { promptTokens: 812, cachedTokens: 640, completionTokens: 3, requests: 2 },
      latencyMs: 41.5,
      answeredBy: { label: "systemone", ok: "systemone" },
      retries: 1,
      approximate: true,
    };
    expect(toWire("unit-7", { recordKey: "r-1", payloadSha256: "ab".repeat(32) }, answer)).toEqual({
      unit_id: "unit-7",
      run_id: "r-1",
      probs: { label: { p: { A: 0.25, B: 0.75 } }, ok: { p: { true: 0.9, false: 0.1 } } },
      skipped: ["long"],
      errors: { broken: "HTTP 500 after 5 attempts" },
      usage: { prompt_tokens: 812, cached_tokens: 640, completion_tokens: 3, requests: 2 },
      latency_ms: 41.5,
      payload_sha256: "ab".repeat(32),
      answered_by: { label: "systemone", ok: "systemone" },
      retries: 1,
      approximate: true,
    });
  });

  it("failedAnswer puts the message on every question, or on `payload` when none are known", () => {
    expect(failedAnswer(["a", "b"], "boom", 3).errors).toEqual({ a: "boom", b: "boom" });
    expect(failedAnswer([], "boom", 0)).toMatchObject({ probs: {}, errors: { payload: "boom" }, skipped: [] });
  });
});
