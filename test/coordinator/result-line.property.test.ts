// The coordinator writes a result's line straight to text (coordinator/result-line.ts). Held here
// against the line object of common/results/format.ts put through JSON.stringify, which is what it
// replaced: byte for byte, for results in the map form, the compact form (in criteria order or
// not) or both, with skipped and errored questions, and keys JSON.stringify reorders ("0", "12").
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acceptedResultLine } from "../../common/results/format.js";
import { scoredText } from "../../common/results/committed-line.js";
import { readScoredPart } from "../../common/results/scored-part-reader.js";
import type { ResultInput } from "../../common/results/format.js";
import type { IncomingResult } from "../../coordinator/incoming-result.js";
import { givenUpLine, resultLine } from "../../coordinator/result-line.js";
import { validateResult } from "../../coordinator/result-validator.js";
import { compactQuestions, OptionInterner, questionSpecs, type RecordEntry } from "../../coordinator/suite-index.js";
import { LineBatchDecoder, LineBatchEncoder, type BatchLine } from "../../coordinator/line-batch.js";
import { compactAnswerOf } from "../../coordinator/incoming-result.js";
import { RecordQuestions } from "../../coordinator/record-questions.js";
import { writeResultLine, type CommittedLine } from "../../common/results/index.js";

const QUESTION_KEYS = ["label", "doc:1", "doc:2", "0", "7", "12", "01", "b\"q", "ü", "tab\t", "4294967295", "x y"];
const OPTION_LISTS = [["true", "false"], ["A", "B", "C", "D"], ["0", "1", "2", "10"], ["2", "1"], ["x", "5", "y"], ["neg", "pos"]];
const interner = new OptionInterner();

type Place = "compact" | "map" | "skipped" | "errors";
const caseArb = fc
  .uniqueArray(fc.constantFrom(...QUESTION_KEYS), { minLength: 0, maxLength: QUESTION_KEYS.length })
  .chain((keys) =>
    fc.record({
      keys: fc.constant(keys),
      shared: fc.boolean(),
      lists: fc.array(fc.nat(OPTION_LISTS.length - 1), { minLength: keys.length, maxLength: keys.length }),
      places: fc.array(fc.constantFrom<Place>("compact", "compact", "map", "skipped", "errors"), { minLength: keys.length, maxLength: keys.length }),
      weights: fc.array(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 4, maxLength: 4 }), { minLength: keys.length, maxLength: keys.length }),
      compactShuffle: fc.boolean(),
      mapOrder: fc.boolean(),
      latencyMs: fc.oneof(fc.double(), fc.constantFrom(0, 12.5, -0)),
      promptTokens: fc.nat(),
      cachedTokens: fc.option(fc.nat(), { nil: null }),
      completionTokens: fc.nat(),
      answeredBy: fc.dictionary(fc.constantFrom(...QUESTION_KEYS), fc.constantFrom("systemone", "label-read", "decisions")),
      retries: fc.nat(3),
      approximate: fc.boolean(),
      // Any UTF-16 (lone surrogates, controls, quotes, DEL, non-ASCII): the writer stores ASCII a
      // byte per character and switches to UTF-8 for the rest.
      agent: fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "binary", maxLength: 12 })),
      runId: fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom("a\u007fb", "Việt", "\ud800x")),
    }),
  );

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { record: RecordEntry; result: IncomingResult } {
  const sharedList = OPTION_LISTS[c.lists[0] ?? 0]!;
  const questions = c.keys.map((key, i) => ({ key, options: c.shared ? sharedList : OPTION_LISTS[c.lists[i]!]! }));
  const record = { recordKey: c.runId, id: "r", groupId: "g", payloadSha256: "ab", offset: 0, stateBytes: 0, questionsBytes: 0, ...compactQuestions(questions, interner) } as RecordEntry;
  const dist = (i: number, options: readonly string[]) => {
    const ws = c.weights[i]!.slice(0, options.length);
    const total = ws.reduce((a, b) => a + b, 0);
    return ws.map((w, j) => (total === 0 ? (j === 0 ? 1 : 0) : w / total));
  };
  const compactIdx = questions.map((_, i) => i).filter((i) => c.places[i] === "compact");
  if (c.compactShuffle) compactIdx.reverse();
  const values: number[] = [];
  for (const i of compactIdx) values.push(...dist(i, questions[i]!.options));
  const probs: Record<string, Record<string, number>> = {};
  questions.forEach((q, i) => {
    if (c.places[i] !== "map") return;
    const ps = dist(i, q.options);
    const order = q.options.map((_, j) => j);
    if (c.mapOrder) order.reverse();
    const d: Record<string, number> = {};
    for (const j of order) d[q.options[j]!] = ps[j]!;
    probs[q.key] = d;
  });
  const result: IncomingResult = {
    unitId: "t/0",
    recordKey: c.runId,
    probs,
    ...(compactIdx.length > 0 ? { compactProbs: { questions: compactIdx.map((i) => questions[i]!.key), values } } : {}),
    skipped: questions.filter((_, i) => c.places[i] === "skipped").map((q) => q.key).reverse(),
    errors: Object.fromEntries(questions.filter((_, i) => c.places[i] === "errors").map((q) => [q.key, `engine: HTTP 500 on ${q.key}`])),
    promptTokens: c.promptTokens,
    cachedTokens: c.cachedTokens,
    completionTokens: c.completionTokens,
    requests: 1,
    latencyMs: c.latencyMs,
    payloadSha256: "ab",
    answeredBy: c.answeredBy,
    retries: c.retries,
    approximate: c.approximate,
  };
  return { record, result };
}

/** The line as the coordinator built it before: the compact form expanded into maps, then the line object. */
function lineObject(result: IncomingResult, record: RecordEntry, agent: string) {
  const questions = questionSpecs(record);
  const probs: Record<string, Record<string, number>> = { ...result.probs };
  let at = 0;
  for (const key of result.compactProbs?.questions ?? []) {
    const d: Record<string, number> = {};
    for (const o of questions.find((q) => q.key === key)!.options) d[o] = result.compactProbs!.values[at++]!;
    probs[key] = d;
  }
  return acceptedResultLine(
    { recordKey: record.recordKey, id: record.id, track: "t", family: "f", payloadSha256: record.payloadSha256, questions },
    {
      probs,
      skipped: result.skipped,
      errors: result.errors,
      agent,
      latencyMs: result.latencyMs,
      promptTokens: result.promptTokens,
      cachedTokens: result.cachedTokens,
      completionTokens: result.completionTokens,
      answeredBy: result.answeredBy,
      retries: result.retries,
      approximate: result.approximate,
    },
  );
}

/** What the scorer reads of a parsed scored part, probs as entries whatever their form. */
function asParsed(r: ResultInput) {
  const entries = r.probs instanceof Map ? [...r.probs.entries()] : Object.entries(r.probs);
  return { run_id: r.run_id, probs: entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), skipped: r.skipped, errors: r.errors };
}

describe("a result's line written as text (property)", () => {
  it("is byte for byte JSON.stringify of the line object, and says whether it has errors", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { record, result } = build(c);
        expect(validateResult(result, { record, holdsLease: true, inUnit: true })).toBeUndefined();
        const written = resultLine(result, record, "t", "f", c.agent);
        const object = lineObject(result, record, c.agent);
        expect(written.text).toBe(JSON.stringify(object));
        expect(written).toMatchObject({ recordKey: record.recordKey, track: "t", family: "f", errored: object.errors !== undefined });
        expect(written.usage).toEqual({ latencyMs: result.latencyMs, promptTokens: result.promptTokens, cachedTokens: result.cachedTokens, completionTokens: result.completionTokens });
        // What the scorer thread is sent: the line's fields up to errors, exactly as in the line.
        const { run_id, id, track, family, probs, skipped, errors } = object;
        expect(scoredText(written)).toBe(JSON.stringify({ run_id, id, track, family, probs, skipped, ...(errors ? { errors } : {}) }));
        // And the scorer thread reads it as JSON.parse does (its probs a Map where the scan took the line).
        expect(asParsed(readScoredPart(scoredText(written)))).toEqual(asParsed(JSON.parse(scoredText(written)) as ResultInput));
      }),
      { numRuns: 1000 },
    );
  });

  it("is the same text when written in the results writer's thread, from the batch the store sends it", () => {
    // One encoder and decoder for every case, as for a run: their tables of strings and option
    // lists grow from batch to batch, and a batch names what an earlier one sent.
    const encoder = new LineBatchEncoder();
    const decoder = new LineBatchDecoder();
    fc.assert(
      fc.property(fc.array(caseArb, { minLength: 1, maxLength: 4 }), fc.boolean(), (cases, withGivenUp) => {
        const expected: CommittedLine[] = [];
        for (const c of cases) {
          const { record, result } = build(c);
          const qs = RecordQuestions.of(record);
          encoder.accepted(record, qs, compactAnswerOf(result, qs), "t", `f-${c.agent}`, c.agent);
          expected.push(resultLine(result, record, "t", `f-${c.agent}`, c.agent));
          if (withGivenUp) {
            const line = givenUpLine(record, "t2", "f", "bad_distribution: sums to 2");
            encoder.written(line);
            expected.push(line);
          }
        }
        expect(encoder.size).toBe(expected.length);
        // The batch crosses to the thread as a structured clone does it (its buffers transferred).
        const { batch, transfer } = encoder.take();
        expect(encoder.size).toBe(0);
        const received = structuredClone(batch, { transfer });
        const lines: CommittedLine[] = [];
        decoder.read(received, (l: BatchLine) => lines.push(l.kind === "written" ? l.line : writeResultLine(l.record, l.qs, l.answer, l.track, l.family, l.agentId)));
        expect(lines.map((l) => l.text)).toEqual(expected.map((l) => l.text));
        expect(lines).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("writes a given-up line with every question in errors and no usage", () => {
    const record = { recordKey: "t:1", id: "1", groupId: "g", payloadSha256: "ab", offset: 0, stateBytes: 0, questionsBytes: 0, ...compactQuestions([{ key: "label", options: ["A", "B"] }], interner) } as RecordEntry;
    const line = givenUpLine(record, "t", "f", "bad_distribution: sums to 2");
    expect(JSON.parse(line.text)).toMatchObject({ run_id: "t:1", probs: {}, errors: { label: "rejected by the coordinator: bad_distribution: sums to 2" }, agent: "" });
    expect(line).toMatchObject({ recordKey: "t:1", errored: true });
    expect(line.usage).toBeUndefined();
    expect(scoredText(line)).toBe(line.text);
  });
});
