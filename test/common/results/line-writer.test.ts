// The results line written straight to text (common/results/line-writer.ts) against its definition,
// JSON.stringify of the line object of format.ts (acceptedResultLine), in the cases the coordinator's
// property test (test/coordinator/result-line.property.test.ts) does not draw: keys from "9" up,
// records of more than 256 questions, a question listed twice, skipped keys outside the criteria
// and a question without options.
import { describe, expect, it } from "vitest";
import { acceptedResultLine, type AcceptedAnswer } from "../../../common/results/format.js";
import { writeResultLine, type LineQuestions, type ResultAnswer } from "../../../common/results/line-writer.js";

type Question = { key: string; options: readonly string[] };

function lineQuestions(questions: readonly Question[]): LineQuestions {
  const keys = questions.map((q) => q.key);
  return { keys, count: keys.length, options: (i) => questions[i]!.options, indexOf: (key) => keys.indexOf(key) };
}

const HEAD = { recordKey: "t:1", id: "1", payloadSha256: "ab" };
const FIELDS = { skipped: [] as string[], errors: {}, latencyMs: 12.5, promptTokens: 10, cachedTokens: null, completionTokens: 1, answeredBy: {}, retries: 0, approximate: false };

/** The line as writeResultLine writes it and as JSON.stringify writes the line object. */
function both(questions: readonly Question[], compact: { questions: string[]; values: number[] }, fields: Partial<typeof FIELDS> = {}) {
  const answer: ResultAnswer = { ...FIELDS, ...fields, compactProbs: compact };
  const probs: Record<string, Record<string, number>> = {};
  let at = 0;
  for (const key of compact.questions) {
    const d: Record<string, number> = {};
    for (const o of questions.find((q) => q.key === key)!.options) d[o] = compact.values[at++]!;
    probs[key] ??= d; // the first listing of a question is its answer
  }
  const accepted: AcceptedAnswer = { ...FIELDS, ...fields, probs, agent: "a1" };
  const expected = JSON.stringify(acceptedResultLine({ ...HEAD, track: "t", family: "f", questions }, accepted));
  return { written: writeResultLine(HEAD, lineQuestions(questions), answer, "t", "f", "a1").text, expected };
}

describe("writeResultLine, byte for byte JSON.stringify of the line object", () => {
  it("integer-like keys from 9 up come first, in numeric order, as JSON.stringify puts them", () => {
    const questions = [
      { key: "b", options: ["9", "10", "x"] },
      { key: "10", options: ["true", "false"] },
      { key: "9", options: ["A", "B"] },
    ];
    const { written, expected } = both(questions, { questions: ["b", "10", "9"], values: [0.2, 0.3, 0.5, 1, 0, 0.5, 0.5] });
    expect(written).toBe(expected);
    expect(written).toContain('"probs":{"9":{"A":0.5,"B":0.5},"10":{"true":1,"false":0},"b":{"9":0.2,"10":0.3,"x":0.5}}');
  });

  it("a record of more than 256 questions (the reused offsets grow)", () => {
    const questions = Array.from({ length: 300 }, (_, i) => ({ key: `q${i}`, options: ["true", "false"] }));
    const values = questions.flatMap((_, i) => [i / 1000, 1 - i / 1000]);
    const { written, expected } = both(questions, { questions: questions.map((q) => q.key), values });
    expect(written).toBe(expected);
    expect(JSON.parse(written).probs.q299).toEqual({ true: 0.299, false: 1 - 0.299 });
  });

  it("a line longer than the writer's buffer (64 questions of 26 options, non-ASCII keys), then a short one", () => {
    const options = Array.from({ length: 26 }, (_, i) => `lựa chọn ${String.fromCharCode(65 + i)}`);
    const questions = Array.from({ length: 64 }, (_, i) => ({ key: `câu hỏi số ${i} ${"x".repeat(40)}`, options }));
    const values = questions.flatMap(() => options.map((_, j) => 1 / (j + 3)));
    const long = both(questions, { questions: questions.map((q) => q.key), values });
    expect(long.written.length).toBeGreaterThan(32 * 1024);
    expect(long.written).toBe(long.expected);
    const short = both([{ key: "a", options: ["true", "false"] }], { questions: ["a"], values: [0.25, 0.75] });
    expect(short.written).toBe(short.expected);
  });

  it("a question listed twice in the compact form: its first listing is its answer", () => {
    const questions = [{ key: "a", options: ["true", "false"] }, { key: "b", options: ["true", "false"] }];
    const { written, expected } = both(questions, { questions: ["a", "b", "a"], values: [0.9, 0.1, 0.4, 0.6, 0.2, 0.8] });
    expect(written).toBe(expected);
    expect(JSON.parse(written).probs).toEqual({ a: { true: 0.9, false: 0.1 }, b: { true: 0.4, false: 0.6 } });
  });

  it("skipped keys outside the record's questions are not written (an empty list, still JSON)", () => {
    const questions = [{ key: "a", options: ["true", "false"] }];
    const { written, expected } = both(questions, { questions: ["a"], values: [1, 0] }, { skipped: ["zz"] });
    expect(written).toBe(expected);
    expect(JSON.parse(written).skipped).toEqual([]);
  });

  it("a question without options answered: an empty distribution {}", () => {
    const questions = [{ key: "a", options: [] }, { key: "b", options: ["true", "false"] }];
    const { written, expected } = both(questions, { questions: ["a", "b"], values: [0.5, 0.5] });
    expect(written).toBe(expected);
    expect(JSON.parse(written).probs).toEqual({ a: {}, b: { true: 0.5, false: 0.5 } });
  });
});
