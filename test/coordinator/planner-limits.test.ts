// The planner's byte limits and orders (coordinator/planner.ts) at their boundaries: a record over
// maxRecordBytes is never sent, a group over maxGroupBytes is cut in file order into pieces of at
// most that many bytes, a unit holds groups up to maxPayloadBytes inclusive; tracks of equal cost
// come in name order, units of equal cost in unit id order.
import { describe, expect, it } from "vitest";
import { DEFAULT_PLAN_LIMITS, oversizeRecords, payloadBytes, planUnits, recordCost } from "../../coordinator/planner.js";
import { entry } from "./helpers/entries.js";

// Each entry: 100 state bytes + 50 per question = 150 payload bytes.
const big = { maxRecords: 64, maxQuestions: 512 };

describe("planner limits", () => {
  it("payload bytes are the state's and the questions'; a record is oversize only past maxRecordBytes", () => {
    const r = entry("t", "1", "g", { bytes: 100, questions: 2 });
    expect(payloadBytes(r)).toBe(200);
    const rs = [entry("t", "a", "g"), entry("t", "b", "g", { bytes: 101 })];
    expect([...oversizeRecords(rs, { maxRecordBytes: 150 })].map((x) => x.id)).toEqual(["b"]);
    expect([...oversizeRecords(rs, { maxRecordBytes: 151 })]).toEqual([]);
    expect([...oversizeRecords(rs, {})]).toEqual([]);
    expect([...oversizeRecords([entry("t", "h", "g", { bytes: DEFAULT_PLAN_LIMITS.maxRecordBytes })], {})].map((x) => x.id)).toEqual(["h"]);
  });

  it("a group over maxGroupBytes is cut in file order into pieces of at most that many bytes", () => {
    const recs = Array.from({ length: 5 }, (_, i) => entry("t", `${i}`, "g"));
    const units = planUnits([{ track: "t", family: "f", records: recs }], { ...big, maxPayloadBytes: 300, maxGroupBytes: 300 });
    expect(units.map((u) => u.records.map((r) => r.id)).sort()).toEqual([["0", "1"], ["2", "3"], ["4"]]);
    for (const u of units) expect(u.groupIds).toEqual(["g"]);
    expect(units.map((u) => u.cost)).toEqual([...units.map((u) => u.cost)].sort((a, b) => b - a));
    expect(units.map((u) => u.questions).sort()).toEqual([1, 2, 2]);
    // Each piece's cost is its records' (what the scheduler weighs a copy by).
    expect(units.map((u) => u.cost)).toEqual(units.map((u) => u.records.reduce((s, r) => s + recordCost(r), 0)));
    expect(units.map((u) => u.cost).sort((a, b) => a - b)).toEqual([166, 332, 332]);
  });

  it("a group of exactly maxGroupBytes, or of one record over it, is not cut; without the limit, 16 MiB", () => {
    const two = [entry("t", "0", "g"), entry("t", "1", "g")];
    expect(planUnits([{ track: "t", family: "f", records: two }], { ...big, maxPayloadBytes: 1e9, maxGroupBytes: 300 })).toHaveLength(1);
    const one = [entry("t", "0", "g", { bytes: 1000 })];
    expect(planUnits([{ track: "t", family: "f", records: one }], { ...big, maxPayloadBytes: 10, maxGroupBytes: 300 })[0]!.records).toHaveLength(1);
    // Without maxGroupBytes a 300-byte group stays whole even with a 150-byte unit cap.
    const whole = planUnits([{ track: "t", family: "f", records: two }], { ...big, maxPayloadBytes: 150 });
    expect(whole.map((u) => u.records.length)).toEqual([2]);
    const cut = planUnits([{ track: "t", family: "f", records: [entry("t", "0", "g", { bytes: 8 << 20 }), entry("t", "1", "g", { bytes: 8 << 20 })] }], { ...big, maxPayloadBytes: 9 << 20 });
    expect(cut.map((u) => u.records.length)).toEqual([1, 1]);
  });

  it("a unit takes groups up to maxPayloadBytes inclusive", () => {
    const recs = Array.from({ length: 4 }, (_, i) => entry("t", `${i}`, `g${i}`));
    const units = planUnits([{ track: "t", family: "f", records: recs }], { ...big, maxPayloadBytes: 300 });
    expect(units.map((u) => u.groupIds)).toEqual([["g0", "g1"], ["g2", "g3"]]);
  });

  it("tracks of equal cost in name order; units of equal cost in unit id order", () => {
    const t = (name: string) => ({ track: name, family: "f", records: [entry(name, "0", "g")] });
    expect(planUnits([t("zeta"), t("alpha"), t("mid")], { ...big, maxPayloadBytes: 1e9 }).map((u) => u.track)).toEqual(["alpha", "mid", "zeta"]);
    const recs = Array.from({ length: 12 }, (_, i) => entry("t", `${i}`, `g${i}`));
    const units = planUnits([{ track: "t", family: "f", records: recs }], { maxRecords: 1, maxQuestions: 512, maxPayloadBytes: 1e9 });
    expect(units.map((u) => u.unitId)).toEqual(["t/0", "t/1", "t/10", "t/11", "t/2", "t/3", "t/4", "t/5", "t/6", "t/7", "t/8", "t/9"]);
  });

  it("the costliest unit of a track first and the costliest track first, whatever their names and file order", () => {
    const small = entry("a", "0", "small");
    const large = Array.from({ length: 3 }, (_, i) => entry("a", `l${i}`, "large"));
    const units = planUnits([{ track: "a", family: "f", records: [small, ...large] }], { maxRecords: 1, maxQuestions: 512, maxPayloadBytes: 1e9 });
    expect(units.map((u) => u.groupIds)).toEqual([["large"], ["small"]]);
    const tracks = planUnits(
      [
        { track: "a", family: "f", records: [entry("a", "0", "g")] },
        { track: "b", family: "f", records: [entry("b", "0", "g", { questions: 3 })] },
      ],
      { ...big, maxPayloadBytes: 1e9 },
    );
    expect(tracks.map((u) => u.track)).toEqual(["b", "a"]);
  });

  it("the default limits are the documented ones", () => {
    expect(DEFAULT_PLAN_LIMITS).toEqual({ maxRecords: 64, maxQuestions: 512, maxPayloadBytes: 1 << 20, maxGroupBytes: 16 << 20, maxRecordBytes: 128 << 20 });
  });
});
