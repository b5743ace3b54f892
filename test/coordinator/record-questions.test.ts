// A record's questions as results are checked and written (coordinator/record-questions.ts): keys
// split from the record's compact string, options per question, found by key from any hint; the
// questions of a record looked up lately are the same object again (split once per batch).
import { describe, expect, it } from "vitest";
import { RecordQuestions } from "../../coordinator/record-questions.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";

const interner = new OptionInterner();
function record(n: number, options = ["A", "B"]): RecordEntry {
  return { recordKey: `t:r${n}`, ...compactQuestions(Array.from({ length: n % 5 + 1 }, (_, i) => ({ key: `q${n}-${i}`, options: i === 0 ? options : ["true", "false"] })), interner) } as unknown as RecordEntry;
}

describe("RecordQuestions", () => {
  it("keys, options and indexOf from any hint", () => {
    const r = record(3, ["A", "B", "C"]);
    const qs = RecordQuestions.of(r);
    expect(qs.keys).toEqual(["q3-0", "q3-1", "q3-2", "q3-3"]);
    expect(qs.count).toBe(4);
    expect(qs.options(0)).toEqual(["A", "B", "C"]);
    expect(qs.options(3)).toEqual(["true", "false"]);
    expect(qs.indexOf("q3-2", 2)).toBe(2);
    expect(qs.indexOf("q3-2", 0)).toBe(2);
    expect(qs.indexOf("q3-0", 3)).toBe(0);
    expect(qs.indexOf("nope", 1)).toBe(-1);
  });

  it("a record looked up again among the latest 1024 gets the same object; one looked up before them, a new one", () => {
    const records = Array.from({ length: 1100 }, (_, i) => record(i));
    const first = RecordQuestions.of(records[0]!);
    const second = RecordQuestions.of(records[1]!);
    // A batch decoded whole, then checked: the first record again after others.
    expect(RecordQuestions.of(records[0]!)).toBe(first);
    expect(RecordQuestions.of(records[1]!)).toBe(second);
    for (let i = 2; i <= 1024; i++) RecordQuestions.of(records[i]!);
    // 1024 kept: records[1024] let records[0] go, and records[1] is the oldest kept.
    expect(RecordQuestions.of(records[1]!)).toBe(second);
    const again = RecordQuestions.of(records[0]!);
    expect(again).not.toBe(first);
    expect(again.keys).toEqual(first.keys);
    // records[0] back in let records[1] go.
    expect(RecordQuestions.of(records[1]!)).not.toBe(second);
  });
});
