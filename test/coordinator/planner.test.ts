import { describe, expect, it } from "vitest";
import { planUnits, recordCost } from "../../coordinator/planner.js";
import { compactQuestions, OptionInterner, questionSpecs } from "../../coordinator/suite-index.js";
import { entry } from "./helpers/entries.js";

describe("planUnits", () => {
  it("never splits a group, even one bigger than the unit cap", () => {
    const recs = [
      ...Array.from({ length: 10 }, (_, i) => entry("rr", `big${i}`, "q-big")),
      entry("rr", "s1", "q-small"),
      ...Array.from({ length: 3 }, (_, i) => entry("rr", `m${i}`, "q-mid")),
    ];
    // Interleave the group's rows in file order: the group still lands whole in one unit.
    recs.push(entry("rr", "big-late", "q-big"));
    const units = planUnits([{ track: "rr", family: "passage_reranking", records: recs }], { maxRecords: 4, maxQuestions: 100, maxPayloadBytes: 1e9 });
    const unitOfGroup = new Map<string, Set<string>>();
    for (const u of units) for (const r of u.records) {
      if (!unitOfGroup.has(r.groupId)) unitOfGroup.set(r.groupId, new Set());
      unitOfGroup.get(r.groupId)!.add(u.unitId);
    }
    for (const [g, us] of unitOfGroup) expect(us.size, g).toBe(1);
    const big = units.find((u) => u.groupIds.includes("q-big"))!;
    expect(big.records).toHaveLength(11);
    expect(big.groupIds).toEqual(["q-big"]);
    expect(units.flatMap((u) => u.records).length).toBe(recs.length);
  });

  it("packs small groups of one track up to the caps, never mixing tracks", () => {
    const a = Array.from({ length: 10 }, (_, i) => entry("a", `${i}`, `a${i}`));
    const b = Array.from({ length: 3 }, (_, i) => entry("b", `${i}`, `b${i}`));
    const units = planUnits(
      [
        { track: "a", family: "f", records: a },
        { track: "b", family: "f", records: b },
      ],
      { maxRecords: 4, maxQuestions: 100, maxPayloadBytes: 1e9 },
    );
    for (const u of units) {
      expect(new Set(u.records.map((r) => r.recordKey.split(":")[0])).size).toBe(1);
      expect(u.records.length).toBeLessThanOrEqual(4);
    }
    expect(units.filter((u) => u.track === "a").map((u) => u.records.length).sort()).toEqual([2, 4, 4]);
  });

  it("caps by questions and by payload bytes", () => {
    const recs = Array.from({ length: 6 }, (_, i) => entry("t", `${i}`, `g${i}`, { questions: 4 }));
    const byQ = planUnits([{ track: "t", family: "f", records: recs }], { maxRecords: 64, maxQuestions: 8, maxPayloadBytes: 1e9 });
    expect(byQ.map((u) => u.questions)).toEqual([8, 8, 8]);
    const byBytes = planUnits([{ track: "t", family: "f", records: recs }], { maxRecords: 64, maxQuestions: 999, maxPayloadBytes: 650 });
    // Each record is 100 + 4*50 = 300 bytes: two per unit.
    expect(byBytes.map((u) => u.records.length)).toEqual([2, 2, 2]);
  });

  it("orders units longest first, a track's units together, the costliest track first", () => {
    const small = Array.from({ length: 3 }, (_, i) => entry("small", `${i}`, `s${i}`, { bytes: 10 }));
    const large = [
      entry("large", "0", "l0", { bytes: 5000 }),
      entry("large", "1", "l1", { bytes: 100 }),
      entry("large", "2", "l2", { bytes: 9000 }),
    ];
    const units = planUnits(
      [
        { track: "small", family: "f", records: small },
        { track: "large", family: "f", records: large },
      ],
      { maxRecords: 1, maxQuestions: 100, maxPayloadBytes: 1e9 },
    );
    expect(units.map((u) => u.track)).toEqual(["large", "large", "large", "small", "small", "small"]);
    const costs = units.filter((u) => u.track === "large").map((u) => u.cost);
    expect(costs).toEqual([...costs].sort((x, y) => y - x));
    expect(units[0]!.records[0]!.id).toBe("2");
  });

  it("counts a shared state once and each question's text", () => {
    const one = entry("t", "a", "g", { bytes: 1000, questions: 1 });
    const four = entry("t", "b", "g", { bytes: 1000, questions: 4 });
    expect(recordCost(four) - recordCost(one)).toBe(3 * 50 + 3 * 16);
  });

  it("returns no unit for a track with nothing left to do", () => {
    expect(planUnits([{ track: "t", family: "f", records: [] }])).toEqual([]);
  });
});

describe("compact questions", () => {
  it("round-trips keys and option lists, sharing one list when all questions agree", () => {
    const interner = new OptionInterner();
    const mixed = [
      { key: "harmful", options: ["true", "false"] },
      { key: "category", options: ["cybercrime", "none", "skill:x"] },
    ];
    const a = compactQuestions(mixed, interner);
    expect(a.optionLists).toHaveLength(2);
    expect(questionSpecs({ ...entry("t", "x", "g"), ...a })).toEqual(mixed);
    const docs = Array.from({ length: 25 }, (_, i) => ({ key: `doc:${i}`, options: ["true", "false"] }));
    const b = compactQuestions(docs, interner);
    const c = compactQuestions(docs.slice(0, 3), interner);
    expect(b.optionLists).toHaveLength(1);
    expect(b.optionLists).toBe(c.optionLists);
    expect(questionSpecs({ ...entry("t", "y", "g"), ...b })).toEqual(docs);
    expect(compactQuestions([], interner).questionCount).toBe(0);
    expect(questionSpecs({ ...entry("t", "z", "g"), ...compactQuestions([], interner) })).toEqual([]);
  });
});
